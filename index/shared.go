package index

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/lore-cli/lore/index/ingest"
)

// What both stores do alike lives here, once: a store calls these rather
// than writing its own, so that the two cannot drift apart (a Weaviate
// index that hashed files differently would call every file changed).

// ContentHash is what the index records of a file's bytes.
func ContentHash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16])
}

// WithDefaults is o with every unset knob at DefaultSearchOptions.
func (o SearchOptions) WithDefaults() SearchOptions {
	def := DefaultSearchOptions()
	if o.Limit <= 0 {
		o.Limit = def.Limit
	}
	if o.Depth <= 0 {
		o.Depth = def.Depth
	}
	if o.RRFK <= 0 {
		o.RRFK = def.RRFK
	}
	return o
}

// FileChanged reports whether the file at path differs from what the
// index holds of it (d): gone, not a regular file, another size, or
// another mtime with other bytes (a touch or a checkout that kept the
// bytes is no change), as a build decides.
func FileChanged(path string, d DocState) bool {
	fi, err := os.Stat(path)
	switch {
	case err != nil || fi.Size() != d.Size || !fi.Mode().IsRegular():
		return true
	case fi.ModTime().UnixNano() == d.MTimeNS:
		return false
	}
	data, err := ingest.ReadFile(path, d.Size)
	return err != nil || ContentHash(data) != d.Hash
}

// Changes is Status.Changed, one meaning for every store: what `lore
// index` on this machine would change in the index. held gives the
// documents the index holds of a source (indexed or skipped). A file of a
// source's folder the index does not hold is new; one whose size moved,
// or whose mtime moved and whose bytes differ (FileChanged), is modified;
// one gone is deleted. A source folder that is not on this machine
// (removed, unmounted, or an index built elsewhere) is listed once as
// missing, its documents staying as they are. The sources are walked as
// walk says, the way the index's builds walk (Remembered.Walk), so that a
// link a build skips is no "new" file here; the walk ends with ctx.
func Changes(ctx context.Context, sources []Source, walk ingest.WalkOptions, held func(Source) (map[string]DocState, error)) ([]Change, error) {
	changes := []Change{}
	roots := make([]string, len(sources))
	for i, s := range sources {
		roots[i] = s.Root
	}
	walked, err := ingest.WalkRoots(ctx, roots, walk)
	if err != nil {
		return nil, err
	}
	for i, w := range walked {
		src := sources[i]
		if w.Err != nil {
			changes = append(changes, Change{Path: src.Root, Change: "missing"})
			continue
		}
		docs, err := held(src)
		if err != nil {
			return nil, err
		}
		seen := make(map[string]bool, len(w.Entries))
		for _, e := range w.Entries {
			seen[e.Rel] = true
			d, ok := docs[e.Rel]
			switch {
			case e.Reason != "":
			case !ok:
				changes = append(changes, Change{Path: src.Join(e.Rel), Change: "new"})
			case d.Size != e.Size || d.MTimeNS != e.MTime.UnixNano() && FileChanged(src.Join(e.Rel), d):
				// Only the mtime moved (a touch, a checkout): the bytes
				// decide, as they do for a build.
				changes = append(changes, Change{Path: src.Join(e.Rel), Change: "modified"})
			}
		}
		if w.Cut != "" {
			continue // a walk cut short did not look for what it did not reach
		}
		for p := range docs {
			if !seen[p] {
				changes = append(changes, Change{Path: src.Join(p), Change: "deleted"})
			}
		}
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].Path < changes[j].Path })
	return changes, nil
}

// DocPath is a document of an index named by its source and its path
// relative to the source's folder.
type DocPath struct {
	Source Source
	Rel    string
}

// Dir is the folder Rel is relative to, as a Hit's Source gives it.
func (d DocPath) Dir() string { return d.Source.Dir(d.Rel) }

