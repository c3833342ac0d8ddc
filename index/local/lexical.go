package local

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/lore-cli/lore/index/analysis"
	"github.com/lore-cli/lore/index/bm25"
)

// The keyword index is a log of segments. A segment holds, for every term
// of its chunks, a row of postings (package bm25's encoding). A build
// writes a segment every segmentChunks chunks and at its end. Chunk ids
// only grow (AUTOINCREMENT), and segments are only ever merged as a run of
// the newest, so reading a term's rows in segment order yields its
// postings in id order.
//
// A chunk that is replaced or removed is listed in lex_deleted until a
// merge drops its postings; until then it still counts in its terms'
// document frequency, as in Lucene. Impacts are computed with the average
// field lengths of when their segment was written, and merges carry them
// over: a first build's early segments saw only its first files, but a
// chunk's length against the average moves its impact by a few percent at
// most. lex_stats holds the count of live chunks in segments and their
// total field lengths (for idf and BM25F's averages), the highest chunk id
// in a segment, and a version that tells a reader its cached segment list
// and deleted set are stale.
//
// Rows are keyed by term, then segment: a search reads a term's rows in
// all segments with one seek, where keyed by segment it paid a seek per
// term and segment, and live sync makes segments many (a seek was a
// twentieth of a 100k search). lex_postings_seg, made by the writer
// (upgradeKeywords), finds a segment's rows for merges.
const lexicalSchema = `
CREATE TABLE IF NOT EXISTS lex_segments(id INTEGER PRIMARY KEY, lo INTEGER NOT NULL, hi INTEGER NOT NULL, postings INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS lex_postings(term TEXT NOT NULL, seg INTEGER NOT NULL, df INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY(term, seg)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS lex_deleted(id INTEGER PRIMARY KEY);
CREATE TABLE IF NOT EXISTS lex_stats(one INTEGER PRIMARY KEY CHECK(one = 1), docs INTEGER NOT NULL, body INTEGER NOT NULL, idents INTEGER NOT NULL,
	covered INTEGER NOT NULL, version INTEGER NOT NULL);
`

// bm25Params are the BM25 parameters of the keyword stage.
var bm25Params = bm25.DefaultParams

const (
	// mergeFanout segments of one size class are merged into one, so a
	// term is in O(log n) rows and each posting is rewritten O(log n) times.
	mergeFanout = 8
	// mergeUnit is the size class of the smallest segments, in postings.
	mergeUnit = 4096
	// mergeMax bounds the postings one merge rewrites, about 0.3 µs each:
	// a live-sync save must not rewrite a large index (a 100k-chunk one
	// holds ten million), so segments this large are only purged, alone,
	// and a save does at most one such merge.
	mergeMax = 1 << 20
	// purgeShare is the share of a segment's chunks that are dead when it
	// is rewritten without them: a dead posting is decoded and dropped by
	// every search that reads its term.
	purgeShare = 0.1
)

// lexDoc is a chunk as the keyword index takes it.
type lexDoc struct {
	id  int64
	doc analysis.Doc
}

// segmentChunks is how many chunks a build gathers before it writes them
// as a segment: one row per term per segment is what writing costs, so a
// segment per write transaction (512 chunks) made a build 3× slower, and
// 8192 still spent a fifth of a 100k build merging.
// Until then the chunks are in the index but not yet found by keyword; a
// build that dies in between leaves them to the next, which catches up
// (catchUpKeywords) before anything else.
const segmentChunks = 16384

// lexWriter is the keyword side of one write transaction.
type lexWriter struct {
	tx                 *sql.Tx
	added              *bm25.Pending
	docs, body, idents int64 // changes to lex_stats
	covered            int64 // the highest chunk id in a segment; -1 until read
	deleted            bool
}

func newLexWriter(tx *sql.Tx) *lexWriter {
	return &lexWriter{tx: tx, added: bm25.NewPending(), covered: -1}
}

