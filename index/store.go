package index

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// schemaVersion changes when the tables change; an index with another
// version is rebuilt, not migrated (it is a cache of the sources).
const schemaVersion = "1"

const schema = `
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sources(
	id INTEGER PRIMARY KEY,
	root TEXT NOT NULL UNIQUE,
	added_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS documents(
	id INTEGER PRIMARY KEY,
	source_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
	path TEXT NOT NULL,
	size INTEGER NOT NULL,
	mtime_ns INTEGER NOT NULL,
	hash TEXT NOT NULL,
	status TEXT NOT NULL,
	reason TEXT NOT NULL DEFAULT '',
	chunker TEXT NOT NULL DEFAULT '',
	indexed_at INTEGER NOT NULL,
	UNIQUE(source_id, path)
);
CREATE TABLE IF NOT EXISTS vectors(
	id INTEGER PRIMARY KEY AUTOINCREMENT, -- never reused: the graph may hold a removed id

	hash TEXT NOT NULL UNIQUE,
	vec BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks(
	id INTEGER PRIMARY KEY,
	doc_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
	ord INTEGER NOT NULL,
	start_line INTEGER NOT NULL,
	end_line INTEGER NOT NULL,
	heading TEXT NOT NULL,
	kind TEXT NOT NULL,
	text TEXT NOT NULL,
	hash TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id);
CREATE INDEX IF NOT EXISTS chunks_hash ON chunks(hash);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
	path, heading, body, idents,
	content='', contentless_delete=1,
	tokenize='porter unicode61 remove_diacritics 2'
);
`

// Document statuses.
const (
	statusIndexed = "indexed"
	statusSkipped = "skipped"
)

// store is the SQLite side of an index: documents, chunks, the FTS5 table
// and the vectors. One writer at a time (the index lock sees to that);
// any number of readers, thanks to WAL.
type store struct {
	db *sql.DB
}

func openStore(path string) (*store, error) {
	dsn := "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=busy_timeout(10000)&_pragma=foreign_keys(ON)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open index database: %w", err)
	}
	db.SetMaxOpenConns(4)
	if _, err := db.Exec(schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("open index database %s: %w", path, err)
	}
	return &store{db: db}, nil
}

func (s *store) Close() error { return s.db.Close() }

func (s *store) meta(ctx context.Context, key string) (string, error) {
	var v string
	err := s.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, err
}

