package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"

	"lore/index/bm25"
)

// Hit is a chunk found by a search.
type Hit struct {
	ChunkID int64
	Source  string // the folder Path is relative to: the source root, or a file source's folder
	Path    string // relative to Source
	Start   int
	End     int
	Heading string
	Kind    string
	Text    string
	Score   float64 // higher is better: the fused RRF score
	// LexicalRank and VectorRank are the chunk's 1-based ranks in each
	// retriever's candidates; 0 when it was not among them.
	LexicalRank int
	VectorRank  int
}

// The keyword index is a log of segments. Each transaction that writes
// chunks adds one segment: for every term of those chunks, a row of
// postings (package bm25's encoding). Chunk ids only grow (AUTOINCREMENT),
// and segments are only ever merged as a run of the newest, so reading a
// term's rows in segment order yields its postings in id order. A chunk
// that is replaced or removed is listed in lex_deleted until a merge drops
// its postings; until then it still counts in its terms' document
// frequency, as in Lucene. lex_stats holds the live chunk count and their
// total length, for idf and BM25's average length, and a version that
// tells a reader its cached deleted set is stale.
const lexicalSchema = `
CREATE TABLE IF NOT EXISTS lex_segments(id INTEGER PRIMARY KEY, lo INTEGER NOT NULL, hi INTEGER NOT NULL, postings INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS lex_postings(term TEXT NOT NULL, seg INTEGER NOT NULL, df INTEGER NOT NULL, data BLOB NOT NULL, tfs BLOB NOT NULL, PRIMARY KEY(term, seg));
CREATE INDEX IF NOT EXISTS lex_postings_seg ON lex_postings(seg);
CREATE TABLE IF NOT EXISTS lex_deleted(id INTEGER PRIMARY KEY);
CREATE TABLE IF NOT EXISTS lex_stats(one INTEGER PRIMARY KEY CHECK(one = 1), docs INTEGER NOT NULL, len INTEGER NOT NULL, version INTEGER NOT NULL);
`

// bm25Params are the BM25 parameters of the keyword stage.
var bm25Params = bm25.DefaultParams

const (
	// mergeFanout segments of one size class are merged into one, so a
	// term is in O(log n) rows and each posting is rewritten O(log n) times.
	mergeFanout = 8
	// mergeUnit is the size class of the smallest segments, in postings.
	mergeUnit = 4096
)

// lexDoc is a chunk as the keyword index takes it.
type lexDoc struct {
	id  int64
	doc bm25.Doc
}

// lexWriter is the keyword side of one write transaction.
type lexWriter struct {
	tx          *sql.Tx
	added       []lexDoc
	docs, total int64 // changes to lex_stats
	deleted     bool
}