// drop records that the chunks of a document are going away: those already
// in a segment are dead from now on, and leave the stats.
func (w *lexWriter) drop(ctx context.Context, docID int64) error {
	if w.covered < 0 {
		err := w.tx.QueryRowContext(ctx, `SELECT covered FROM lex_stats`).Scan(&w.covered)
		if errors.Is(err, sql.ErrNoRows) {
			w.covered = 0
		} else if err != nil {
			return err
		}
	}
	var n, body, idents int64
	if err := w.tx.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(lex_body), 0), coalesce(sum(lex_idents), 0) FROM chunks WHERE doc_id = ? AND id <= ?`,
		docID, w.covered).Scan(&n, &body, &idents); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	if _, err := w.tx.ExecContext(ctx, `INSERT OR IGNORE INTO lex_deleted(id) SELECT id FROM chunks WHERE doc_id = ? AND id <= ?`, docID, w.covered); err != nil {
		return err
	}
	w.docs -= n
	w.body -= body
	w.idents -= idents
	w.deleted = true
	return nil
}

// add takes pending chunks: their stats, and their postings to write.
func (w *lexWriter) add(p *bm25.Pending, body, idents int64) {
	w.added = p
	w.docs += int64(p.Len())
	w.body += body
	w.idents += idents
}

// commit writes the added chunks as a new segment, and the stats, and
// merges what the fanout calls for; all inside the caller's transaction.
func (w *lexWriter) commit(ctx context.Context) error {
	if w.added.Len() == 0 && !w.deleted {
		return nil
	}
	if _, err := w.tx.ExecContext(ctx, `INSERT INTO lex_stats(one, docs, body, idents, covered, version) VALUES(1, ?, ?, ?, ?, 1)
		ON CONFLICT(one) DO UPDATE SET docs = docs + excluded.docs, body = body + excluded.body, idents = idents + excluded.idents,
			covered = max(covered, excluded.covered), version = version + 1`, w.docs, w.body, w.idents, w.added.Last()); err != nil {
		return err
	}
	var docs, body, idents float64
	if err := w.tx.QueryRowContext(ctx, `SELECT docs, body, idents FROM lex_stats`).Scan(&docs, &body, &idents); err != nil {
		return err
	}
	avg := bm25.Averages{Body: body / max(1, docs), Idents: idents / max(1, docs)}
	if w.added.Len() > 0 {
		sw, err := newSegmentWriter(ctx, w.tx)
		if err != nil {
			return err
		}
		if err := w.added.Each(bm25Params, avg, sw.add); err != nil {
			return err
		}
		if err := sw.close(); err != nil {
			return err
		}
	}
	return mergeSegments(ctx, w.tx)
}

// keywordBuffer gathers the chunks a build writes until they make a
// segment.
type keywordBuffer struct {
	pending      *bm25.Pending
	body, idents int64
}

func newKeywordBuffer() *keywordBuffer { return &keywordBuffer{pending: bm25.NewPending()} }

func (k *keywordBuffer) add(docs []lexDoc) {
	for _, d := range docs {
		k.pending.Add(d.id, d.doc)
		k.body += int64(d.doc.BodyLen)
		k.idents += int64(d.doc.IdentsLen)
	}
}

// writeKeywords writes the buffered chunks as a segment and empties k.
func (s *database) writeKeywords(ctx context.Context, k *keywordBuffer) error {
	if k.pending.Len() == 0 {
		return nil
	}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		w := newLexWriter(tx)
		w.add(k.pending, k.body, k.idents)
		return w.commit(ctx)
	})
	if err == nil {
		*k = *newKeywordBuffer()
	}
	return err
}

// compact merges the segments written since segment after (exclusive)
// into one, when there are several and they fit mergeMax: a search reads
// a row per term and segment. A large build's segments stay apart (seven
// at 100k chunks), each small enough to purge of dead chunks later.
func (s *database) compact(ctx context.Context, after int64) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		segs, err := readSegments(ctx, tx)
		if err != nil {
			return err
		}
		i := len(segs)
		for i > 0 && segs[i-1].id > after {
			i--
		}
		total := 0
		for _, sg := range segs[i:] {
			total += sg.postings
		}
		if len(segs)-i < 2 || total > mergeMax {
			return nil
		}
		return mergeRun(ctx, tx, segs[i:])
	})
}

// lastSegment is the newest segment's id, 0 when there is none.
func (s *database) lastSegment(ctx context.Context) (int64, error) {
	var id int64
	err := s.db.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM lex_segments`).Scan(&id)
	return id, err
}