func (s *store) setMeta(ctx context.Context, kv ...string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		for i := 0; i+1 < len(kv); i += 2 {
			if _, err := tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, kv[i], kv[i+1]); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// source is a remembered root folder.
type source struct {
	ID   int64
	Root string
}

func (s *store) sources(ctx context.Context) ([]source, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, root FROM sources ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []source
	for rows.Next() {
		var src source
		if err := rows.Scan(&src.ID, &src.Root); err != nil {
			return nil, err
		}
		out = append(out, src)
	}
	return out, rows.Err()
}

func (s *store) addSource(ctx context.Context, root string) (source, error) {
	_, err := s.db.ExecContext(ctx, `INSERT INTO sources(root, added_at) VALUES(?, ?) ON CONFLICT(root) DO NOTHING`, root, time.Now().Unix())
	if err != nil {
		return source{}, err
	}
	src := source{Root: root}
	err = s.db.QueryRowContext(ctx, `SELECT id FROM sources WHERE root = ?`, root).Scan(&src.ID)
	return src, err
}

// docRow is what the index knows of a file from the last run.
type docRow struct {
	ID        int64
	Size      int64
	MTimeNS   int64
	Hash      string
	Status    string
	Reason    string
	Chunker   string
	IndexedAt int64 // unix nanoseconds
}

func (s *store) documents(ctx context.Context, sourceID int64) (map[string]docRow, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, path, size, mtime_ns, hash, status, reason, chunker, indexed_at FROM documents WHERE source_id = ?`, sourceID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]docRow{}
	for rows.Next() {
		var d docRow
		var p string
		if err := rows.Scan(&d.ID, &p, &d.Size, &d.MTimeNS, &d.Hash, &d.Status, &d.Reason, &d.Chunker, &d.IndexedAt); err != nil {
			return nil, err
		}
		out[p] = d
	}
	return out, rows.Err()
}

// missingHashes returns the hashes that have no stored vector yet.
func (s *store) missingHashes(ctx context.Context, hashes []string) (map[string]bool, error) {
	missing := make(map[string]bool, len(hashes))
	for _, h := range hashes {
		missing[h] = true
	}
	const batch = 500
	for i := 0; i < len(hashes); i += batch {
		part := hashes[i:min(i+batch, len(hashes))]
		q := `SELECT hash FROM vectors WHERE hash IN (?` + strings.Repeat(",?", len(part)-1) + `)`
		args := make([]any, len(part))
		for j, h := range part {
			args[j] = h
		}
		rows, err := s.db.QueryContext(ctx, q, args...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var h string
			if err := rows.Scan(&h); err != nil {
				rows.Close()
				return nil, err
			}
			delete(missing, h)
		}
		rows.Close()
	}
	return missing, nil
}

// putVectors stores embeddings by chunk hash, in a transaction of their own,
// so an interrupted run never pays for them twice. It returns the ids of
// the rows it inserted (0 where the hash was stored already).
func (s *store) putVectors(ctx context.Context, hashes []string, vecs [][]float32) ([]int64, error) {
	ids := make([]int64, len(hashes))
	err := s.tx(ctx, func(tx *sql.Tx) error {
		st, err := tx.PrepareContext(ctx, `INSERT INTO vectors(hash, vec) VALUES(?, ?) ON CONFLICT(hash) DO NOTHING RETURNING id`)
		if err != nil {
			return err
		}
		defer st.Close()
		for i, h := range hashes {
			err := st.QueryRowContext(ctx, h, encodeVector(vecs[i])).Scan(&ids[i])
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return err
			}
		}
		return nil
	})
	return ids, err
}

// fileUpdate is the new state of one document, written in one transaction
// with others.
type fileUpdate struct {
	SourceID int64
	Path     string
	Size     int64
	MTimeNS  int64
	Hash     string
	Status   string
	Reason   string
	Chunker  string
	Pieces   []piece
}

// writeFiles replaces the chunks of each file. Readers see a file either
// before or after, never half-written.
func (s *store) writeFiles(ctx context.Context, files []fileUpdate) error {
	now := time.Now().UnixNano()
	return s.tx(ctx, func(tx *sql.Tx) error {
		upsert, err := tx.PrepareContext(ctx, `INSERT INTO documents(source_id, path, size, mtime_ns, hash, status, reason, chunker, indexed_at)
			VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT(source_id, path) DO UPDATE SET size = excluded.size, mtime_ns = excluded.mtime_ns, hash = excluded.hash,
				status = excluded.status, reason = excluded.reason, chunker = excluded.chunker, indexed_at = excluded.indexed_at
			RETURNING id`)
		if err != nil {
			return err
		}
		defer upsert.Close()
		delFTS, err := tx.PrepareContext(ctx, `DELETE FROM chunks_fts WHERE rowid IN (SELECT id FROM chunks WHERE doc_id = ?)`)
		if err != nil {
			return err
		}
		defer delFTS.Close()
		delChunks, err := tx.PrepareContext(ctx, `DELETE FROM chunks WHERE doc_id = ?`)
		if err != nil {
			return err
		}
		defer delChunks.Close()
		insChunk, err := tx.PrepareContext(ctx, `INSERT INTO chunks(doc_id, ord, start_line, end_line, heading, kind, text, hash) VALUES(?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer insChunk.Close()
		insFTS, err := tx.PrepareContext(ctx, `INSERT INTO chunks_fts(rowid, path, heading, body, idents) VALUES(?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer insFTS.Close()
		for _, f := range files {
			var docID int64
			if err := upsert.QueryRowContext(ctx, f.SourceID, f.Path, f.Size, f.MTimeNS, f.Hash, f.Status, f.Reason, f.Chunker, now).Scan(&docID); err != nil {
				return fmt.Errorf("write %s: %w", f.Path, err)
			}
			if _, err := delFTS.ExecContext(ctx, docID); err != nil {
				return err
			}
			if _, err := delChunks.ExecContext(ctx, docID); err != nil {
				return err
			}
			for i, p := range f.Pieces {
				res, err := insChunk.ExecContext(ctx, docID, i, p.Start, p.End, p.Heading, p.Kind, p.Text, pieceHash(p))
				if err != nil {
					return err
				}
				id, _ := res.LastInsertId()
				cols := LexicalColumns(f.Path, p.Heading, p.Text)
				if _, err := insFTS.ExecContext(ctx, id, cols[0], cols[1], cols[2], cols[3]); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// removeDocuments deletes documents with their chunks and FTS rows.
func (s *store) removeDocuments(ctx context.Context, ids []int64) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		for _, id := range ids {
			if _, err := tx.ExecContext(ctx, `DELETE FROM chunks_fts WHERE rowid IN (SELECT id FROM chunks WHERE doc_id = ?)`, id); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM documents WHERE id = ?`, id); err != nil {
				return err
			}
		}
		return nil
	})
}

