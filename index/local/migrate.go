package local

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/lore-cli/lore/index"
)

// formatError says what to do about an index of format ver, which is not
// this lore's. It is ErrOldFormat.
func formatError(name, ver string) error {
	if ver == "1" {
		return oldFormat(fmt.Sprintf("index %q was built by an older lore: run `lore index` to upgrade it (nothing is read or embedded again)", name))
	}
	return oldFormat(fmt.Sprintf("index %q has format %s, this lore reads %s: run `lore index --rebuild`", name, ver, schemaVersion))
}

type oldFormat string

func (e oldFormat) Error() string        { return string(e) }
func (e oldFormat) Is(target error) bool { return target == index.ErrOldFormat }

// checkFormat is a reader's look at the format: "" is a first build that
// has not written it yet.
func checkFormat(ctx context.Context, st *database, name string) error {
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
// FTS5 goes and chunk ids become never-reused. The keyword index is then
// written from the chunks the index holds by catchUpKeywords, as after an
// interrupted build. Nothing is re-read from the sources and nothing
// re-embedded.
func migrateV1(ctx context.Context, st *database) error {
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
		_, err := tx.ExecContext(ctx, `UPDATE meta SET value = ? WHERE key = 'schema_version'`, schemaVersion)
		return err
	})
}