// catchUpKeywords writes the segments of the chunks no segment holds yet:
// those of a build that was interrupted, or all of them after an upgrade.
func (s *database) catchUpKeywords(ctx context.Context) error {
	if err := s.upgradeKeywords(ctx); err != nil {
		return err
	}
	var covered int64
	err := s.db.QueryRowContext(ctx, `SELECT covered FROM lex_stats`).Scan(&covered)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	for {
		rows, err := s.db.QueryContext(ctx, `SELECT c.id, d.path, c.heading, c.text FROM chunks c JOIN documents d ON d.id = c.doc_id
			WHERE c.id > ? ORDER BY c.id LIMIT ?`, covered, segmentChunks)
		if err != nil {
			return err
		}
		k := newKeywordBuffer()
		for rows.Next() {
			var d lexDoc
			var f analysis.Fields
			if err := rows.Scan(&d.id, &f.Path, &f.Heading, &f.Body); err != nil {
				rows.Close()
				return err
			}
			d.doc = analysis.Analyze(f)
			k.add([]lexDoc{d})
		}
		rows.Close()
		if err := rows.Err(); err != nil || k.pending.Len() == 0 {
			return err
		}
		covered = k.pending.Last()
		if err := s.writeKeywords(ctx, k); err != nil {
			return err
		}
	}
}

// termMajor reports whether lex_postings is keyed by term first: those
// written before were keyed by segment, and stay so until a writer opens
// them (upgradeKeywords); a reader asks the other way round of them.
func termMajor(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (bool, error) {
	var ddl string
	err := q.QueryRowContext(ctx, `SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'lex_postings'`).Scan(&ddl)
	return strings.Contains(ddl, "PRIMARY KEY(term, seg)"), err
}

// upgradeKeywords rewrites postings keyed by segment into the term-first
// table, once (a few seconds at 100k chunks), and makes the index by
// segment that merges read.
func (s *database) upgradeKeywords(ctx context.Context) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		ok, err := termMajor(ctx, tx)
		if err != nil {
			return err
		}
		if !ok {
			for _, q := range []string{
				`ALTER TABLE lex_postings RENAME TO lex_postings_by_seg`,
				lexicalSchema,
				`INSERT INTO lex_postings(term, seg, df, data) SELECT term, seg, df, data FROM lex_postings_by_seg ORDER BY term, seg`,
				`DROP TABLE lex_postings_by_seg`,
			} {
				if _, err := tx.ExecContext(ctx, q); err != nil {
					return fmt.Errorf("upgrade keyword index: %w", err)
				}
			}
		}
		_, err = tx.ExecContext(ctx, `CREATE INDEX IF NOT EXISTS lex_postings_seg ON lex_postings(seg)`)
		return err
	})
}

// segmentWriter writes a new segment a term at a time, in term order, so
// the table's B-tree fills in order, and many rows to a statement: a call
// per row was most of the cost of writing.
type segmentWriter struct {
	ctx         context.Context
	tx          *sql.Tx
	seg, lo, hi int64
	postings    int
	args        []any
	full        *sql.Stmt
}

const rowsPerInsert = 128