// gcVectors drops vectors no chunk refers to any more. Only call it at the
// end of a complete run: an interrupted run's vectors are what the next run
// resumes from.
func (s *store) gcVectors(ctx context.Context) (int64, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM vectors WHERE NOT EXISTS (SELECT 1 FROM chunks WHERE chunks.hash = vectors.hash)`)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func decodeVector(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// identifiers lists the compound identifiers of a text (OLLAMA_HOST,
// exec.LookPath, --keep-alive, net/http) squashed into single lowercase
// words. The tokenizer splits these at punctuation; the squashed copy lets a
// query for the identifier match it exactly and outrank the loose parts.
// A hand-written scanner: the equivalent regexp was a third of index time.
func identifiers(text string) string {
	seen := map[string]bool{}
	var out []string
	for i := 0; i < len(text); {
		start := i
		flag := false
		if strings.HasPrefix(text[i:], "--") && i+2 < len(text) && isAlpha(text[i+2]) && (i == 0 || !isWord(text[i-1])) {
			flag = true
			i += 2
		} else if !isWord(text[i]) || (i > 0 && isWord(text[i-1])) {
			i++
			continue
		}
		compound := false
		for i < len(text) {
			if isWord(text[i]) {
				if text[i] == '_' && i > start {
					compound = true
				}
				i++
				continue
			}
			n := separatorLen(text[i:])
			if n > 0 && i+n < len(text) && isWord(text[i+n]) {
				compound = true
				i += n
				continue
			}
			break
		}
		if compound || flag {
			if w := squash(text[start:i]); len(w) > 2 && !seen[w] {
				seen[w] = true
				out = append(out, w)
			}
		}
		if i == start {
			i++
		}
	}
	return strings.Join(out, " ")
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isWord(c byte) bool { return isAlpha(c) || c >= '0' && c <= '9' || c == '_' }

// separatorLen is the length of an identifier separator at the start of s.
func separatorLen(s string) int {
	switch {
	case strings.HasPrefix(s, "::"), strings.HasPrefix(s, "->"):
		return 2
	case s[0] == '.' || s[0] == '/' || s[0] == '-':
		return 1
	}
	return 0
}

// squash lowercases s and keeps only letters and digits.
func squash(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127 {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// touchFiles refreshes the stat info of documents whose content did not change.
func (s *store) touchFiles(ctx context.Context, files []fileUpdate) error {
	if len(files) == 0 {
		return nil
	}
	now := time.Now().UnixNano()
	return s.tx(ctx, func(tx *sql.Tx) error {
		for _, f := range files {
			if _, err := tx.ExecContext(ctx, `UPDATE documents SET size = ?, mtime_ns = ?, indexed_at = ? WHERE source_id = ? AND path = ?`,
				f.Size, f.MTimeNS, now, f.SourceID, f.Path); err != nil {
				return err
			}
		}
		return nil
	})
}