// drop records that the chunks of a document are going away: their
// postings are dead from now on, and they leave the stats.
func (w *lexWriter) drop(ctx context.Context, docID int64) error {
	var n, total int64
	if err := w.tx.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(lex_len), 0) FROM chunks WHERE doc_id = ?`, docID).Scan(&n, &total); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	if _, err := w.tx.ExecContext(ctx, `INSERT OR IGNORE INTO lex_deleted(id) SELECT id FROM chunks WHERE doc_id = ?`, docID); err != nil {
		return err
	}
	w.docs -= n
	w.total -= total
	w.deleted = true
	return nil
}

func (w *lexWriter) add(id int64, d bm25.Doc) {
	w.added = append(w.added, lexDoc{id, d})
	w.docs++
	w.total += int64(d.Len)
}

// commit writes the new segment and the stats, and merges what the
// fanout calls for; all inside the caller's transaction.
func (w *lexWriter) commit(ctx context.Context) error {
	if len(w.added) == 0 && !w.deleted {
		return nil
	}
	var docs, total int64
	if _, err := w.tx.ExecContext(ctx, `INSERT INTO lex_stats(one, docs, len, version) VALUES(1, ?, ?, 1)
		ON CONFLICT(one) DO UPDATE SET docs = docs + excluded.docs, len = len + excluded.len, version = version + 1`, w.docs, w.total); err != nil {
		return err
	}
	if err := w.tx.QueryRowContext(ctx, `SELECT docs, len FROM lex_stats`).Scan(&docs, &total); err != nil {
		return err
	}
	avgdl := float64(total) / math.Max(1, float64(docs))
	if len(w.added) > 0 {
		lists := map[string]*bm25.List{}
		for _, d := range w.added {
			for _, tf := range d.doc.Terms {
				l := lists[tf.Term]
				if l == nil {
					l = &bm25.List{}
					lists[tf.Term] = l
				}
				l.Add(d.id, tf.TF, bm25Params.Impact(float64(tf.TF), float64(d.doc.Len), avgdl))
			}
		}
		if err := writeSegment(ctx, w.tx, lists); err != nil {
			return err
		}
	}
	return mergeSegments(ctx, w.tx, docs, avgdl)
}

// writeSegment stores lists as a new segment, the newest.
func writeSegment(ctx context.Context, tx *sql.Tx, lists map[string]*bm25.List) error {
	if len(lists) == 0 {
		return nil
	}
	lo, hi, postings := int64(math.MaxInt64), int64(0), 0
	for _, l := range lists {
		lo, hi, postings = min(lo, l.IDs[0]), max(hi, l.IDs[len(l.IDs)-1]), postings+len(l.IDs)
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO lex_segments(id, lo, hi, postings) VALUES((SELECT coalesce(max(id), 0) + 1 FROM lex_segments), ?, ?, ?)`, lo, hi, postings)
	if err != nil {
		return err
	}
	seg, err := res.LastInsertId()
	if err != nil {
		return err
	}
	ins, err := tx.PrepareContext(ctx, `INSERT INTO lex_postings(term, seg, df, data, tfs) VALUES(?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer ins.Close()
	// Sorted, so the table's B-tree fills in order.
	terms := make([]string, 0, len(lists))
	for t := range lists {
		terms = append(terms, t)
	}
	sort.Strings(terms)
	for _, t := range terms {
		l := lists[t]
		data, tfs := l.Encode()
		if _, err := ins.ExecContext(ctx, t, seg, len(l.IDs), data, tfs); err != nil {
			return err
		}
	}
	return nil
}

type segment struct {
	id, lo, hi int64
	postings   int
}

func (s segment) class() int {
	return int(math.Log(float64(max(s.postings, mergeUnit))/mergeUnit) / math.Log(mergeFanout))
}

// mergeSegments merges the newest run of segments of one size class once
// it is mergeFanout long, and everything once a quarter of the chunks the
// postings name are dead.
func mergeSegments(ctx context.Context, tx *sql.Tx, docs int64, avgdl float64) error {
	for {
		segs, err := readSegments(ctx, tx)
		if err != nil || len(segs) < 2 {
			return err
		}
		var dead int64
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM lex_deleted`).Scan(&dead); err != nil {
			return err
		}
		if dead > 256 && dead*4 > docs+dead {
			return mergeRun(ctx, tx, segs, avgdl)
		}
		n := len(segs)
		i := n - 1
		for i > 0 && segs[i-1].class() == segs[n-1].class() {
			i--
		}
		if n-i < mergeFanout {
			return nil
		}
		if err := mergeRun(ctx, tx, segs[i:], avgdl); err != nil {
			return err
		}
	}
}

func readSegments(ctx context.Context, tx *sql.Tx) ([]segment, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, lo, hi, postings FROM lex_segments ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var segs []segment
	for rows.Next() {
		var s segment
		if err := rows.Scan(&s.id, &s.lo, &s.hi, &s.postings); err != nil {
			return nil, err
		}
		segs = append(segs, s)
	}
	return segs, rows.Err()
}