func newSegmentWriter(ctx context.Context, tx *sql.Tx) (*segmentWriter, error) {
	w := &segmentWriter{ctx: ctx, tx: tx, lo: math.MaxInt64}
	err := tx.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) + 1 FROM lex_segments`).Scan(&w.seg)
	return w, err
}

func (w *segmentWriter) add(term string, l *bm25.List) error {
	if len(l.IDs) == 0 {
		return nil
	}
	w.lo, w.hi, w.postings = min(w.lo, l.IDs[0]), max(w.hi, l.IDs[len(l.IDs)-1]), w.postings+len(l.IDs)
	w.args = append(w.args, term, w.seg, len(l.IDs), l.Encode())
	if len(w.args) == 4*rowsPerInsert {
		return w.flush()
	}
	return nil
}

func (w *segmentWriter) flush() error {
	n := len(w.args) / 4
	if n == 0 {
		return nil
	}
	q := `INSERT INTO lex_postings(term, seg, df, data) VALUES(?, ?, ?, ?)` + strings.Repeat(`, (?, ?, ?, ?)`, n-1)
	stmt := w.full
	if stmt == nil || n < rowsPerInsert {
		var err error
		if stmt, err = w.tx.PrepareContext(w.ctx, q); err != nil {
			return err
		}
		if n == rowsPerInsert {
			w.full = stmt
		} else {
			defer stmt.Close()
		}
	}
	_, err := stmt.ExecContext(w.ctx, w.args...)
	w.args = w.args[:0]
	return err
}

// close writes what is left and records the segment, if it holds any.
func (w *segmentWriter) close() error {
	err := w.flush()
	if w.full != nil {
		w.full.Close()
	}
	if err != nil || w.postings == 0 {
		return err
	}
	_, err = w.tx.ExecContext(w.ctx, `INSERT INTO lex_segments(id, lo, hi, postings) VALUES(?, ?, ?, ?)`, w.seg, w.lo, w.hi, w.postings)
	return err
}

type segment struct {
	id, lo, hi int64
	postings   int
}

func (s segment) class() int {
	return int(math.Log(float64(max(s.postings, mergeUnit))/mergeUnit) / math.Log(mergeFanout))
}

// mergeSegments keeps the segments few and their dead postings few, and
// what it rewrites in one call small (mergeMax), so that a live-sync save
// costs the same in a large index as in a small one:
//
//   - the newest run of segments of one size class is merged once it is
//     mergeFanout long, so there are O(log n) segments below mergeMax;
//     of a run too large to merge whole, its newest segments that fit;
//   - then the segment with the largest share of dead chunks, once it is
//     purgeShare or more, is rewritten without them: one per call.
//
// Merges also drop the dead postings of the segments they take.
func mergeSegments(ctx context.Context, tx *sql.Tx) error {
	for {
		segs, err := readSegments(ctx, tx)
		if err != nil || len(segs) == 0 {
			return err
		}
		n := len(segs)
		i := n - 1
		for i > 0 && segs[i-1].class() == segs[n-1].class() {
			i--
		}
		if n-i < mergeFanout {
			break
		}
		total, j := segs[n-1].postings, n-1
		for j > i && total+segs[j-1].postings <= mergeMax {
			j--
			total += segs[j].postings
		}
		if n-j < 2 {
			break
		}
		if err := mergeRun(ctx, tx, segs[j:]); err != nil {
			return err
		}
	}
	return purgeOne(ctx, tx)
}

// purgeOne rewrites the segment with the largest share of dead chunks
// without them, once that share is purgeShare.
func purgeOne(ctx context.Context, tx *sql.Tx) error {
	segs, err := readSegments(ctx, tx)
	if err != nil {
		return err
	}
	best, share := -1, purgeShare
	for i, sg := range segs {
		var dead int64
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM lex_deleted WHERE id BETWEEN ? AND ?`, sg.lo, sg.hi).Scan(&dead); err != nil {
			return err
		}
		// Chunk ids only grow and a segment holds all those in its
		// range, so the range is how many chunks it was written with.
		if f := float64(dead) / float64(sg.hi-sg.lo+1); dead > 0 && f >= share {
			best, share = i, f
		}
	}
	if best < 0 {
		return nil
	}
	if err := mergeRun(ctx, tx, segs[best:best+1]); err != nil || best == len(segs)-1 {
		return err
	}
	// The rewrite is the newest segment now, if any of it lived; it goes
	// back in its place, or a term's postings would not be read in id
	// order.
	id := segs[len(segs)-1].id + 1
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM lex_segments WHERE id = ?`, id).Scan(&n); err != nil || n == 0 {
		return err
	}
	for _, q := range []string{`UPDATE lex_postings SET seg = ? WHERE seg = ?`, `UPDATE lex_segments SET id = ? WHERE id = ?`} {
		if _, err := tx.ExecContext(ctx, q, segs[best].id, id); err != nil {
			return err
		}
	}
	return nil
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

// mergeRun replaces a run of segments by one, the newest, without the
// postings of dead chunks. It holds one term's postings at a time: SQLite
// sorts the run's rows by term (spilling to disk as it needs), so a merge
// of a million chunks' postings does not need their size in memory.
func mergeRun(ctx context.Context, tx *sql.Tx, run []segment) error {
	first, last := run[0], run[len(run)-1]
	lo, hi := first.lo, last.hi
	for _, s := range run {
		lo, hi = min(lo, s.lo), max(hi, s.hi)
	}
	ids, err := queryIDs(ctx, tx, `SELECT id FROM lex_deleted WHERE id BETWEEN ? AND ?`, lo, hi)
	if err != nil {
		return err
	}
	dead := make(map[int64]bool, len(ids))
	for _, id := range ids {
		dead[id] = true
	}
	w, err := newSegmentWriter(ctx, tx)
	if err != nil {
		return err
	}
	// The sort makes SQLite read every row before it returns the first,
	// so the writer's inserts cannot meet the rows being read.
	rows, err := tx.QueryContext(ctx, `SELECT term, df, data FROM lex_postings WHERE seg BETWEEN ? AND ? ORDER BY term, seg`, first.id, last.id)
	if err != nil {
		return err
	}
	defer rows.Close()
	var cur string
	var out bm25.List
	for rows.Next() {
		var term string
		var df int
		var data []byte
		if err := rows.Scan(&term, &df, &data); err != nil {
			return err
		}
		if term != cur {
			if err := w.add(cur, &out); err != nil {
				return err
			}
			cur, out = term, bm25.List{}
		}
		var in bm25.List
		if err := in.Decode(data, df); err != nil {
			return fmt.Errorf("%w: term %q: %v", errCorruptData, term, err)
		}
		for i, id := range in.IDs {
			if dead[id] {
				continue
			}
			if len(out.IDs) > 0 && id <= out.IDs[len(out.IDs)-1] {
				return fmt.Errorf("%w: term %q: postings out of order", errCorruptData, term)
			}
			out.Add(id, in.Impacts[i])
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows.Close()
	if err := w.add(cur, &out); err != nil {
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
	// A reader's cached segments and dead ids are stale now, also after
	// compact, which writes nothing else.
	if _, err := tx.ExecContext(ctx, `UPDATE lex_stats SET version = version + 1`); err != nil {
		return err
	}
	return w.close()
}

// lexicalState caches what every keyword search needs and only a write
// changes: the segments and the dead chunk ids, read again when lex_stats'
// version moves.
type lexicalState struct {
	lexMu      sync.Mutex
	lexVersion int64
	lexSegs    []int64
	lexDead    []int64 // ascending
	lexByTerm  bool    // termMajor
}

// lexicalIDs returns the k best chunk ids by BM25F, their top
// bm25.ProximityDepth re-ranked by proximity when asked, best first.
func (ix *Index) lexicalIDs(ctx context.Context, query string, k int, proximity bool) ([]int64, error) {
	ids, _, _, err := ix.lexical(ctx, query, k, proximity)
	return ids, err
}

// lexical is lexicalIDs with each chunk's Coverage of the query, and the
// share of the query's words the index holds at all (Results.Known).
func (ix *Index) lexical(ctx context.Context, query string, k int, proximity bool) ([]int64, []float64, float64, error) {
	hits, cover, known, err := ix.lexicalHits(ctx, query, k, proximity)
	ids := make([]int64, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	return ids, cover, known, err
}

// lexicalHits is lexical with the scores: the postings of the query's
// terms, read from this snapshot, scored by bm25.Params.Rank (the scorer
// the Weaviate store shares).
func (ix *Index) lexicalHits(ctx context.Context, query string, k int, proximity bool) ([]bm25.Hit, []float64, float64, error) {
	q := bm25.NewQuery(query)
	terms := q.Read
	if len(terms) == 0 {
		return nil, nil, 0, nil
	}
	// One read transaction: the stats, the dead set and the postings all
	// from the same snapshot, whatever a build beside us commits.
	tx, err := ix.lex.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, nil, 0, fmt.Errorf("lexical search: %w", err)
	}
	defer tx.Rollback()
	var docs, version int64
	err = tx.QueryRowContext(ctx, `SELECT docs, version FROM lex_stats`).Scan(&docs, &version)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, 0, nil // nothing written yet
	}
	if err != nil {
		return nil, nil, 0, fmt.Errorf("lexical search: %w", err)
	}
	segs, dead, byTerm, err := ix.lexicalSegments(ctx, tx, version)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("lexical search: %w", err)
	}
	lists, err := readTerms(ctx, tx, segs, terms, byTerm)
	if err != nil {
		return nil, nil, 0, err
	}
	// Without the postings of dead chunks a term's df is what a fresh
	// build of the same files counts, so scores do not drift as saves
	// replace chunks; they cost a pass over the dead ids in the list's
	// range, which merges keep few.
	for _, t := range lists {
		t.List.Remove(dead)
	}
	df := func(term string) int {
		if t := lists[term]; t != nil {
			return len(t.List.IDs)
		}
		return 0
	}
	hits, prox := bm25Params.Rank(q, lists, bm25.Stats{Docs: int(docs), DF: df}, k)
	if proximity && prox != nil {
		if err := proximityRerank(ctx, tx, hits, prox); err != nil {
			return nil, nil, 0, fmt.Errorf("lexical search: %w", err)
		}
	}
	cover := make([]float64, len(hits))
	words := q.Words
	for i, h := range hits {
		cover[i] = analysis.Coverage(words, func(t string) bool {
			l := lists[t]
			if l == nil {
				return false
			}
			_, ok := slices.BinarySearch(l.List.IDs, h.ID)
			return ok
		})
	}
	known := analysis.Coverage(words, func(t string) bool { l := lists[t]; return l != nil && len(l.List.IDs) > 0 })
	return hits, cover, known, nil
}

// proximityRerank re-orders BM25's best by how close together each holds
// the query words (bm25.Rerank), reading their texts.
func proximityRerank(ctx context.Context, tx *sql.Tx, hits []bm25.Hit, p *bm25.Proximity) error {
	hits = hits[:min(len(hits), bm25.ProximityDepth)]
	if len(hits) == 0 {
		return nil
	}
	ids := make([]int64, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, text FROM chunks WHERE id IN (`+placeholders(len(ids))+`)`, int64Args(ids)...)
	if err != nil {
		return err
	}
	defer rows.Close()
	text := make(map[int64]string, len(hits))
	for rows.Next() {
		var id int64
		var t string
		if err := rows.Scan(&id, &t); err != nil {
			return err
		}
		text[id] = t
	}
	if err := rows.Err(); err != nil {
		return err
	}
	bm25.Rerank(hits, p, text)
	return nil
}

