package ingest

import (
	"bufio"
	"os"
	"path"
	"strings"
)

// An ignoreRule is one line of a .gitignore or .loreignore file.
type ignoreRule struct {
	base     string   // directory of the ignore file, relative to the walk root ("" at the root)
	segs     []string // pattern split at '/'
	neg      bool     // "!pattern" re-includes
	dirOnly  bool     // "pattern/" matches directories only
	anchored bool     // a '/' before the end: match from base, not at any depth
}

// readIgnoreFile parses one ignore file; a missing file has no rules.
func readIgnoreFile(file, base string) []ignoreRule {
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	var rules []ignoreRule
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if r, ok := parseIgnoreLine(sc.Text(), base); ok {
			rules = append(rules, r)
		}
	}
	return rules
}

func parseIgnoreLine(line, base string) (ignoreRule, bool) {
	line = strings.TrimSuffix(line, "\r")
	if !strings.HasSuffix(line, `\ `) {
		line = strings.TrimRight(line, " \t")
	}
	if line == "" || strings.HasPrefix(line, "#") {
		return ignoreRule{}, false
	}
	r := ignoreRule{base: base}
	if strings.HasPrefix(line, "!") {
		r.neg, line = true, line[1:]
	} else if strings.HasPrefix(line, `\`) {
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		r.dirOnly, line = true, strings.TrimRight(line, "/")
	}
	if strings.Contains(line, "/") {
		r.anchored = true
		line = strings.TrimPrefix(line, "/")
	}
	if line == "" {
		return ignoreRule{}, false
	}
	r.segs = strings.Split(line, "/")
	return r, true
}

// ignored reports whether rel (slash-separated, relative to the walk root)
// is excluded. The last matching rule wins, as in git.
func ignored(rules []ignoreRule, rel string, isDir bool) bool {
	out := false
	for _, r := range rules {
		if r.dirOnly && !isDir {
			continue
		}
		if r.matches(rel) {
			out = !r.neg
		}
	}
	return out
}

func (r ignoreRule) matches(rel string) bool {
	if r.base != "" {
		if !strings.HasPrefix(rel, r.base+"/") {
			return false
		}
		rel = rel[len(r.base)+1:]
	}
	if !r.anchored {
		ok, _ := path.Match(r.segs[0], path.Base(rel))
		return ok
	}
	return matchSegs(r.segs, strings.Split(rel, "/"))
}

// matchSegs matches path segments against pattern segments, where "**"
// stands for any number of segments.
func matchSegs(pat, p []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			if len(pat) == 1 {
				return true
			}
			for i := range p {
				if matchSegs(pat[1:], p[i:]) {
					return true
				}
			}
			return false
		}
		if len(p) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], p[0]); !ok {
			return false
		}
		pat, p = pat[1:], p[1:]
	}
	return len(p) == 0
}
