package mdcode

import (
	"slices"
	"strings"
	"testing"
)

func TestBlocks(t *testing.T) {
	md := strings.Join([]string{
		"Steps:",
		"",
		"1. Build it:",
		"   ```Go {.numbered}",
		"   func main() {",
		"       run()",
		"   }",
		"   ```",
		"~~~~yaml",
		"a: 1",
		"~~~ not a close",
		"~~~~",
		"Run ```lore index``` first.",
		"````",
		"```",
		"unclosed",
	}, "\n")
	got := Blocks(md)
	want := []Block{
		{Lang: "go", Text: "func main() {\n    run()\n}", Line: 4, Closed: true},
		{Lang: "yaml", Text: "a: 1\n~~~ not a close", Line: 9, Closed: true},
		{Text: "```\nunclosed", Line: 14},
	}
	if !slices.Equal(got, want) {
		t.Errorf("Blocks:\n got %+v\nwant %+v", got, want)
	}
}

func TestProse(t *testing.T) {
	md := "Set `xs[1]` first [1]:\n\n```go\nx := xs[2]\n```\nthen [2].\n~~~\nhidden"
	want := "Set   first [1]:\n\nthen [2]."
	if got := Prose(md); got != want {
		t.Errorf("Prose = %q, want %q", got, want)
	}
}