// readTerms reads the postings of terms from every segment, each term's
// in id order, in one statement: a statement per term and segment was
// most of a search's time. Keyed by term (byTerm), a term's rows are
// together, and every row is of a segment of this snapshot.
func readTerms(ctx context.Context, tx *sql.Tx, segs []int64, terms []string, byTerm bool) (map[string]*bm25.Term, error) {
	out := map[string]*bm25.Term{}
	if len(segs) == 0 {
		return out, nil
	}
	args := make([]any, 0, len(segs)+len(terms))
	q := `SELECT term, df, data FROM lex_postings WHERE term IN (` + placeholders(len(terms)) + `) ORDER BY term, seg`
	if !byTerm {
		for _, s := range segs {
			args = append(args, s)
		}
		q = `SELECT term, df, data FROM lex_postings WHERE seg IN (` + placeholders(len(segs)) + `) AND term IN (` + placeholders(len(terms)) + `) ORDER BY seg`
	}
	for _, t := range terms {
		args = append(args, t)
	}
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("lexical search: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var term string
		var df int
		var data []byte
		if err := rows.Scan(&term, &df, &data); err != nil {
			return nil, fmt.Errorf("lexical search: %w", err)
		}
		t := out[term]
		if t == nil {
			t = &bm25.Term{}
			out[term] = t
		}
		if err := t.List.Decode(data, df); err != nil {
			return nil, fmt.Errorf("%w: term %q: %v", errCorruptData, term, err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("lexical search: %w", err)
	}
	return out, nil
}

// lexicalSegments are the segments in id order, the dead chunk ids in
// ascending order and whether the postings are keyed by term.
func (ix *Index) lexicalSegments(ctx context.Context, tx *sql.Tx, version int64) ([]int64, []int64, bool, error) {
	ix.lexMu.Lock()
	defer ix.lexMu.Unlock()
	if ix.lexSegs != nil && ix.lexVersion == version {
		return ix.lexSegs, ix.lexDead, ix.lexByTerm, nil
	}
	segs, err := queryIDs(ctx, tx, `SELECT id FROM lex_segments ORDER BY id`)
	if err != nil {
		return nil, nil, false, err
	}
	dead, err := queryIDs(ctx, tx, `SELECT id FROM lex_deleted ORDER BY id`)
	if err != nil {
		return nil, nil, false, err
	}
	byTerm, err := termMajor(ctx, tx)
	if err != nil {
		return nil, nil, false, err
	}
	if segs == nil {
		segs = []int64{}
	}
	ix.lexSegs, ix.lexDead, ix.lexByTerm, ix.lexVersion = segs, dead, byTerm, version
	return segs, dead, byTerm, nil
}

func queryIDs(ctx context.Context, tx *sql.Tx, q string, args ...any) ([]int64, error) {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}
