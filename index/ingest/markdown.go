package ingest

import (
	"regexp"
	"strings"
)

var (
	atxHeading   = regexp.MustCompile(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
	fenceOpen    = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})")
	setextH1     = regexp.MustCompile(`^ {0,3}=+[ \t]*$`)
	setextH2     = regexp.MustCompile(`^ {0,3}-+[ \t]*$`)
	tableDelim   = regexp.MustCompile(`^[ \t]*\|?[ \t]*:?-+:?[ \t]*(\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$`)
	markupTag    = regexp.MustCompile(`</?[A-Za-z][A-Za-z0-9._:-]*(?:\s+[^<>]*)?/?>`)
	mdxComment   = regexp.MustCompile(`\{/\*.*?\*/\}`)
	mdxESM       = regexp.MustCompile(`^(import|export)\s`)
	inlineCodeRe = regexp.MustCompile("`+[^`]*`+")
)

// loadMarkdown parses markdown (and MDX) into blocks. It is a line-based
// parser on purpose: it keeps exact line numbers, which a CommonMark AST
// does not give for every node, and lore only needs block structure.
func loadMarkdown(src string, mdx bool) []block {
	lines := splitLines(src)
	i := skipFrontMatter(lines)
	var out []block
	var para *block
	inComment := false
	endPara := func() { para = nil }
	addPara := func(n int, l string) {
		if para == nil {
			out = append(out, block{Kind: blockPara, Start: n + 1})
			para = &out[len(out)-1]
		}
		para.Lines = append(para.Lines, l)
	}
	for ; i < len(lines); i++ {
		line := lines[i]
		// HTML comments can span lines and hide anything inside them.
		if inComment {
			if end := strings.Index(line, "-->"); end >= 0 {
				inComment = false
				line = line[end+3:]
			} else {
				continue
			}
		}
		if start := strings.Index(line, "<!--"); start >= 0 && !strings.Contains(line[start:], "-->") {
			inComment = true
			line = line[:start]
		}
		if m := fenceOpen.FindStringSubmatch(line); m != nil {
			endPara()
			i = readFence(lines, i, m[1], &out)
			continue
		}
		if mdx && para == nil && mdxESM.MatchString(line) {
			// MDX import/export statements run until a blank line.
			for i+1 < len(lines) && strings.TrimSpace(lines[i+1]) != "" {
				i++
			}
			continue
		}
		clean := stripMarkup(line)
		if m := atxHeading.FindStringSubmatch(clean); m != nil {
			endPara()
			title := strings.TrimSpace(m[2])
			out = append(out, block{Kind: blockHeading, Level: len(m[1]), Title: title, Start: i + 1, Lines: []string{clean}})
			continue
		}
		if para != nil && len(para.Lines) > 0 && (setextH1.MatchString(line) || setextH2.MatchString(line)) {
			level := 1
			if setextH2.MatchString(line) {
				level = 2
			}
			h := *para
			h.Kind, h.Level = blockHeading, level
			h.Title = strings.TrimSpace(strings.Join(h.Lines, " "))
			h.Lines = append(h.Lines, line)
			out[len(out)-1] = h
			endPara()
			continue
		}
		if para == nil && strings.Contains(line, "|") && i+1 < len(lines) && tableDelim.MatchString(lines[i+1]) && strings.Contains(lines[i+1], "-") {
			t := block{Kind: blockTable, Start: i + 1}
			for ; i < len(lines) && strings.Contains(lines[i], "|"); i++ {
				t.Lines = append(t.Lines, stripMarkup(lines[i]))
			}
			i--
			out = append(out, t)
			continue
		}
		if strings.TrimSpace(clean) == "" {
			endPara()
			continue
		}
		addPara(i, clean)
	}
	return out
}

// skipFrontMatter returns the index of the first line after a YAML (---) or
// TOML (+++) front matter block, or 0 when there is none.
func skipFrontMatter(lines []string) int {
	if len(lines) == 0 {
		return 0
	}
	delim := strings.TrimSpace(lines[0])
	if delim != "---" && delim != "+++" {
		return 0
	}
	for i := 1; i < len(lines); i++ {
		if l := strings.TrimSpace(lines[i]); l == delim || (delim == "---" && l == "...") {
			return i + 1
		}
	}
	return 0 // unterminated: it was a thematic break, not front matter
}

// frontMatterTitle is the title a YAML (title: X) or TOML (title = "X")
// front matter gives the page, "" when there is none. Many docs sites keep
// the page's name only there and start the text at its first section.
func frontMatterTitle(src string) string {
	lines := splitLines(src)
	end := skipFrontMatter(lines)
	for i := 1; i < end-1; i++ {
		l := lines[i]
		var v string
		if k, rest, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "title" && strings.TrimSpace(lines[0]) == "---" {
			v = rest
		} else if k, rest, ok := strings.Cut(l, "="); ok && strings.TrimSpace(k) == "title" && strings.TrimSpace(lines[0]) == "+++" {
			v = rest
		} else {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		return strings.TrimSpace(stripMarkup(v))
	}
	return ""
}

// readFence consumes a fenced code block starting at lines[i] and returns the
// index of its last line. An unclosed fence runs to the end of the file, as
// CommonMark says.
func readFence(lines []string, i int, marker string, out *[]block) int {
	b := block{Kind: blockCode, Start: i + 1, Lines: []string{lines[i]}}
	j := i + 1
	for ; j < len(lines); j++ {
		b.Lines = append(b.Lines, lines[j])
		t := strings.TrimSpace(lines[j])
		if strings.HasPrefix(t, marker[:1]) && len(t) >= len(marker) && strings.Trim(t, marker[:1]) == "" {
			break
		}
	}
	if j == len(lines) {
		j--
	}
	*out = append(*out, b)
	return j
}

// stripMarkup removes HTML/JSX tags and MDX comments outside inline code, so
// `<Tabs>` and `<br/>` are not indexed as words but `Vec<T>` in backticks is.
func stripMarkup(line string) string {
	if !strings.ContainsAny(line, "<{") {
		return line
	}
	var b strings.Builder
	last := 0
	for _, loc := range inlineCodeRe.FindAllStringIndex(line, -1) {
		b.WriteString(stripTags(line[last:loc[0]]))
		b.WriteString(line[loc[0]:loc[1]])
		last = loc[1]
	}
	b.WriteString(stripTags(line[last:]))
	return b.String()
}

func stripTags(s string) string {
	s = mdxComment.ReplaceAllString(s, "")
	return markupTag.ReplaceAllString(s, "")
}
