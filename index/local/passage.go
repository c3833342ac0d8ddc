package local

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/ingest"
)

// docRef is a document the index holds, found by its path.
type docRef struct {
	id         int64
	root, path string
	hash       string
	size       int64
}

// document finds the document p names: relative to one of the sources, as
// a Hit's Path (Source may be given joined to it, as an absolute path).
// A relative path held by two sources is ambiguous: the absolute one says
// which.
func (ix *Index) document(ctx context.Context, p string) (docRef, error) {
	if strings.TrimSpace(p) == "" {
		return docRef{}, fmt.Errorf("%w: the path is empty", index.ErrNotIndexed)
	}
	srcs, err := ix.st.sources(ctx)
	if err != nil {
		return docRef{}, damaged(ix.name, err)
	}
	roots := make([]string, len(srcs))
	for i, s := range srcs {
		roots[i] = s.Root
	}
	type cand struct {
		src index.Source
		rel string
	}
	var cands []cand
	if filepath.IsAbs(p) {
		clean := filepath.Clean(p)
		for _, s := range srcs {
			// A file source's document is named by its base name and is
			// relative to the file's folder (SourceDir).
			for _, dir := range []string{s.Root, filepath.Dir(s.Root)} {
				if rel, err := filepath.Rel(dir, clean); err == nil && filepath.IsLocal(rel) {
					cands = append(cands, cand{s, filepath.ToSlash(rel)})
				}
			}
		}
	} else {
		if !filepath.IsLocal(p) {
			return docRef{}, fmt.Errorf("%w: %s leads outside the index's sources (%s)", index.ErrNotIndexed, p, strings.Join(roots, ", "))
		}
		for _, s := range srcs {
			cands = append(cands, cand{s, filepath.ToSlash(filepath.Clean(p))})
		}
	}
	var found []docRef
	for _, c := range cands {
		var d docRef
		err := ix.st.db.QueryRowContext(ctx, `SELECT id, hash, size FROM documents WHERE source_id = ? AND path = ? AND status = ?`,
			c.src.ID, c.rel, index.StatusIndexed).Scan(&d.id, &d.hash, &d.size)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return docRef{}, damaged(ix.name, err)
		}
		d.root, d.path = ingest.SourceDir(c.src.Root, c.rel), c.rel
		if !filepath.IsAbs(p) || filepath.Join(d.root, d.path) == filepath.Clean(p) {
			found = append(found, d)
		}
	}
	switch len(found) {
	case 0:
		return docRef{}, fmt.Errorf("%w %q: %s is not a file it holds (its sources: %s); search returns the paths it holds",
			index.ErrNotIndexed, ix.name, p, strings.Join(roots, ", "))
	case 1:
		return found[0], nil
	}
	return docRef{}, fmt.Errorf("%w: %s is in more than one source of index %q (%s and %s): give the source joined to the path",
		index.ErrNotIndexed, p, ix.name, found[0].root, found[1].root)
}

// ReadPassage returns lines start to end (1-based, inclusive; 0 for the
// first or the last line), at most maxLines of them (0: no limit), of the
// document p names (see document). The
// file is read from disk when it is still what was indexed (same bytes)
// and is inside its source folder once symlinks are resolved; otherwise
// the text comes from the chunks the index stored. A file that resolves
// outside its source is refused (ErrNotIndexed): a symlink that points out
// is not a way to read the rest of the disk.
func (ix *Index) ReadPassage(ctx context.Context, p string, start, end, maxLines int) (index.Passage, error) {
	if start < 0 || end < 0 || (end > 0 && end < start) {
		return index.Passage{}, fmt.Errorf("lines %d-%d: give 1 <= start_line <= end_line", start, end)
	}
	d, err := ix.document(ctx, p)
	if err != nil {
		return index.Passage{}, err
	}
	abs := filepath.Join(d.root, d.path)
	if err := contained(d.root, abs); err != nil {
		return index.Passage{}, err
	}
	out := index.Passage{Source: d.root, Path: d.path}
	if !ingest.Extracted(d.path) {
		data, err := ingest.ReadFile(abs, d.size)
		if err == nil && index.ContentHash(data) == d.hash {
			lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
			out.Lines = len(lines)
			s, e := lineRange(start, end, len(lines))
			if s > len(lines) {
				return index.Passage{}, fmt.Errorf("%s has %d lines: start_line %d is past its end", p, len(lines), start)
			}
			if maxLines > 0 && e-s+1 > maxLines {
				e, out.Truncated = s+maxLines-1, true
			}
			out.Start, out.End, out.Text = s, e, strings.Join(lines[s-1:e], "\n")
			return out, nil
		}
	}
	return ix.chunkPassage(ctx, d, out, start, end, maxLines)
}

// chunkPassage is the passage from the stored chunks that overlap the
// range, in document order.
func (ix *Index) chunkPassage(ctx context.Context, d docRef, out index.Passage, start, end, maxLines int) (index.Passage, error) {
	s, e := lineRange(start, end, 1<<31-1)
	rows, err := ix.st.db.QueryContext(ctx, `SELECT start_line, end_line, text FROM chunks WHERE doc_id = ? AND end_line >= ? AND start_line <= ? ORDER BY ord`, d.id, s, e)
	if err != nil {
		return out, damaged(ix.name, err)
	}
	defer rows.Close()
	var texts []string
	out.FromChunks = true
	for rows.Next() {
		var cs, ce int
		var text string
		if err := rows.Scan(&cs, &ce, &text); err != nil {
			return out, damaged(ix.name, err)
		}
		if out.Start == 0 || cs < out.Start {
			out.Start = cs
		}
		if maxLines > 0 && out.End > 0 && ce-out.Start+1 > maxLines {
			out.Truncated = true
			break
		}
		out.End = max(out.End, ce)
		texts = append(texts, text)
	}
	if err := rows.Err(); err != nil {
		return out, damaged(ix.name, err)
	}
	if len(texts) == 0 {
		return out, fmt.Errorf("%s: the index holds no text at lines %d-%d", filepath.Join(d.root, d.path), s, e)
	}
	out.Text = strings.Join(texts, "\n\n")
	return out, nil
}

// lineRange is start-end with 0 meaning the first or the last line, end
// capped at n.
func lineRange(start, end, n int) (int, int) {
	if start == 0 {
		start = 1
	}
	if end == 0 || end > n {
		end = n
	}
	return start, end
}

// contained refuses a file that, with symlinks resolved, is not inside
// root (resolved too).
func contained(root, abs string) error {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return fmt.Errorf("source folder %s: %w", root, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return fmt.Errorf("%s: %w (run lore index to refresh the index)", abs, err)
	}
	if rel, err := filepath.Rel(realRoot, real); err != nil || !filepath.IsLocal(rel) {
		return fmt.Errorf("%w: %s is a symlink to %s, outside its source folder %s", index.ErrNotIndexed, abs, real, root)
	}
	return nil
}
