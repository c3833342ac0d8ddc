package weaviatestore

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lore-cli/lore/index/analysis"
	"github.com/lore-cli/lore/index/bm25"
	"github.com/lore-cli/lore/index/ingest"
	wv "github.com/weaviate/weaviate-go-client/v5/weaviate"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/graphql"
	"golang.org/x/sync/singleflight"
)

// Keyword ranking. Weaviate's BM25 has no field weights of lore's, no
// length norm per field, no camelCase parts and no proximity: on the
// Prometheus set it ranked 0.75 / 0.58 (hit@5 / MRR@5) where the local
// store ranked the same chunks 0.94 / 0.70. So the cluster only finds
// candidates, candidateFactor times as many as the search keeps, and lore
// orders them with its own scorer (bm25.Params.Rank, the local store's):
// each candidate is analysed again as the writer analysed it, its BM25F
// impacts computed with the index's average field lengths, and each query
// term weighed by its idf over the whole index: a rare term's count comes
// from the cluster, in one Aggregate request sent beside the candidates'
// search, a common term's from a sample of the index (sampledDF).

const (
	// candidateFactor is how many candidates per result kept the cluster
	// is asked for; maxCandidates bounds them (a chunk is at most
	// chunk-size bytes: 20 kB). 2 and 4 measured the same on every
	// public set (docs/weaviate.md); reading and analysing the
	// candidates is most of a keyword search's time, so 2.
	candidateFactor = 2
	maxCandidates   = 200
	// sampleSize chunks are read to estimate the average field lengths
	// and how common the commonest terms are, again after sampleTTL: a
	// mean moves slowly, and BM25 barely feels a few percent of it.
	sampleSize = 2048
	sampleTTL  = 10 * time.Minute
	// sampledDF: a term held by at least this many chunks of the sample
	// is not counted by the cluster; its document frequency is the
	// sample's, scaled to the index (within about 9%, 1/sqrt(128), which
	// moves a common term's idf by a few hundredths). The cluster counts
	// a term by reading every chunk that holds it: the Go tree's common
	// words took a second a question, and past the count's deadline the
	// search fell back to Weaviate's own order.
	sampledDF = 128
)

// candidates is how many chunks a keyword search reads for depth results.
func candidates(depth int) int { return max(depth, min(candidateFactor*depth, maxCandidates)) }

// rankCache is a Reader's sample of its index. Its lock guards the
// fields only: a stale sample is read again by one search at a time
// (flight), and the others wait for that read only as long as their own
// context lets them, never behind a lock held across the network (a node
// that hangs would have hung every search).
type rankCache struct {
	mu     sync.Mutex
	smp    sample
	at     time.Time
	flight singleflight.Group
}

// sample is what a sample of an index's chunks says of the whole.
type sample struct {
	avg bm25.Averages
	n   int            // chunks read
	df  map[string]int // the terms at least sampledDF of them hold
}

// termStats is what the cluster says of a query's terms.
type termStats struct {
	docs int
	df   map[string]int
	avg  bm25.Averages
}

// stats asks the cluster, in one Aggregate, how many chunks there are
// and how many hold each of q's counted terms but the common ones, whose
// counts and the average lengths come from the sample. Bounded like every
// count.
func (r *Reader) stats(ctx context.Context, q bm25.Query) (termStats, error) {
	st := termStats{df: map[string]int{}}
	smp, err := r.sample(ctx)
	if err != nil {
		return st, err
	}
	st.avg = smp.avg
	var terms, common []string
	for _, t := range q.Counted() {
		if smp.df[t] >= sampledDF {
			common = append(common, t)
		} else {
			terms = append(terms, t)
		}
	}
	var b strings.Builder
	b.WriteString("{Aggregate{n:" + r.chunks + "{meta{count}}")
	for i, t := range terms {
		fmt.Fprintf(&b, " t%d:%s(%s){meta{count}}", i, r.chunks, termFilter(t).String())
	}
	b.WriteString("}}")
	actx, cancel := context.WithTimeout(ctx, min(r.s.cfg.Timeout, 5*time.Second))
	defer cancel()
	err = r.s.pool.do(actx, func(ctx context.Context, c *wv.Client) error {
		resp, err := c.GraphQL().Raw().WithQuery(b.String()).Do(ctx)
		if err != nil {
			return err
		}
		var rows map[string][]struct {
			Meta struct{ Count int } `json:"meta"`
		}
		if err := decodeGQL(resp, "Aggregate", &rows); err != nil {
			return err
		}
		count := func(alias string) (int, error) {
			if len(rows[alias]) != 1 {
				return 0, fmt.Errorf("aggregate: no count for %s", alias)
			}
			return rows[alias][0].Meta.Count, nil
		}
		if st.docs, err = count("n"); err != nil {
			return err
		}
		for i, t := range terms {
			if st.df[t], err = count(fmt.Sprintf("t%d", i)); err != nil {
				return err
			}
		}
		return nil
	})
	for _, t := range common {
		st.df[t] = min(st.docs, int(math.Round(float64(smp.df[t])*float64(st.docs)/float64(max(1, smp.n)))))
	}
	return st, err
}

