package ingest

import (
	"bytes"
	"strings"
	"unicode"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// loadHTML extracts the visible text of a page with its heading structure,
// and the page's <title>.
// It walks the token stream rather than a parsed tree so that it can count
// the newlines of the raw source and give every block its lines on disk.
func loadHTML(src string) ([]block, string) {
	// The tokenizer turns a lone \r into \n; lore counts lines at \n only
	// (as splitLines does), so make both agree first.
	src = strings.ReplaceAll(strings.ReplaceAll(src, "\r\n", "\n"), "\r", " ")
	z := html.NewTokenizer(strings.NewReader(src))
	var (
		out    []block
		line   = 1
		skip   int // depth inside script, style and other invisible elements
		pre    int
		buf    strings.Builder
		curAt  = 0 // line where the pending text began
		curEnd = 0 // line where it ends so far
		kind   = blockPara
		level  int
		inCell bool
		// The first <title> before any text names the page; one in an
		// <svg> of the body does not.
		title   strings.Builder
		inTitle bool
		titled  bool
	)
	flush := func() {
		text := buf.String()
		buf.Reset()
		if strings.TrimSpace(text) == "" {
			return
		}
		b := block{Kind: kind, Level: level, Start: curAt}
		if kind == blockCode {
			b.Lines = strings.Split(strings.Trim(text, "\n"), "\n")
		} else {
			b.Lines = nonEmptyLines(text)
		}
		if kind == blockHeading {
			b.Title = strings.Join(b.Lines, " ")
			b.Lines = []string{b.Title}
		}
		b.EndLine = max(curEnd, curAt)
		out = append(out, b)
	}
	for {
		tt := z.Next()
		raw := z.Raw()
		startLine := line
		line += bytes.Count(raw, []byte{'\n'})
		switch tt {
		case html.ErrorToken:
			flush()
			return out, strings.TrimSpace(collapseSpace(title.String()))
		case html.TextToken:
			if inTitle {
				title.Write(z.Text())
				continue
			}
			if skip > 0 {
				continue
			}
			text := string(z.Text())
			if pre == 0 {
				text = collapseSpace(text)
			}
			if strings.TrimSpace(text) == "" && buf.Len() == 0 {
				continue
			}
			if buf.Len() == 0 {
				curAt = startLine + leadingNewlines(raw)
			}
			buf.WriteString(text)
			if i := bytes.LastIndexFunc(raw, func(r rune) bool { return !unicode.IsSpace(r) }); i >= 0 {
				curEnd = startLine + bytes.Count(raw[:i], []byte{'\n'})
			}
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			start := tt == html.StartTagToken
			if a == atom.Title {
				inTitle = start && !titled && len(out) == 0 && buf.Len() == 0
				titled = titled || start
				continue
			}
			switch a {
			case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Head, atom.Svg:
				if tt == html.StartTagToken {
					skip++
				} else if tt == html.EndTagToken && skip > 0 {
					skip--
				}
				continue
			}
			if skip > 0 {
				continue
			}
			switch a {
			case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
				flush()
				kind, level = blockPara, 0
				if start {
					kind, level = blockHeading, int(name[1]-'0')
				}
			case atom.Pre:
				flush()
				kind = blockPara
				if start {
					pre++
					kind = blockCode
				} else if pre > 0 {
					pre--
				}
			case atom.Table:
				flush()
				kind = blockPara
				if start {
					kind = blockTable
				}
			case atom.Tr:
				if kind == blockTable && !start {
					buf.WriteString("\n")
				}
				inCell = false
			case atom.Td, atom.Th:
				if kind == blockTable && start {
					if inCell {
						buf.WriteString(" | ")
					}
					inCell = true
				}
			case atom.Br:
				buf.WriteString("\n")
			case atom.P, atom.Div, atom.Li, atom.Ul, atom.Ol, atom.Section, atom.Article, atom.Header,
				atom.Footer, atom.Nav, atom.Main, atom.Aside, atom.Blockquote, atom.Dl, atom.Dt, atom.Dd,
				atom.Hr, atom.Figure, atom.Figcaption, atom.Body, atom.Details, atom.Summary:
				if kind != blockTable && pre == 0 {
					flush()
					kind = blockPara
				}
			}
		}
	}
}

func leadingNewlines(raw []byte) int {
	n := 0
	for _, c := range raw {
		switch c {
		case '\n':
			n++
		case ' ', '\t', '\r':
		default:
			return n
		}
	}
	return n
}

func collapseSpace(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if r == ' ' || r == '\t' || r == '\n' || r == '\r' {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		if space && b.Len() == 0 && len(s) > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	if space {
		b.WriteByte(' ')
	}
	return b.String()
}

func nonEmptyLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}
