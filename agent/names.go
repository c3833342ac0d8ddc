package agent

import (
	"cmp"
	"path/filepath"
	"strings"
)

// ShownPaths is how each document (root, path) is named to the user: its
// path, unless another of them has the same path under another source root
// (README.md of ~/a/docs and of ~/b/docs); then each of those is prefixed
// with the shortest end of its root's folder that tells them apart
// (a/docs/README.md, b/docs/README.md). Web sources (no root) keep theirs.
func ShownPaths(roots, paths []string) []string {
	out := make([]string, len(paths))
	copy(out, paths)
	byPath := map[string][]int{}
	for i, p := range paths {
		if roots[i] != "" {
			byPath[p] = append(byPath[p], i)
		}
	}
	for path, idx := range byPath {
		dirs := map[string]bool{}
		for _, i := range idx {
			dirs[folderOf(roots[i], path)] = true
		}
		if len(dirs) < 2 {
			continue
		}
		n := 1
		for !distinctEnds(dirs, n) && n < 64 {
			n++
		}
		for _, i := range idx {
			out[i] = lastParts(folderOf(roots[i], path), n) + "/" + path
		}
	}
	return out
}

// folderOf is the folder a document path is relative to: the root, or for
// a single-file source (root /x/notes.md, path notes.md) the file's folder.
func folderOf(root, path string) string {
	if filepath.Base(root) == path {
		return filepath.Dir(root)
	}
	return root
}

// distinctEnds tells whether the last n parts of every folder differ.
func distinctEnds(dirs map[string]bool, n int) bool {
	seen := map[string]bool{}
	for d := range dirs {
		e := lastParts(d, n)
		if seen[e] {
			return false
		}
		seen[e] = true
	}
	return true
}

// lastParts is the last n slash-separated parts of dir.
func lastParts(dir string, n int) string {
	parts := strings.Split(strings.Trim(filepath.ToSlash(filepath.Clean(dir)), "/"), "/")
	return strings.Join(parts[max(0, len(parts)-n):], "/")
}

// NamePassages sets the Name of passages whose path is ambiguous in the
// list (see ShownPaths).
func NamePassages(ps []Passage) {
	roots, paths := make([]string, len(ps)), make([]string, len(ps))
	for i, p := range ps {
		roots[i], paths[i] = p.Root, p.Path
	}
	for i, n := range ShownPaths(roots, paths) {
		if n != ps[i].Path {
			ps[i].Name = n
		}
	}
}

// NameSources is NamePassages for sources.
func NameSources(ss []Source) {
	roots, paths := make([]string, len(ss)), make([]string, len(ss))
	for i, s := range ss {
		roots[i], paths[i] = s.Root, s.Path
	}
	for i, n := range ShownPaths(roots, paths) {
		if n != ss[i].Path {
			ss[i].Name = n
		}
	}
}

// Shown is the passage's path as shown to the user.
func (p Passage) Shown() string { return cmp.Or(p.Name, p.Path) }

// Shown is the source's path as shown to the user.
func (s Source) Shown() string { return cmp.Or(s.Name, s.Path) }
