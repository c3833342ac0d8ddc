package mdstream

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// lineKit holds line fragments whose combinations exercise the block
// constructs that interact across lines.
var lineKit = []string{
	"", "", "", "text with [1] and `code`", "more text", "[x] link?", "- item", "* star item", "+ plus",
	"1. one", "2. two", "1) paren", "-", "> quote", ">", "> - quoted item", "```", "```go", "~~~", "```x`",
	"    indented code", "  two spaces", "---", "***", "===", "# heading", "## h2 ##", "#", "| a | b |",
	"|---|---|", "| 1 | 2 |", "[1]: http://example.com/a", "[x]: /x \"title\"", "[1]:", "http://x.y",
	": definition", "Term", "<div>", "</div>", "<!-- c", "-->", "<custom-tag>", "line with two spaces  ",
	"trailing backslash\\", "- [ ] task", "- [x] done", "日本語の行", "emoji 🎉 line", "a | b", "www.example.com",
	// Lines longer than the test widths, so wrapping meets every junction.
	strings.Repeat("long words ", 12), "<div>" + strings.Repeat("html words ", 10) + "</div>",
	"## " + strings.Repeat("heading ", 12), "- " + strings.Repeat("item words ", 10),
	"    " + strings.Repeat("code", 30), "中文长行" + strings.Repeat("中文字符", 20),
}

// randomDoc builds a document of n lines from lineKit, sometimes indented.
func randomDoc(rng *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		switch rng.IntN(6) {
		case 0:
			b.WriteString("  ")
		case 1:
			b.WriteString("   ")
		}
		b.WriteString(lineKit[rng.IntN(len(lineKit))])
		b.WriteByte('\n')
	}
	return b.String()
}

func TestRandomDocuments(t *testing.T) {
	t.Parallel()
	docs := 30
	rng := rand.New(rand.NewPCG(7, 11))
	for i := range docs {
		md := randomDoc(rng, 4+rng.IntN(14))
		if rng.IntN(3) == 0 {
			md = strings.TrimSuffix(md, "\n")
		}
		opt := testOptions[i%2]
		streamCheck(t, New(opt), opt, md, tokenEnds(md, uint64(i)))
	}
}
