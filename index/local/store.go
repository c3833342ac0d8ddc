package local

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/analysis"
	"github.com/lore-cli/lore/index/ingest"
)

// schemaVersion changes when the tables or the terms they hold change (3:
// the analyser's stopwords, contractions and single digits; 4: the body's
// length normalisation b 0.5 → 0.75, baked into every posting's impact;
// 5: the parts of camelCase identifiers, PartPrefix postings).
// `lore index` upgrades an
// index of format 1 in place (see migrateV1); anything else is rebuilt.
const schemaVersion = "5"

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
` + chunksTable + `
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id);
CREATE INDEX IF NOT EXISTS chunks_hash ON chunks(hash);
`

// chunksTable is apart for migrateV1, which rebuilds the table.
const chunksTable = `
CREATE TABLE IF NOT EXISTS chunks(
	id INTEGER PRIMARY KEY AUTOINCREMENT, -- never reused: a segment of the keyword index may name a removed id
	doc_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
	ord INTEGER NOT NULL,
	start_line INTEGER NOT NULL,
	end_line INTEGER NOT NULL,
	heading TEXT NOT NULL,
	kind TEXT NOT NULL,
	text TEXT NOT NULL,
	hash TEXT NOT NULL,
	lex_body INTEGER NOT NULL DEFAULT 0,  -- words in the body, for BM25F
	lex_idents INTEGER NOT NULL DEFAULT 0 -- squashed identifiers
);
`

// database is the SQLite side of an index: documents, chunks, the keyword
// index and the vectors. One writer at a time (the index lock sees to that);
// any number of readers, thanks to WAL.
type database struct {
	db *sql.DB
}

func openStore(path string) (*database, error) { return openDB(path, "") }

// openKeywordReader is a connection pool of its own for keyword searches,
// whose reads are memory-mapped: they read posting lists all over the
// file, and through read() a third of their time was system calls. Only
// they map: mapped pages count in a process's resident memory, and a
// build, a quick_check or a graph rebuild reads every page.
func openKeywordReader(path string) (*database, error) {
	return openDB(path, "&_pragma=mmap_size(1073741824)")
}

func openDB(path, pragmas string) (*database, error) {
	dsn := "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=busy_timeout(10000)&_pragma=foreign_keys(ON)" + pragmas
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open index database: %w", err)
	}
	db.SetMaxOpenConns(4)
	if _, err := db.Exec(schema + lexicalSchema); err != nil {
		db.Close()
		return nil, fmt.Errorf("open index database %s: %w", path, err)
	}
	return &database{db: db}, nil
}

func (s *database) Close() error { return s.db.Close() }

func (s *database) meta(ctx context.Context, key string) (string, error) {
	var v string
	err := s.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, err
}

func (s *database) setMeta(ctx context.Context, kv ...string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		for i := 0; i+1 < len(kv); i += 2 {
			if _, err := tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, kv[i], kv[i+1]); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *database) tx(ctx context.Context, fn func(*sql.Tx) error) error {
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

func (s *database) sources(ctx context.Context) ([]index.Source, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, root FROM sources ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []index.Source
	for rows.Next() {
		var src index.Source
		if err := rows.Scan(&src.ID, &src.Root); err != nil {
			return nil, err
		}
		out = append(out, src)
	}
	return out, rows.Err()
}

func (s *database) addSource(ctx context.Context, root string) (index.Source, error) {
	_, err := s.db.ExecContext(ctx, `INSERT INTO sources(root, added_at) VALUES(?, ?) ON CONFLICT(root) DO NOTHING`, root, time.Now().Unix())
	if err != nil {
		return index.Source{}, err
	}
	src := index.Source{Root: root}
	err = s.db.QueryRowContext(ctx, `SELECT id FROM sources WHERE root = ?`, root).Scan(&src.ID)
	return src, err
}

// DocState is what the index knows of a file from the last run.

func (s *database) documents(ctx context.Context, sourceID int64) (map[string]index.DocState, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, path, size, mtime_ns, hash, status, reason, chunker, indexed_at FROM documents WHERE source_id = ?`, sourceID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]index.DocState{}
	for rows.Next() {
		var d index.DocState
		var p string
		if err := rows.Scan(&d.ID, &p, &d.Size, &d.MTimeNS, &d.Hash, &d.Status, &d.Reason, &d.Chunker, &d.IndexedAt); err != nil {
			return nil, err
		}
		out[p] = d
	}
	return out, rows.Err()
}

