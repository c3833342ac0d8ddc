package ingest

import (
	"regexp"
	"strings"
)

var goDocHeading = regexp.MustCompile(`^//\s*#\s+(\S.*)$`)

// loadCode splits a source file into top-level declarations, each with the
// comment lines right above it. It works on indentation rather than on a
// grammar so that one rule serves Go, C, Rust, JS/TS, Python, shell, YAML
// and TOML alike: a declaration starts at a line in column 0 that follows a
// blank line, a closing brace, or indented text.
func loadCode(src string) []block {
	lines := splitLines(src)
	raw := inRawString(lines)
	var starts []int
	for i := range lines {
		if !raw[i] && isDeclStart(lines, i) {
			s := i
			for s > 0 && isTopComment(lines[s-1]) && (len(starts) == 0 || s-1 > starts[len(starts)-1]) {
				s--
			}
			if len(starts) == 0 || s > starts[len(starts)-1] {
				starts = append(starts, s)
			}
		}
	}
	if len(starts) == 0 || starts[0] != 0 {
		starts = append([]int{0}, starts...)
	}
	var out []block
	for k, s := range starts {
		e := len(lines)
		if k+1 < len(starts) {
			e = starts[k+1]
		}
		for e > s && strings.TrimSpace(lines[e-1]) == "" {
			e--
		}
		if e == s {
			continue
		}
		out = append(out, splitDocHeadings(block{Kind: blockCode, Title: declTitle(lines[s:e]), Start: s + 1, Lines: lines[s:e]})...)
	}
	// A block of comments alone (a licence header, notes at the end) is
	// about the declaration next to it: take its title.
	for i := range out {
		if out[i].Title == "" {
			out[i].Title = neighbourTitle(out, i)
		}
	}
	return out
}

// inRawString tells, for each line, whether it begins inside a multi-line
// backquoted string (a Go raw string, a JS template literal): a line of
// it in column 0 is text, not a declaration (a test's input file would
// otherwise give headings such as "--boundary"). A line with an odd
// number of backquotes opens or closes one; '`', the Go rune, is not one.
func inRawString(lines []string) []bool {
	in := make([]bool, len(lines))
	open := false
	for i, l := range lines {
		in[i] = open
		if strings.Count(strings.ReplaceAll(l, "'`'", ""), "`")%2 == 1 {
			open = !open
		}
	}
	return in
}

func neighbourTitle(blocks []block, i int) string {
	for j := i + 1; j < len(blocks); j++ {
		if blocks[j].Title != "" {
			return blocks[j].Title
		}
	}
	for j := i - 1; j >= 0; j-- {
		if blocks[j].Title != "" {
			return blocks[j].Title
		}
	}
	return ""
}

func isDeclStart(lines []string, i int) bool {
	l := lines[i]
	// A line opening with a closer ("}{", "}, {" in a table) continues
	// the declaration above.
	if l == "" || strings.IndexByte(" \t})]", l[0]) >= 0 || isCloser(l) || isTopComment(l) {
		return false
	}
	if i == 0 {
		return true
	}
	prev := lines[i-1]
	return strings.TrimSpace(prev) == "" || isCloser(prev) || prev[0] == ' ' || prev[0] == '\t' || isTopComment(prev)
}

func isCloser(l string) bool {
	t := strings.TrimRight(l, " \t;,")
	return t == "}" || t == ")" || t == "]" || t == "end" || t == "})" || t == "};" || t == "fi" || t == "esac"
}

func isTopComment(l string) bool {
	for _, p := range []string{"//", "#", "/*", " *", "*/", "--", ";;"} {
		if strings.HasPrefix(l, p) {
			return !strings.HasPrefix(l, "#include") && !strings.HasPrefix(l, "#define") && !strings.HasPrefix(l, "#!")
		}
	}
	return false
}

// declTitle is the first line of a declaration that is not a comment or a
// decorator, without its opening brace: "func WithTimeout(parent Context, ...)".
func declTitle(lines []string) string {
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || isTopComment(l) || strings.HasPrefix(t, "@") {
			continue
		}
		t = strings.TrimSpace(strings.TrimSuffix(strings.TrimRight(t, "{:"), "{}"))
		if len(t) > 120 {
			t = t[:120] + "…"
		}
		return t
	}
	return ""
}

// splitDocHeadings cuts a declaration at Go doc comment headings ("// # Title"),
// so a long package comment becomes sections titled "package exec > Title".
func splitDocHeadings(b block) []block {
	var out []block
	cur := block{Kind: b.Kind, Title: b.Title, Start: b.Start}
	for i, l := range b.Lines {
		if m := goDocHeading.FindStringSubmatch(l); m != nil && i > 0 {
			out = append(out, cur)
			cur = block{Kind: b.Kind, Title: b.Title + " > " + strings.TrimSpace(m[1]), Start: b.Start + i}
		}
		cur.Lines = append(cur.Lines, l)
	}
	return append(out, cur)
}
