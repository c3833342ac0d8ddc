// Package excerpt cuts a passage down to a few lines for a listing: the
// search printer, the ask printer and the chat show passages the same way.
package excerpt

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Lines is the first n non-blank lines of text, tabs expanded, each cut to
// width terminal cells with an ellipsis.
func Lines(text string, n, width int) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimRight(strings.ReplaceAll(l, "\t", "    "), " ")
		if strings.TrimSpace(l) == "" {
			continue
		}
		out = append(out, ansi.Truncate(l, max(width, 10), "…"))
		if len(out) == n {
			break
		}
	}
	return out
}
