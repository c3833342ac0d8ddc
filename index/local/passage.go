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

// docRow is what the index holds of a document a passage reads.
type docRow struct {
	id   int64
	hash string
	size int64
}

// document finds the document p names (index.FindDocument).
func (ix *Index) document(ctx context.Context, p string) (index.DocPath, *docRow, error) {
	srcs, err := ix.st.sources(ctx)
	if err != nil {
		return index.DocPath{}, nil, damaged(ix.name, err)
	}
	return index.FindDocument(ix.name, p, srcs, func(cands []index.DocPath) ([]*docRow, error) {
		held := make([]*docRow, len(cands))
		for i, c := range cands {
			var d docRow
			err := ix.st.db.QueryRowContext(ctx, `SELECT id, hash, size FROM documents WHERE source_id = ? AND path = ? AND status = ?`,
				c.Source.ID, c.Rel, index.StatusIndexed).Scan(&d.id, &d.hash, &d.size)
			if errors.Is(err, sql.ErrNoRows) {
				continue
			}
			if err != nil {
				return nil, damaged(ix.name, err)
			}
			held[i] = &d
		}
		return held, nil
	})
}

// ReadPassage returns lines start to end (1-based, inclusive; 0 for the
// first or the last line), at most maxLines of them (0: no limit), of the
// document p names (see index.FindDocument). The file is read from disk
// when it is still what was indexed (same bytes) and is inside its source
// folder once symlinks are resolved; otherwise the text comes from the
// chunks the index stored. A file that resolves outside its source is
// not read (a symlink that points out is not a way to read the rest of
// the disk): it is refused (ErrNotIndexed), unless the index was built
// with follow-symlinks, whose searches return such files' passages; then
// the text comes from the stored chunks, which are what was indexed.
func (ix *Index) ReadPassage(ctx context.Context, p string, start, end, maxLines int) (index.Passage, error) {
	if err := index.CheckLineRange(start, end); err != nil {
		return index.Passage{}, err
	}
	doc, d, err := ix.document(ctx, p)
	if err != nil {
		return index.Passage{}, err
	}
	root := doc.Dir()
	abs := filepath.Join(root, doc.Rel)
	out := index.Passage{Source: root, Path: doc.Rel}
	fromDisk := !ingest.Extracted(doc.Rel)
	if err := contained(root, abs); err != nil {
		if !errors.Is(err, index.ErrNotIndexed) || !ix.followsSymlinks() {
			return index.Passage{}, err
		}
		fromDisk = false
	}
	if fromDisk {
		data, err := ingest.ReadFile(abs, d.size)
		if err == nil && index.ContentHash(data) == d.hash {
			lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
			out.Lines = len(lines)
			s, e := index.LineRange(start, end, len(lines))
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
	s, e := index.LineRange(start, end, 1<<31-1)
	rows, err := ix.st.db.QueryContext(ctx, `SELECT start_line, end_line, text FROM chunks WHERE doc_id = ? AND end_line >= ? AND start_line <= ? ORDER BY ord`, d.id, s, e)
	if err != nil {
		return out, damaged(ix.name, err)
	}
	defer rows.Close()
	var chunks []index.PassageChunk
	for rows.Next() {
		var c index.PassageChunk
		if err := rows.Scan(&c.Start, &c.End, &c.Text); err != nil {
			return out, damaged(ix.name, err)
		}
		chunks = append(chunks, c)
	}
	if err := rows.Err(); err != nil {
		return out, damaged(ix.name, err)
	}
	return index.StitchPassage(out, chunks, start, end, maxLines)
}

// followsSymlinks reports whether the index's builds follow symbolic links
// that lead out of a source (follow-symlinks, remembered with the sources).
func (ix *Index) followsSymlinks() bool {
	r, err := ReadRemembered(ix.dir)
	return err == nil && r.Walk().FollowSymlinks
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