// mergeRun replaces a run of the newest segments by one: the postings of
// dead chunks dropped, every impact recomputed with today's average length
// (a first build's early segments saw only its first files).
func mergeRun(ctx context.Context, tx *sql.Tx, run []segment, avgdl float64) error {
	first, last := run[0], run[len(run)-1]
	lo, hi := first.lo, last.hi
	for _, s := range run {
		lo, hi = min(lo, s.lo), max(hi, s.hi)
	}
	// The live chunks of the run and their lengths: a chunk missing here
	// was replaced or removed.
	lens := map[int64]float64{}
	rows, err := tx.QueryContext(ctx, `SELECT id, lex_len FROM chunks WHERE id BETWEEN ? AND ?`, lo, hi)
	if err != nil {
		return err
	}
	for rows.Next() {
		var id int64
		var n float64
		if err := rows.Scan(&id, &n); err != nil {
			rows.Close()
			return err
		}
		lens[id] = n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	lists := map[string]*bm25.List{}
	rows, err = tx.QueryContext(ctx, `SELECT term, df, data, tfs FROM lex_postings WHERE seg BETWEEN ? AND ? ORDER BY seg`, first.id, last.id)
	if err != nil {
		return err
	}
	for rows.Next() {
		var term string
		var df int
		var data, tfs []byte
		if err := rows.Scan(&term, &df, &data, &tfs); err != nil {
			rows.Close()
			return err
		}
		var in bm25.List
		if err := in.Decode(data, tfs, df); err != nil {
			rows.Close()
			return fmt.Errorf("%w: term %q: %v", errCorruptData, term, err)
		}
		out := lists[term]
		if out == nil {
			out = &bm25.List{}
		}
		for i, id := range in.IDs {
			if n, ok := lens[id]; ok {
				if len(out.IDs) > 0 && id <= out.IDs[len(out.IDs)-1] {
					rows.Close()
					return fmt.Errorf("%w: term %q: postings out of order", errCorruptData, term)
				}
				out.Add(id, in.TFs[i], bm25Params.Impact(float64(in.TFs[i]), n, avgdl))
			}
		}
		if len(out.IDs) > 0 {
			lists[term] = out
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, q := range []string{
		`DELETE FROM lex_postings WHERE seg BETWEEN ? AND ?`,
		`DELETE FROM lex_segments WHERE id BETWEEN ? AND ?`,
	} {
		if _, err := tx.ExecContext(ctx, q, first.id, last.id); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM lex_deleted WHERE id BETWEEN ? AND ?`, lo, hi); err != nil {
		return err
	}
	return writeSegment(ctx, tx, lists)
}

// lexicalState caches what every keyword search needs and rarely changes:
// the dead chunk ids, read again when lex_stats' version moves.
type lexicalState struct {
	lexMu      sync.Mutex
	lexVersion int64
	lexDead    map[int64]bool
}

// lexicalIDs returns chunk ids by BM25, best first.
func (ix *Index) lexicalIDs(ctx context.Context, query string, k int) ([]int64, error) {
	terms := bm25.Query(query)
	if len(terms) == 0 {
		return nil, nil
	}
	// One read transaction: the stats, the dead set and the postings all
	// from the same snapshot, whatever a build beside us commits.
	tx, err := ix.st.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("lexical search: %w", err)
	}
	defer tx.Rollback()
	var docs, version int64
	err = tx.QueryRowContext(ctx, `SELECT docs, version FROM lex_stats`).Scan(&docs, &version)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil // nothing written yet
	}
	if err != nil {
		return nil, fmt.Errorf("lexical search: %w", err)
	}
	dead, err := ix.deadChunks(ctx, tx, version)
	if err != nil {
		return nil, fmt.Errorf("lexical search: %w", err)
	}
	get, err := tx.PrepareContext(ctx, `SELECT df, data FROM lex_postings WHERE term = ? ORDER BY seg`)
	if err != nil {
		return nil, fmt.Errorf("lexical search: %w", err)
	}
	defer get.Close()
	var scored []*bm25.Term
	for _, term := range terms {
		t, err := readTerm(ctx, get, term)
		if err != nil {
			return nil, err
		}
		if len(t.List.IDs) > 0 {
			t.Weight = bm25Params.Weight(int(docs), len(t.List.IDs))
			scored = append(scored, t)
		}
	}
	var skip func(int64) bool
	if len(dead) > 0 {
		skip = func(id int64) bool { return dead[id] }
	}
	hits := bm25.TopK(scored, k, skip)
	ids := make([]int64, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	return ids, nil
}

// readTerm reads a term's postings from every segment, in id order.
func readTerm(ctx context.Context, get *sql.Stmt, term string) (*bm25.Term, error) {
	rows, err := get.QueryContext(ctx, term)
	if err != nil {
		return nil, fmt.Errorf("lexical search: %w", err)
	}
	defer rows.Close()
	t := &bm25.Term{}
	for rows.Next() {
		var df int
		var data []byte
		if err := rows.Scan(&df, &data); err != nil {
			return nil, err
		}
		if err := t.List.Decode(data, nil, df); err != nil {
			return nil, fmt.Errorf("%w: term %q: %v", errCorruptData, term, err)
		}
	}
	return t, rows.Err()
}

func (ix *Index) deadChunks(ctx context.Context, tx *sql.Tx, version int64) (map[int64]bool, error) {
	ix.lexMu.Lock()
	defer ix.lexMu.Unlock()
	if ix.lexDead != nil && ix.lexVersion == version {
		return ix.lexDead, nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT id FROM lex_deleted`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	dead := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		dead[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	ix.lexDead, ix.lexVersion = dead, version
	return dead, nil
}

// LexicalTerms are the terms the keyword stage searches for a query, as
// its postings name them. Exported so that bench/lexical measures other
// keyword engines on exactly lore's terms.
func LexicalTerms(query string) []string { return slices.Clone(bm25.Query(query)) }
