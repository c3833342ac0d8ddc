package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"lore/index/bm25"
)

// ErrOldFormat means the index was written by another version of lore.
var ErrOldFormat = errors.New("index format")

// formatError says what to do about an index of format ver, which is not
// this lore's.
func formatError(name, ver string) error {
	if ver == "1" {
		return fmt.Errorf("%w: index %q was built by an older lore: run `lore index` to upgrade it (its vectors are kept)", ErrOldFormat, name)
	}
	return fmt.Errorf("%w: index %q has format %s, this lore reads %s: run `lore index --rebuild`", ErrOldFormat, name, ver, schemaVersion)
}

// checkFormat is a reader's look at the format: "" is a first build that
// has not written it yet.
func checkFormat(ctx context.Context, st *store, name string) error {
	ver, err := st.meta(ctx, "schema_version")
	if err != nil {
		return fmt.Errorf("read index: %w", err)
	}
	if ver != "" && ver != schemaVersion {
		return formatError(name, ver)
	}
	return nil
}

// migrateV1 upgrades an index of format 1 in place, in one transaction:
// FTS5 gives way to lore's own postings, built from the chunks the index
// already holds, and chunk ids become never-reused. Nothing is re-read
// from the sources and nothing re-embedded.
func migrateV1(ctx context.Context, st *store) error {
	return st.tx(ctx, func(tx *sql.Tx) error {
		chunksV2 := strings.Replace(chunksTable, "chunks(", "chunks_v2(", 1)
		for _, q := range []string{
			`DROP TABLE IF EXISTS chunks_fts`,
			chunksV2,
			`INSERT INTO chunks_v2(id, doc_id, ord, start_line, end_line, heading, kind, text, hash)
				SELECT id, doc_id, ord, start_line, end_line, heading, kind, text, hash FROM chunks`,
			`DROP TABLE chunks`,
			`ALTER TABLE chunks_v2 RENAME TO chunks`,
			`CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id)`,
			`CREATE INDEX IF NOT EXISTS chunks_hash ON chunks(hash)`,
			`DELETE FROM lex_postings`, `DELETE FROM lex_segments`, `DELETE FROM lex_deleted`,
			`DELETE FROM lex_stats`,
		} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("upgrade index: %w", err)
			}
		}
		if err := analyzeAll(ctx, tx); err != nil {
			return fmt.Errorf("upgrade index: %w", err)
		}
		_, err := tx.ExecContext(ctx, `UPDATE meta SET value = ? WHERE key = 'schema_version'`, schemaVersion)
		return err
	})
}

// analyzeAll writes the keyword index of every chunk, a segment per batch.
func analyzeAll(ctx context.Context, tx *sql.Tx) error {
	const batch = 4096
	for after := int64(0); ; {
		rows, err := tx.QueryContext(ctx, `SELECT c.id, d.path, c.heading, c.text FROM chunks c JOIN documents d ON d.id = c.doc_id
			WHERE c.id > ? ORDER BY c.id LIMIT ?`, after, batch)
		if err != nil {
			return err
		}
		lex := &lexWriter{tx: tx}
		for rows.Next() {
			var f bm25.Fields
			if err := rows.Scan(&after, &f.Path, &f.Heading, &f.Body); err != nil {
				rows.Close()
				return err
			}
			lex.add(after, bm25.Analyze(f))
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(lex.added) == 0 {
			return nil
		}
		set, err := tx.PrepareContext(ctx, `UPDATE chunks SET lex_len = ? WHERE id = ?`)
		if err != nil {
			return err
		}
		for _, d := range lex.added {
			if _, err := set.ExecContext(ctx, d.doc.Len, d.id); err != nil {
				set.Close()
				return err
			}
		}
		set.Close()
		if err := lex.commit(ctx); err != nil {
			return err
		}
	}
}