// FindDocument resolves p, a path as a Hit names it (relative to one of
// the sources, or the source joined to it), to the one document of the
// index that it names. lookup tells, for each candidate, what the store
// holds of it as an indexed document (nil: nothing). A relative path held
// by two sources is ambiguous: the absolute one says which. Errors are
// ErrNotIndexed: nothing outside the index's documents is ever named.
func FindDocument[D any](name, p string, sources []Source, lookup func([]DocPath) ([]*D, error)) (DocPath, *D, error) {
	if strings.TrimSpace(p) == "" {
		return DocPath{}, nil, fmt.Errorf("%w: the path is empty", ErrNotIndexed)
	}
	roots := make([]string, len(sources))
	for i, s := range sources {
		roots[i] = s.Root
	}
	var cands []DocPath
	if filepath.IsAbs(p) {
		clean := filepath.Clean(p)
		for _, s := range sources {
			// A file source's document is named by its base name and is
			// relative to the file's folder (Source.Dir).
			for _, dir := range []string{s.Root, filepath.Dir(s.Root)} {
				if rel, err := filepath.Rel(dir, clean); err == nil && filepath.IsLocal(rel) {
					cands = append(cands, DocPath{s, filepath.ToSlash(rel)})
				}
			}
		}
	} else {
		if !filepath.IsLocal(p) {
			return DocPath{}, nil, fmt.Errorf("%w: %s leads outside the index's sources (%s)", ErrNotIndexed, p, strings.Join(roots, ", "))
		}
		for _, s := range sources {
			cands = append(cands, DocPath{s, filepath.ToSlash(filepath.Clean(p))})
		}
	}
	var held []*D
	if len(cands) > 0 {
		var err error
		if held, err = lookup(cands); err != nil {
			return DocPath{}, nil, err
		}
	}
	var found []int
	for i, c := range cands {
		if i < len(held) && held[i] != nil && (!filepath.IsAbs(p) || filepath.Join(c.Dir(), c.Rel) == filepath.Clean(p)) {
			found = append(found, i)
		}
	}
	switch len(found) {
	case 0:
		for _, c := range cands {
			if out := linkedOut(c); out != "" {
				return DocPath{}, nil, fmt.Errorf("%w %q: %s", ErrNotIndexed, name, out)
			}
		}
		return DocPath{}, nil, fmt.Errorf("%w %q: %s is not a file it holds (its sources: %s); search returns the paths it holds",
			ErrNotIndexed, name, p, strings.Join(roots, ", "))
	case 1:
		return cands[found[0]], held[found[0]], nil
	}
	return DocPath{}, nil, fmt.Errorf("%w: %s is in more than one source of index %q (%s and %s): give the source joined to the path",
		ErrNotIndexed, p, name, cands[found[0]].Dir(), cands[found[1]].Dir())
}

// LineRange is start-end with 0 meaning the first or the last line, end
// capped at n.
func LineRange(start, end, n int) (int, int) {
	if start == 0 {
		start = 1
	}
	if end == 0 || end > n {
		end = n
	}
	return start, end
}

// CheckLineRange refuses a range no document has.
func CheckLineRange(start, end int) error {
	if start < 0 || end < 0 || (end > 0 && end < start) {
		return fmt.Errorf("lines %d-%d: give 1 <= start_line <= end_line", start, end)
	}
	return nil
}

// PassageChunk is a stored chunk as a passage is stitched from it.
type PassageChunk struct {
	Start, End int
	Text       string
}

// StitchPassage fills out with the chunks (in document order) that overlap
// lines start-end (LineRange's zeros), at most maxLines of them (0: no
// limit): the passage of a document whose file cannot be read as it was
// indexed. Chunk texts are the cleaned, searchable text and may repeat a
// few lines where chunks overlap.
func StitchPassage(out Passage, chunks []PassageChunk, start, end, maxLines int) (Passage, error) {
	s, e := LineRange(start, end, 1<<31-1)
	out.FromChunks = true
	var texts []string
	for _, c := range chunks {
		if c.End < s || c.Start > e {
			continue
		}
		if out.Start == 0 || c.Start < out.Start {
			out.Start = c.Start
		}
		if maxLines > 0 && out.End > 0 && c.End-out.Start+1 > maxLines {
			out.Truncated = true
			break
		}
		out.End = max(out.End, c.End)
		texts = append(texts, c.Text)
	}
	if len(texts) == 0 {
		return out, fmt.Errorf("%s: the index holds no text at lines %d-%d", filepath.Join(out.Source, out.Path), s, e)
	}
	out.Text = strings.Join(texts, "\n\n")
	return out, nil
}

// linkedOut says why a path of a source the index does not hold is not
// there when it is a symbolic link (or lies under one) that leads out of
// the source, which the walk skips; "" otherwise.
func linkedOut(c DocPath) string {
	abs := filepath.Join(c.Dir(), c.Rel)
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return ""
	}
	root, err := filepath.EvalSymlinks(c.Dir())
	if err != nil {
		return ""
	}
	if rel, err := filepath.Rel(root, real); err == nil && filepath.IsLocal(rel) {
		return ""
	}
	return fmt.Sprintf("%s is a symlink to %s, outside its source folder %s: the index does not hold it (follow-symlinks)", abs, real, c.Dir())
}