// termFilter matches the chunks that hold term as the local postings
// count it: a word in the path, the headings or the body; an identifier
// (IdentPrefix) in the identifiers; a camelCase part (PartPrefix) in the
// parts.
func termFilter(term string) interface{ String() string } {
	if id, ok := strings.CutPrefix(term, analysis.IdentPrefix); ok {
		return textIs("identifiers", id)
	}
	if part, ok := strings.CutPrefix(term, analysis.PartPrefix); ok {
		return textIs("part_terms", partToken(part))
	}
	return or(textIs("terms", term), textIs("heading_terms", term), textIs("path_terms", term))
}

// sample is the cached sample of the index, read again when stale. A
// stale sample is still returned at once while one search reads the new
// one: the stats of ten minutes ago rank as well, and a 2048-chunk read
// must not hold up every search that comes meanwhile.
func (r *Reader) sample(ctx context.Context) (sample, error) {
	c := &r.rank
	c.mu.Lock()
	smp, at := c.smp, c.at
	c.mu.Unlock()
	if !at.IsZero() && time.Since(at) < sampleTTL {
		return smp, nil
	}
	ch := c.flight.DoChan("sample", func() (any, error) {
		// Not the first caller's context: its end must not fail the
		// others waiting on the same read. Bounded like every call.
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.s.cfg.Timeout)
		defer cancel()
		smp, err := r.readSample(fctx)
		if err == nil {
			c.mu.Lock()
			c.smp, c.at = smp, time.Now()
			c.mu.Unlock()
		}
		return smp, err
	})
	if !at.IsZero() {
		return smp, nil // the read goes on for the next search
	}
	select {
	case <-ctx.Done():
		return sample{}, ctx.Err()
	case res := <-ch:
		if res.Err != nil {
			return sample{}, res.Err
		}
		return res.Val.(sample), nil
	}
}

// readSample reads sampleSize chunks (the first by object id, which
// derives from a hash: as good as random) and measures them as the local
// postings would: their mean body and identifier lengths, and how many
// hold each term.
func (r *Reader) readSample(ctx context.Context) (sample, error) {
	var objs []chunkObj
	err := r.get(ctx, func(b *graphql.GetBuilder) *graphql.GetBuilder {
		return b.WithFields(fields("path", "heading", "text")...).WithLimit(sampleSize)
	}, &objs)
	if err != nil {
		return sample{}, err
	}
	var body, idents float64
	df := map[string]int{}
	for _, o := range objs {
		d := analysis.Analyze(analysis.Fields{Path: o.Path, Heading: o.Heading, Body: o.Text, Structured: ingest.Structured(o.Path)})
		body += float64(d.BodyLen)
		idents += float64(d.IdentsLen)
		for _, tf := range d.Terms {
			df[tf.Term]++
		}
	}
	maps.DeleteFunc(df, func(_ string, n int) bool { return n < sampledDF })
	n := float64(max(1, len(objs)))
	return sample{avg: bm25.Averages{Body: body / n, Idents: idents / n}, n: len(objs), df: df}, nil
}

// ranked is a candidate as lore's scorer placed it.
type ranked struct {
	obj   chunkObj
	cover float64
}

// rank orders the cluster's candidates by lore's scorer and keeps the k
// best, each with its Coverage of the query; known is the share of the
// query's words any candidate holds (Results.Known).
func rank(q bm25.Query, cands []chunkObj, st termStats, k int, proximity bool) (out []ranked, known float64) {
	read := map[string]bool{}
	for _, t := range q.Read {
		read[t] = true
	}
	byID := make(map[int64]chunkObj, len(cands))
	terms := make(map[int64]map[string]bool, len(cands))
	held := map[string]bool{}
	lists := map[string]*bm25.Term{}
	cands = slices.Clone(cands)
	slices.SortFunc(cands, func(a, b chunkObj) int { return cmp.Compare(a.ChunkID, b.ChunkID) })
	for _, o := range cands {
		id := int64(o.ChunkID)
		if _, dup := byID[id]; dup {
			continue
		}
		byID[id] = o
		d := analysis.Analyze(analysis.Fields{Path: o.Path, Heading: o.Heading, Body: o.Text, Structured: ingest.Structured(o.Path)})
		ts := make(map[string]bool, len(d.Terms))
		for _, tf := range d.Terms {
			ts[tf.Term], held[tf.Term] = true, true
			if !read[tf.Term] {
				continue
			}
			l := lists[tf.Term]
			if l == nil {
				l = &bm25.Term{}
				lists[tf.Term] = l
			}
			l.List.Add(id, bm25.DefaultParams.Impact(tf, d, st.avg))
		}
		terms[id] = ts
	}
	df := func(term string) int {
		if n, ok := st.df[term]; ok {
			return n
		}
		// A term stats did not count (it counts every term Rank asks
		// for): counted among the candidates, a lower bound.
		if l := lists[term]; l != nil {
			return len(l.List.IDs)
		}
		return 0
	}
	hits, prox := bm25.DefaultParams.Rank(q, lists, bm25.Stats{Docs: max(st.docs, len(byID)), DF: df}, k)
	if proximity && prox != nil {
		text := make(map[int64]string, bm25.ProximityDepth)
		for _, h := range hits[:min(len(hits), bm25.ProximityDepth)] {
			text[h.ID] = byID[h.ID].Text
		}
		bm25.Rerank(hits, prox, text)
	}
	words := q.Words
	for _, h := range hits {
		ts := terms[h.ID]
		out = append(out, ranked{byID[h.ID], analysis.Coverage(words, func(t string) bool { return ts[t] })})
	}
	return out, analysis.Coverage(words, func(t string) bool { return held[t] })
}
