package ingest

import (
	"path"
	"regexp"
	"strings"
)

// Structured files (YAML, TOML, JSON: config samples, an OpenAPI file) are
// cut by key, not as prose or declarations: a chunk holds whole top-level
// keys up to the budget and is headed by their names, and a key too large
// for one chunk is cut at its own keys ("paths > /api/v1/query"). As prose
// they were cut at blank lines into chunks headed by nothing, whose many
// repeated words crowded the documentation out of the results.

var (
	yamlKeyRe   = regexp.MustCompile(`^([ \t]*)("[^"]+"|'[^']+'|[^\s#'"{}\[\]&*!|>%@,-][^:#]*?)[ \t]*:(?:[ \t]|$)`)
	jsonKeyRe   = regexp.MustCompile(`^([ \t]*)"((?:[^"\\]|\\.)*)"[ \t]*:`)
	tomlTableRe = regexp.MustCompile(`^[ \t]*\[\[?[ \t]*([^\[\]]+?)[ \t]*\]\]?[ \t]*(?:#.*)?$`)
	tomlKeyRe   = regexp.MustCompile(`^()([A-Za-z0-9_.\-]+|"[^"]+")[ \t]*=`)
)

// structuredSyntax names the syntax of a structured file by its extension.
func structuredSyntax(name string) string {
	switch strings.ToLower(path.Ext(name)) {
	case ".json":
		return "json"
	case ".toml":
		return "toml"
	}
	return "yaml"
}

// chunkStructured cuts a structured file into pieces of whole keys.
func chunkStructured(src, syntax string, opt ChunkOptions) []Chunk {
	lines := splitLines(src)
	var leaves []block
	var cut func(bs []block, depth int)
	cut = func(bs []block, depth int) {
		for _, b := range bs {
			if b.size() > opt.Size && depth < 2 && syntax != "toml" {
				lo := b.Start - 1
				if inner := keyBlocks(lines, lo, lo+len(b.Lines), syntax, b.Title, true); len(inner) > 1 {
					cut(inner, depth+1)
					continue
				}
			}
			leaves = append(leaves, b)
		}
	}
	cut(keyBlocks(lines, 0, len(lines), syntax, "", false), 0)
	var out []Chunk
	var group []block
	size := 0
	flush := func() {
		if len(group) > 0 {
			out = append(out, pack(group, keysHeading(group), opt)...)
		}
		group, size = nil, 0
	}
	for _, b := range leaves {
		if size+b.size()+1 > opt.Size {
			flush()
		}
		group = append(group, b)
		size += b.size() + 1
	}
	flush()
	return out
}

// keyBlocks cuts lines[lo:hi] at the keys of its outermost level (the least
// indented key lines; TOML: tables and top-level keys). Comment lines just
// above a key go with it, anything before the first key goes with the first
// and anything after the last (a closing brace) with the last. Blank lines
// at either end of a block are dropped. nested says lines[lo:hi] is the
// value of the key parent, whose own line is not one of its keys.
func keyBlocks(lines []string, lo, hi int, syntax, parent string, nested bool) []block {
	type start struct {
		line int
		key  string
	}
	var starts []start
	indent := -1
	inTable := false
	for i := lo; i < hi; i++ {
		key, ind, ok := keyAt(lines[i], syntax)
		if !ok {
			continue
		}
		if syntax == "toml" {
			// After a [table] header, keys belong to the table.
			table := tomlTableRe.MatchString(lines[i])
			if inTable && !table {
				continue
			}
			inTable = inTable || table
		}
		if nested {
			nested = false
			continue
		}
		switch {
		case indent < 0 || ind < indent:
			indent = ind
			starts = append(starts[:0], start{i, key})
		case ind == indent:
			starts = append(starts, start{i, key})
		}
	}
	if len(starts) == 0 {
		if b, ok := trimmedBlock(lines, lo, hi, parent); ok {
			return []block{b}
		}
		return nil
	}
	// Comments right above a key belong to it.
	for k := range starts {
		floor := lo
		if k > 0 {
			floor = starts[k-1].line + 1
		}
		for starts[k].line > floor && isComment(lines[starts[k].line-1], syntax) {
			starts[k].line--
		}
	}
	starts[0].line = lo
	var out []block
	for k, s := range starts {
		end := hi
		if k+1 < len(starts) {
			end = starts[k+1].line
		}
		title := s.key
		if parent != "" {
			title = parent + " > " + s.key
		}
		if b, ok := trimmedBlock(lines, s.line, end, title); ok {
			out = append(out, b)
		}
	}
	return out
}

func keyAt(line, syntax string) (key string, indent int, ok bool) {
	var m []string
	switch syntax {
	case "json":
		m = jsonKeyRe.FindStringSubmatch(line)
	case "toml":
		if t := tomlTableRe.FindStringSubmatch(line); t != nil {
			return t[1], 0, true
		}
		m = tomlKeyRe.FindStringSubmatch(line)
	default:
		if strings.HasPrefix(line, "---") || strings.HasPrefix(line, "...") {
			return "", 0, false
		}
		m = yamlKeyRe.FindStringSubmatch(line)
	}
	if m == nil {
		return "", 0, false
	}
	return strings.Trim(m[2], `"'`), len(m[1]), true
}

func isComment(line, syntax string) bool {
	t := strings.TrimSpace(line)
	return syntax != "json" && strings.HasPrefix(t, "#")
}

// trimmedBlock is lines[lo:hi] without blank lines at either end.
func trimmedBlock(lines []string, lo, hi int, title string) (block, bool) {
	for lo < hi && strings.TrimSpace(lines[lo]) == "" {
		lo++
	}
	for hi > lo && strings.TrimSpace(lines[hi-1]) == "" {
		hi--
	}
	if lo == hi {
		return block{}, false
	}
	return block{Kind: blockCode, Title: title, Start: lo + 1, Lines: lines[lo:hi]}, true
}

// keysHeading names a chunk of keys: "server; storage", or with their
// common parent once, "paths > /query; /labels".
func keysHeading(bs []block) string {
	parent, same := "", true
	keys := make([]string, 0, len(bs))
	for i, b := range bs {
		p, k := "", b.Title
		if j := strings.LastIndex(b.Title, " > "); j >= 0 {
			p, k = b.Title[:j], b.Title[j+3:]
		}
		if i == 0 {
			parent = p
		} else if p != parent {
			same = false
		}
		if k != "" {
			keys = append(keys, k)
		}
	}
	if !same {
		keys = keys[:0]
		for _, b := range bs {
			if b.Title != "" {
				keys = append(keys, b.Title)
			}
		}
		parent = ""
	}
	h := strings.Join(keys, "; ")
	if parent != "" {
		h = parent + " > " + h
	}
	if len(h) > 200 {
		h = validPrefix(h, 200) + "…"
	}
	return h
}

// validPrefix is at most n bytes of s, cut at the start of a UTF-8 sequence.
func validPrefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:validCut(s, n)]
}