// missingHashes returns the hashes that have no stored vector yet.
func (s *database) missingHashes(ctx context.Context, hashes []string) (map[string]bool, error) {
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

// pendingVectors lists the documents of a source holding a chunk that has
// no vector (written while the embedder was down).
func (s *database) pendingVectors(ctx context.Context, sourceID int64) (map[string]bool, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT d.path FROM chunks c JOIN documents d ON d.id = c.doc_id
		WHERE d.source_id = ? AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.hash = c.hash)`, sourceID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, err
		}
		out[p] = true
	}
	return out, rows.Err()
}

// putVectors stores embeddings by chunk hash, in a transaction of their own,
// so an interrupted run never pays for them twice. It returns the ids of
// the rows it inserted (0 where the hash was stored already).
func (s *database) putVectors(ctx context.Context, hashes []string, vecs [][]float32) ([]int64, error) {
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

// writeFiles replaces the chunks of each file. Readers see a file either
// before or after, never half-written. The replaced chunks leave the
// keyword index in the same transaction; the new ones are returned, for
// the caller to write as a segment with others (writeKeywords).
func (s *database) writeFiles(ctx context.Context, files []index.FileUpdate) ([]lexDoc, error) {
	now := time.Now().UnixNano()
	var added []lexDoc
	err := s.tx(ctx, func(tx *sql.Tx) error {
		added = added[:0]
		upsert, err := tx.PrepareContext(ctx, `INSERT INTO documents(source_id, path, size, mtime_ns, hash, status, reason, chunker, indexed_at)
			VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT(source_id, path) DO UPDATE SET size = excluded.size, mtime_ns = excluded.mtime_ns, hash = excluded.hash,
				status = excluded.status, reason = excluded.reason, chunker = excluded.chunker, indexed_at = excluded.indexed_at
			RETURNING id`)
		if err != nil {
			return err
		}
		defer upsert.Close()
		delChunks, err := tx.PrepareContext(ctx, `DELETE FROM chunks WHERE doc_id = ?`)
		if err != nil {
			return err
		}
		defer delChunks.Close()
		insChunk, err := tx.PrepareContext(ctx, `INSERT INTO chunks(doc_id, ord, start_line, end_line, heading, kind, text, hash, lex_body, lex_idents) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer insChunk.Close()
		lex := newLexWriter(tx)
		for _, f := range files {
			var docID int64
			if err := upsert.QueryRowContext(ctx, f.SourceID, f.Path, f.Size, f.MTimeNS, f.Hash, f.Status, f.Reason, f.Chunker, now).Scan(&docID); err != nil {
				return fmt.Errorf("write %s: %w", f.Path, err)
			}
			if err := lex.drop(ctx, docID); err != nil {
				return err
			}
			if _, err := delChunks.ExecContext(ctx, docID); err != nil {
				return err
			}
			for i, p := range f.Chunks {
				d := analysedChunk(&f, i)
				res, err := insChunk.ExecContext(ctx, docID, i, p.Start, p.End, p.Heading, p.Kind, p.Text, p.Hash(), d.BodyLen, d.IdentsLen)
				if err != nil {
					return err
				}
				id, err := res.LastInsertId()
				if err != nil {
					return err
				}
				added = append(added, lexDoc{id, d})
			}
		}
		return lex.commit(ctx)
	})
	return added, err
}

// analysedChunk is chunk i analysed for the keyword index: by the loader that
// chunked it when it could (on a worker, beside the others), else here.
func analysedChunk(f *index.FileUpdate, i int) analysis.Doc {
	if docs, ok := f.Prepared.([]analysis.Doc); ok && i < len(docs) {
		return docs[i]
	}
	p := f.Chunks[i]
	return analysis.Analyze(analysis.Fields{Path: f.Path, Heading: p.Heading, Body: p.Text, Structured: ingest.Structured(f.Path)})
}

// prepare analyses f's chunks for the keyword index (Writer.Prepare).
func prepare(f *index.FileUpdate) {
	docs := make([]analysis.Doc, len(f.Chunks))
	for i, p := range f.Chunks {
		docs[i] = analysis.Analyze(analysis.Fields{Path: f.Path, Heading: p.Heading, Body: p.Text, Structured: ingest.Structured(f.Path)})
	}
	f.Prepared = docs
}

// removeDocuments deletes documents with their chunks.
func (s *database) removeDocuments(ctx context.Context, ids []int64) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		lex := newLexWriter(tx)
		for _, id := range ids {
			if err := lex.drop(ctx, id); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM documents WHERE id = ?`, id); err != nil {
				return err
			}
		}
		return lex.commit(ctx)
	})
}

// gcVectors drops vectors no chunk refers to any more. Only call it at the
// end of a complete run: an interrupted run's vectors are what the next run
// resumes from.
func (s *database) gcVectors(ctx context.Context) (int64, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM vectors WHERE NOT EXISTS (SELECT 1 FROM chunks WHERE chunks.hash = vectors.hash)`)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// gcHashes is gcVectors over the vectors of the given hashes only: a
// live-sync batch knows what it may have left unused.
func (s *database) gcHashes(ctx context.Context, hashes []string) (int64, error) {
	if len(hashes) == 0 {
		return 0, nil
	}
	slices.Sort(hashes)
	hashes = slices.Compact(hashes)
	var gone int64
	err := s.tx(ctx, func(tx *sql.Tx) error {
		gone = 0
		st, err := tx.PrepareContext(ctx, `DELETE FROM vectors WHERE hash = ?1 AND NOT EXISTS (SELECT 1 FROM chunks WHERE chunks.hash = ?1)`)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, h := range hashes {
			res, err := st.ExecContext(ctx, h)
			if err != nil {
				return err
			}
			n, err := res.RowsAffected()
			if err != nil {
				return err
			}
			gone += n
		}
		return nil
	})
	return gone, err
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

// touchFiles refreshes the stat info of documents whose content did not change.
func (s *database) touchFiles(ctx context.Context, files []index.FileUpdate) error {
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
