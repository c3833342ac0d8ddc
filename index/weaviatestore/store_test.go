package weaviatestore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-openapi/strfmt"
	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/ingest"
	"github.com/lore-cli/lore/index/storetest"
	"github.com/lore-cli/lore/internal/weaviatetest"
	wv "github.com/weaviate/weaviate-go-client/v5/weaviate"
	"github.com/weaviate/weaviate/entities/models"
)

func TestNewChecksConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no endpoints", Config{}, "weaviate-endpoints: none given"},
		{"not a URL", Config{Endpoints: []string{"127.0.0.1:8080"}}, "is not an address"},
		{"https", Config{Endpoints: []string{"https://h:1"}}, "is not an address"},
		{"prefix", Config{Endpoints: []string{"http://h:1"}, CollectionPrefix: "lore"}, "weaviate-collection-prefix"},
		{"consistency", Config{Endpoints: []string{"http://h:1"}, ReadConsistency: "most"}, "use ONE, QUORUM or ALL"},
		{"grpc count", Config{Endpoints: []string{"http://h:1"}, GRPCEndpoints: []string{"h:2", "h:3"}}, "one per endpoint"},
		{"hybrid", Config{Endpoints: []string{"http://h:1"}, Hybrid: "both"}, "weaviate hybrid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New: %v, want an error with %q", err, tc.want)
			}
		})
	}
	s, err := New(Config{Endpoints: []string{"http://10.0.0.1", "http://10.0.0.2:9000/"}, APIKey: "sekret"})
	if err != nil {
		t.Fatal(err)
	}
	if s.cfg.CollectionPrefix != "Lore" || s.cfg.WriteConsistency != Quorum || s.cfg.ReadConsistency != One ||
		s.cfg.Timeout != 10*time.Second || s.cfg.Hybrid != HybridWeaviate {
		t.Errorf("defaults: %+v", s.cfg)
	}
	if got := s.pool.eps[0].url + " " + s.pool.eps[0].grpc + " " + s.pool.eps[1].url + " " + s.pool.eps[1].grpc; got !=
		"http://10.0.0.1:8080 10.0.0.1:50051 http://10.0.0.2:9000 10.0.0.2:50051" {
		t.Errorf("endpoints: %s", got)
	}
}

// unusedPorts returns loopback ports nothing listens on.
func unusedPorts(t *testing.T, n int) []string {
	var out []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, "http://"+l.Addr().String())
		l.Close()
	}
	return out
}

// With every endpoint dead, a call fails at once with one error that names
// them and says what to do, and holds no server text.
func TestAllEndpointsDead(t *testing.T) {
	eps := unusedPorts(t, 2)
	s, err := New(Config{Endpoints: eps, APIKey: "sekret-key"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	want := "weaviate: no endpoint answered (" + eps[0] + ", " + eps[1] + "): start the cluster or fix weaviate-endpoints"
	for name, call := range map[string]func() error{
		"open":  func() error { _, err := s.Open(ctx, "docs"); return err },
		"list":  func() error { _, err := s.List(ctx); return err },
		"write": func() error { _, err := s.BeginWrite(ctx, index.WriteRequest{Name: "docs"}); return err },
		"health": func() error {
			_, err := s.Health(ctx)
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			err := call()
			if took := time.Since(start); took > 3*time.Second {
				t.Errorf("took %s", took)
			}
			if !errors.Is(err, ErrUnreachable) || err.Error() != want {
				t.Fatalf("err = %v\nwant %s", err, want)
			}
			if strings.Contains(err.Error(), "sekret") {
				t.Error("the API key is in the error")
			}
		})
	}
}

// Fixtures: four chunks in two files, with 4-dimensional vectors.
var (
	eOllama  = []float32{1, 0, 0, 0}
	eGarden  = []float32{0, 1, 0, 0}
	eUser    = []float32{0, 0, 1, 0}
	eDecoy   = []float32{0, 0, 0, 1}
	chOllama = ingest.Chunk{Start: 1, End: 3, Heading: "Configuration", Kind: "prose", Text: "Set OLLAMA_HOST to point lore at another server."}
	chGarden = ingest.Chunk{Start: 5, End: 9, Heading: "Elsewhere", Kind: "prose", Text: "Unrelated prose about gardening and ripe tomatoes in summer."}
	chUser   = ingest.Chunk{Start: 1, End: 4, Kind: "code", Text: "func getUserById(id int) (*User, error) {\n\treturn db.find(id)\n}"}
	// The decoy says ollama and host apart, once each. It used to repeat
	// them eight times: in an index of four chunks every idf is near 1,
	// and lore's scorer (the local store's too) let that repetition
	// outweigh the identifier, which only Weaviate's identifiers^2 boost
	// had held off.
	chDecoy   = ingest.Chunk{Start: 6, End: 8, Kind: "code", Text: "// the ollama host runs here"}
	chReplace = ingest.Chunk{Start: 1, End: 2, Heading: "Configuration", Kind: "prose", Text: "Lore reads its settings from config.yaml now."}
)

func fileUpdate(src int64, path string, pieces ...ingest.Chunk) index.FileUpdate {
	return index.FileUpdate{SourceID: src, Path: path, Size: 100, MTimeNS: time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC).UnixNano(),
		Hash: "h-" + path + "-" + pieces[0].Hash(), Status: index.StatusIndexed, Chunker: "test", Chunks: pieces}
}

func newStore(t *testing.T, c *weaviatetest.Cluster, prefix string, mod ...func(*Config)) *Store {
	t.Helper()
	cfg := Config{Endpoints: c.Endpoints(), GRPCEndpoints: c.GRPCEndpoints(), CollectionPrefix: prefix}
	for _, m := range mod {
		m(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func begin(t *testing.T, s *Store, name string, rebuild bool) *Writer {
	t.Helper()
	w, err := s.beginWrite(context.Background(), index.WriteRequest{Name: name, Rebuild: rebuild})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// write stores the vectors and files with w, as a build would.
func write(t *testing.T, w *Writer, vecs map[string][]float32, files ...index.FileUpdate) {
	t.Helper()
	ctx := context.Background()
	if err := w.SetMeta(ctx, "schema_version", "3", "embedder", "test-embed", "dim", "4", "chunker", "test"); err != nil {
		t.Fatal(err)
	}
	var hashes []string
	var vs [][]float32
	for _, f := range files {
		for _, p := range f.Chunks {
			if v, ok := vecs[p.Text]; ok {
				hashes, vs = append(hashes, p.Hash()), append(vs, v)
			}
		}
	}
	if err := w.PutVectors(ctx, hashes, vs); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFiles(ctx, files); err != nil {
		t.Fatal(err)
	}
}

func publish(t *testing.T, w *Writer) (int, int) {
	t.Helper()
	files, chunks, err := w.Publish(context.Background(), index.PublishOptions{Vectors: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return files, chunks
}

func open(t *testing.T, s *Store, name string) *Reader {
	t.Helper()
	r, err := s.open(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func search(t *testing.T, r *Reader, query string, vec []float32, opt index.SearchOptions) index.Results {
	t.Helper()
	res, err := r.SearchVector(context.Background(), query, vec, opt, 0)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func texts(hits []index.Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Path+":"+strings.Fields(h.Text)[0])
	}
	return out
}

func chunkCount(t *testing.T, r *Reader) int {
	t.Helper()
	n, err := r.Chunks(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func fixtureVecs() map[string][]float32 {
	return map[string][]float32{chOllama.Text: eOllama, chGarden.Text: eGarden, chUser.Text: eUser, chDecoy.Text: eDecoy, chReplace.Text: {0.7, 0.7, 0, 0}}
}

// One node for the whole run: the store seam's conformance suite, each of
// its cases under a collection prefix of its own, then what only the
// Weaviate store has (its schema, identifiers and fusion modes, writes
// retried, vectors read back from the cluster, chunks a node lost, a
// damaged meta object, the lease and the generations' collections).
func TestSingleNode(t *testing.T) {
	c := weaviatetest.Start(t, 1)
	t.Run("conformance", func(t *testing.T) { storetest.Run(t, harness(c)) })
	for _, tc := range []struct {
		name string
		run  func(*testing.T, *weaviatetest.Cluster)
	}{
		{"schema", testSchema},
		{"search modes", testSearchModes},
		{"keyword ranking", testKeywordRanking},
		{"stats read does not block", testStatsNotBlocked},
		{"a stale sample serves", testStaleSampleServes},
		{"common terms not counted", testCommonTermsNotCounted},
		{"counts", testCounts},
		{"writes retried", testWritesRetried},
		{"deferred vectors without a dimension", testDeferWithoutDim},
		{"vectors from the cluster", testVectorsFromCluster},
		{"lost chunk", testLostChunk},
		{"damaged meta", testDamagedMeta},
		{"lease", testLease},
		{"two watchers at once", testWatchRace},
		{"a cancelled begin gives its lease back", testCancelledBegin},
		{"a cancelled watch gives its lease back", testCancelledWatch},
		{"a camelCase part finds a chunk", testPartFound},
		{"a word's other form finds a chunk", testFormFound},
		{"a defined name finds a chunk", testDefinitionFound},
		{"an index of the previous schema", testOldSchema},
		{"two writers at once", testWriteRace},
		{"remove", testRemove},
		{"remove asking past the lease", testRemoveSlowConfirm},
		{"remove whose lease was taken over", testRemoveLeaseTakenOver},
		{"a writer whose lease was taken over", testLeaseTakenOver},
		{"remove and a build at once", testRemoveRace},
		{"refresh hides a lost collection", testRefreshHidesLostCollection},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, c) })
	}
}

// harness runs the conformance suite on c: each case gets a store with a
// prefix of its own, so that their indexes never meet.
func harness(c *weaviatetest.Cluster) storetest.Harness {
	var n atomic.Int64
	return storetest.Harness{
		New: func(t *testing.T) (index.Store, index.Target) {
			s := newStore(t, c, fmt.Sprintf("Conf%d", n.Add(1)))
			return s, s
		},
		// The chunks collection of the current generation gone, as after
		// a botched manual cleanup of the cluster.
		Damage: func(t *testing.T, st index.Store, name string) {
			s := st.(*Store)
			if err := s.deleteClass(context.Background(), open(t, s, name).chunks); err != nil {
				t.Fatal(err)
			}
		},
	}
}

// fixture writes the four chunks of the fixtures into the index "docs"
// of s (two files of source /nowhere/docs) and publishes them.
func fixture(t *testing.T, s *Store) index.Source {
	t.Helper()
	w := begin(t, s, "docs", false)
	src, err := w.AddSource(context.Background(), "/nowhere/docs")
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := w.AddSource(context.Background(), "/nowhere/docs"); again != src || src.ID != 1 {
		t.Errorf("AddSource twice: %+v %+v", src, again)
	}
	write(t, w, fixtureVecs(), fileUpdate(src.ID, "guide/setup.md", chOllama, chGarden), fileUpdate(src.ID, "user.go", chUser, chDecoy))
	if files, chunks := publish(t, w); files != 2 || chunks != 4 {
		t.Fatalf("Publish: %d files, %d chunks", files, chunks)
	}
	return src
}

func testSchema(t *testing.T, c *weaviatetest.Cluster) {
	ctx := context.Background()
	s := newStore(t, c, "Schema")
	w := begin(t, s, "my-docs.v2", false)
	if w.chunks != "Schema_"+slug("my-docs.v2")+"_"+w.gen+"_Chunks" || !strings.HasPrefix(slug("my-docs.v2"), "my_docs_v2_") {
		t.Errorf("chunks collection %s", w.chunks)
	}
	h, err := s.Health(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if h.Ready != 1 || len(h.Nodes) != 1 || h.Nodes[0].Status != "HEALTHY" {
		t.Errorf("nodes: %+v", h)
	}
	if len(h.Collections) != 4 {
		t.Fatalf("collections: %+v", h.Collections)
	}
	for _, ch := range h.Collections {
		if !ch.SchemaOK || ch.Problem != "" || ch.Replication != 1 {
			t.Errorf("%+v", ch)
		}
	}
	cl, err := s.getClass(ctx, w.chunks)
	if err != nil {
		t.Fatal(err)
	}
	tok := map[string]string{}
	for _, p := range cl.Properties {
		tok[p.Name] = p.Tokenization
	}
	if tok["text"] != "word" || tok["identifiers"] != "lowercase" || tok["path"] != "field" {
		t.Errorf("tokenization: %v", tok)
	}
}

// Identifiers are found through their own property; lore's RRF and
// Weaviate's own hybrid search both rank the chunk that names the
// identifier first.
func testSearchModes(t *testing.T, c *weaviatetest.Cluster) {
	s := newStore(t, c, "Search")
	fixture(t, s)
	r := open(t, s, "docs")
	for _, q := range []struct{ query, want string }{
		{"OLLAMA_HOST", "guide/setup.md:Set"},
		{"where do I set ollama_host?", "guide/setup.md:Set"},
		{"getUserById", "user.go:func"},
	} {
		res := search(t, r, q.query, nil, index.SearchOptions{})
		if res.Mode != "lexical" || len(res.Hits) == 0 || texts(res.Hits)[0] != q.want {
			t.Errorf("lexical %q: %s %v, want %s first", q.query, res.Mode, texts(res.Hits), q.want)
			continue
		}
		if h := res.Hits[0]; h.LexicalRank != 1 || h.VectorRank != 0 || h.Coverage <= 0 || h.Score != 1/61.0 {
			t.Errorf("lexical %q: %+v", q.query, h)
		}
	}
	res := search(t, r, "tomatoes", []float32{0.1, 0.9, 0.1, 0}, index.SearchOptions{NoLexical: true, Limit: 2})
	if res.Mode != "vector" || len(res.Hits) != 2 || texts(res.Hits)[0] != "guide/setup.md:Unrelated" || res.Hits[0].VectorRank != 1 {
		t.Errorf("vector: %s %v", res.Mode, texts(res.Hits))
	}
	rrf := open(t, newStore(t, c, "Search", func(c *Config) { c.Hybrid = HybridLore }), "docs")
	res = search(t, rrf, "OLLAMA_HOST", eOllama, index.SearchOptions{})
	if res.Mode != "hybrid" || texts(res.Hits)[0] != "guide/setup.md:Set" {
		t.Fatalf("hybrid: %s %v", res.Mode, texts(res.Hits))
	}
	h := res.Hits[0]
	if h.LexicalRank != 1 || h.VectorRank != 1 || h.Score != 2/61.0 || h.Source != "/nowhere/docs" || h.Start != 1 || h.End != 3 || h.Heading != "Configuration" {
		t.Errorf("hybrid hit: %+v", h)
	}
	if len(res.Hits) != 4 {
		t.Errorf("hybrid: %d hits, want all 4 (vector search returns every chunk)", len(res.Hits))
	}
	res = search(t, r, "OLLAMA_HOST", eOllama, index.SearchOptions{Limit: 3})
	if res.Mode != "hybrid" || len(res.Hits) != 3 || texts(res.Hits)[0] != "guide/setup.md:Set" || res.Hits[0].Score <= 0 {
		t.Errorf("weaviate hybrid: %s %v", res.Mode, texts(res.Hits))
	}
}

// What the cluster counts: Status, CheckGraph and List of an index whose
// source is not on this machine.
func testCounts(t *testing.T, c *weaviatetest.Cluster) {
	ctx := context.Background()
	s := newStore(t, c, "Counts")
	fixture(t, s)
	r := open(t, s, "docs")
	st, err := r.Status(ctx)
	if err != nil || st.Documents != 2 || st.Chunks != 4 || st.Vectors != 4 || st.Embedder != "test-embed" || st.Dimension != 4 ||
		st.BuiltAt == nil || st.ChunksByKind["code"] != 2 || st.DocumentsByKind["markdown"] != 1 || len(st.Sources) != 1 || st.Damaged != "" {
		t.Errorf("Status: %+v %v", st, err)
	}
	gs, err := r.CheckGraph(ctx)
	if err != nil || !gs.Needed || !gs.Present || gs.Nodes != 4 || gs.Vectors != 4 || gs.Problem != "" {
		t.Errorf("CheckGraph: %+v %v", gs, err)
	}
	list, err := s.List(ctx)
	if err != nil || len(list) != 1 || list[0].Name != "docs" || !list[0].Built || list[0].Chunks != 4 || list[0].Embedder != "test-embed" ||
		list[0].Path != "weaviate:"+r.chunks {
		t.Errorf("List: %+v %v", list, err)
	}
}

// A write retried after a timeout writes the same objects again: a file
// rewritten twice has its new chunks once, and its old ones are gone.
func testWritesRetried(t *testing.T, c *weaviatetest.Cluster) {
	ctx := context.Background()
	s := newStore(t, c, "Retried")
	src := fixture(t, s)
	w := begin(t, s, "docs", false)
	docs, err := w.Documents(ctx, src.ID)
	if err != nil || len(docs) != 2 || docs["user.go"].MTimeNS != fileUpdate(1, "x", chUser).MTimeNS || docs["user.go"].Status != index.StatusIndexed {
		t.Fatalf("Documents (mtimes to the nanosecond): %+v %v", docs, err)
	}
	for range 2 {
		write(t, w, fixtureVecs(), fileUpdate(src.ID, "guide/setup.md", chReplace))
	}
	publish(t, w)
	r := open(t, s, "docs")
	if n := chunkCount(t, r); n != 3 {
		t.Errorf("%d chunks after the rewrite, want 3", n)
	}
	if res := search(t, r, "gardening tomatoes", nil, index.SearchOptions{}); len(res.Hits) != 0 {
		t.Errorf("the replaced chunk is still found: %v", texts(res.Hits))
	}
	if p, err := r.ReadPassage(ctx, "guide/setup.md", 0, 0, 0); err != nil || p.Text != chReplace.Text {
		t.Errorf("ReadPassage after the rewrite: %+v %v", p, err)
	}
	if st, _ := r.Status(ctx); st.Vectors != 3 {
		t.Errorf("%d vectors after Publish, want 3 (the garden vector unused)", st.Vectors)
	}
}

// MissingVectors asks the cluster, not a writer's cache; a chunk written
// later takes the vector a previous writer stored.
func testVectorsFromCluster(t *testing.T, c *weaviatetest.Cluster) {
	ctx := context.Background()
	s := newStore(t, c, "Vectors")
	src := fixture(t, s)
	w := begin(t, s, "docs", false)
	h1, h2 := ingest.Chunk{Text: "one"}.Hash(), ingest.Chunk{Text: "two"}.Hash()
	if err := w.PutVectors(ctx, []string{h1}, [][]float32{{0, 0, 0.5, 0.5}}); err != nil {
		t.Fatal(err)
	}
	m, err := w.MissingVectors(ctx, []string{h1, h2, h2})
	if err != nil || len(m) != 1 || !m[h2] {
		t.Errorf("MissingVectors: %v %v", m, err)
	}
	w.Close()
	w = begin(t, s, "docs", false)
	if m, err := w.MissingVectors(ctx, []string{h1, h2}); err != nil || len(m) != 1 || !m[h2] {
		t.Errorf("MissingVectors from a new writer: %v %v", m, err)
	}
	write(t, w, nil, fileUpdate(src.ID, "one.txt", ingest.Chunk{Start: 1, End: 1, Kind: "prose", Text: "one"}))
	publish(t, w)
	res := search(t, open(t, s, "docs"), "", []float32{0, 0, 0.5, 0.5}, index.SearchOptions{NoLexical: true, Limit: 1})
	if len(res.Hits) != 1 || res.Hits[0].Path != "one.txt" {
		t.Errorf("the stored vector was not used: %v", texts(res.Hits))
	}
}

// A chunk the cluster took and then lost, in a run cut short before its
// Publish: the next run's Publish finds it (it checks what was written
// since the last Publish, not only by itself), forgets the file so that
// the next pass writes it again, and says which.
func testLostChunk(t *testing.T, c *weaviatetest.Cluster) {
	ctx := context.Background()
	s := newStore(t, c, "Lost")
	w := begin(t, s, "lost", false)
	lsrc, err := w.AddSource(ctx, "/nowhere/lost")
	if err != nil {
		t.Fatal(err)
	}
	a := fileUpdate(lsrc.ID, "a.md", chOllama, chGarden)
	write(t, w, fixtureVecs(), a)
	if err := s.deleteWhere(ctx, "lose a chunk", w.chunks, idIn([]string{chunkUUID(lsrc.ID, "a.md", version(a), 1)})); err != nil {
		t.Fatal(err)
	}
	w.Close()
	w = begin(t, s, "lost", false)
	write(t, w, fixtureVecs(), fileUpdate(lsrc.ID, "b.md", chUser))
	_, _, err = w.Publish(ctx, index.PublishOptions{Vectors: true})
	if !errors.Is(err, index.ErrIncomplete) || !strings.Contains(err.Error(), "1 chunks of 1 files") || !strings.Contains(err.Error(), "a.md") {
		t.Fatalf("Publish with a chunk lost by an earlier run: %v", err)
	}
	if docs, err := w.Documents(ctx, lsrc.ID); err != nil || docs["a.md"].ID != 0 || docs["b.md"].ID == 0 {
		t.Errorf("after the check, the documents are %v (%v): want b.md, a.md forgotten", docs, err)
	}
	w.Close()
	w = begin(t, s, "lost", false)
	write(t, w, fixtureVecs(), a)
	if files, chunks := publish(t, w); files != 2 || chunks != 3 {
		t.Errorf("a.md written again: %d files, %d chunks; want 2, 3", files, chunks)
	}
}

// A meta object lore cannot read: reads and builds refuse with the fix,
// and the fix (removal) works, collections and all.
func testDamagedMeta(t *testing.T, c *weaviatetest.Cluster) {
	ctx := context.Background()
	s := newStore(t, c, "Bad")
	w := begin(t, s, "bad", false)
	bsrc, err := w.AddSource(ctx, "/nowhere/bad")
	if err != nil {
		t.Fatal(err)
	}
	write(t, w, fixtureVecs(), fileUpdate(bsrc.ID, "a.md", chOllama))
	publish(t, w)
	chunks := w.chunks
	garbage := &models.Object{Class: metaClass("Bad"), ID: strfmt.UUID(metaID("bad")), Properties: map[string]any{"name": "bad", "generations": "{not json"}}
	if err := s.insert(ctx, "spoil the meta object", []*models.Object{garbage}, nil); err != nil {
		t.Fatal(err)
	}
	for what, err := range map[string]error{
		"Open":       func() error { _, err := s.Open(ctx, "bad"); return err }(),
		"BeginWrite": func() error { _, err := s.BeginWrite(ctx, index.WriteRequest{Name: "bad"}); return err }(),
	} {
		if !errors.Is(err, index.ErrCorrupt) || !strings.Contains(err.Error(), "lore index rm bad") {
			t.Errorf("%s of an index with a damaged meta object: %v", what, err)
		}
	}
	list, err := s.List(ctx)
	if i := slices.IndexFunc(list, func(in index.Info) bool { return in.Name == "bad" }); err != nil || i < 0 || list[i].Damaged == "" {
		t.Errorf("List shows the damaged index as %+v (%v)", list, err)
	}
	in, err := s.Remove(ctx, "bad", nil)
	if err != nil || in.Damaged == "" {
		t.Fatalf("Remove of an index with a damaged meta object: %+v %v", in, err)
	}
	if cl, err := s.getClass(ctx, chunks); cl != nil || err != nil {
		t.Errorf("its collection %s is still there (%v)", chunks, err)
	}
	if names, _ := s.Names(ctx); slices.Contains(names, "bad") {
		t.Errorf("Names after removing it: %v", names)
	}
}

// The lease is held in the cluster: another Store (another process) is
// refused as this one is; a rebuild's new generation has collections of
// its own, and Publish drops the old ones, telling a reader of them to
// open the index again.
func testLease(t *testing.T, c *weaviatetest.Cluster) {
	ctx := context.Background()
	s := newStore(t, c, "Lease")
	fixture(t, s)
	old := open(t, s, "docs")
	w := begin(t, s, "docs", true)
	if w.gen == old.gen {
		t.Fatal("a rebuild writes the current generation")
	}
	other := newStore(t, c, "Lease")
	if _, err := other.BeginWrite(ctx, index.WriteRequest{Name: "docs"}); !errors.Is(err, index.ErrLocked) {
		t.Errorf("a writer of another Store: %v", err)
	}
	if _, err := other.Remove(ctx, "docs", nil); !errors.Is(err, index.ErrLocked) {
		t.Errorf("Remove by another Store while a writer holds the index: %v", err)
	}
	if prev, err := w.PreviousSources(ctx); err != nil || len(prev) != 1 || prev[0] != "/nowhere/docs" {
		t.Errorf("PreviousSources: %v %v", prev, err)
	}
	nsrc, err := w.AddSource(ctx, "/nowhere/docs")
	if err != nil {
		t.Fatal(err)
	}
	write(t, w, fixtureVecs(), fileUpdate(nsrc.ID, "user.go", chUser))
	publish(t, w)
	for _, k := range kinds {
		if cl, err := s.getClass(ctx, s.class("docs", old.gen, k)); err != nil || cl != nil {
			t.Errorf("the old %s collection is still there (%v)", k, err)
		}
	}
	if _, err := old.Chunks(ctx); !errors.Is(err, index.ErrCorrupt) || !strings.Contains(err.Error(), "open it again") {
		t.Errorf("a reader of a dropped generation: %v (want it told to reopen)", err)
	}
}

// Remove holds the lease while confirm asks, and drops the collections.
func testRemove(t *testing.T, c *weaviatetest.Cluster) {
	ctx := context.Background()
	s := newStore(t, c, "Remove")
	fixture(t, s)
	r := open(t, s, "docs")
	if _, err := s.Remove(ctx, "docs", func(index.Info) error {
		if _, err := newStore(t, c, "Remove").BeginWrite(ctx, index.WriteRequest{Name: "docs"}); !errors.Is(err, index.ErrLocked) {
			t.Errorf("a build while Remove asks: %v", err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{r.chunks, r.docs, r.vectors} {
		if cl, err := s.getClass(ctx, k); cl != nil || err != nil {
			t.Errorf("collection %s is still there (%v)", k, err)
		}
	}
}

// testRemoveSlowConfirm: a user who reads rm's prompt for longer than the
// lease lasts still gets the removal, and no build takes the index while
// the prompt waits (it would begin writing what rm then deletes).
func testRemoveSlowConfirm(t *testing.T, c *weaviatetest.Cluster) {
	ctx := context.Background()
	s := newStore(t, c, "RmSlow")
	s.lease.ttl, s.lease.renew = time.Second, 100*time.Millisecond
	fixture(t, s)
	r := open(t, s, "docs")
	if _, err := s.Remove(ctx, "docs", func(index.Info) error {
		time.Sleep(2 * s.lease.ttl) // the user reads the prompt
		w, err := newStore(t, c, "RmSlow").BeginWrite(ctx, index.WriteRequest{Name: "docs"})
		if err == nil {
			w.Close()
		}
		if !errors.Is(err, index.ErrLocked) {
			t.Errorf("a build while Remove asks, past the lease's first term: %v, want ErrLocked", err)
		}
		return nil
	}); err != nil {
		t.Fatalf("Remove after a long prompt: %v", err)
	}
	for _, k := range []string{r.chunks, r.docs, r.vectors} {
		if cl, err := s.getClass(ctx, k); cl != nil || err != nil {
			t.Errorf("collection %s is still there (%v)", k, err)
		}
	}
	if st, err := s.readState(ctx, "docs", Quorum); st != nil || err != nil {
		t.Errorf("the meta object after the removal: %+v %v", st, err)
	}
}

// testRemoveLeaseTakenOver: rm's lease lapsed while it asked (its
// renewals failed: a laptop asleep) and a build took the index over. The
// next renewal must give way rather than write rm's lease back over the
// build's, and rm, answered, must delete nothing of the index the build
// now writes.
func testRemoveLeaseTakenOver(t *testing.T, c *weaviatetest.Cluster) {
	ctx := context.Background()
	s := newStore(t, c, "RmLapse")
	s.lease.renew = 50 * time.Millisecond
	fixture(t, s)
	other := newStore(t, c, "RmLapse")
	mine := other.newHolder()
	_, err := s.Remove(ctx, "docs", func(index.Info) error {
		// What the build writes on finding rm's lease expired, and again
		// as it renews: a renewal of rm's that read before the first
		// write and wrote after it (no compare-and-set on the cluster)
		// puts rm's lease back once, and reads the build's next time.
		for range 5 {
			st, err := other.readState(ctx, "docs", Quorum)
			if err != nil || st == nil {
				t.Fatalf("the record while rm asks: %+v %v", st, err)
			}
			st.LockHolder, st.LockExpires = mine, other.lease.expiry()
			if err := other.writeState(ctx, st); err != nil {
				t.Fatal(err)
			}
			time.Sleep(3 * s.lease.renew) // rm's renewals come round
		}
		return nil
	})
	if !errors.Is(err, index.ErrLocked) || !strings.Contains(err.Error(), "nothing was removed") || !strings.Contains(err.Error(), "lapsed") {
		t.Errorf("rm whose lease was taken over while it asked: %v, want ErrLocked saying nothing was removed", err)
	}
	if st, err := other.readState(ctx, "docs", Quorum); err != nil || st == nil || st.LockHolder != mine {
		t.Errorf("the build's lease after rm: %+v %v", st, err)
	}
	if n := chunkCount(t, open(t, s, "docs")); n != 4 {
		t.Errorf("the index after rm gave way: %d chunks, want the fixture's 4", n)
	}
}

// Three nodes, replication factor 3 (Replication 0: as many as are up),
// and node0, the first endpoint, killed: the store moves to the next
// endpoint and reads answer with consistency ONE.
func TestThreeNodesOneDown(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three Weaviate nodes")
	}
	c := weaviatetest.Start(t, 3)
	ctx := context.Background()
	s := newStore(t, c, "Lore")
	w := begin(t, s, "docs", false)
	src, err := w.AddSource(ctx, "/nowhere/docs")
	if err != nil {
		t.Fatal(err)
	}
	write(t, w, fixtureVecs(), fileUpdate(src.ID, "guide/setup.md", chOllama, chGarden), fileUpdate(src.ID, "user.go", chUser, chDecoy))
	publish(t, w)
	h, err := s.Health(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range h.Collections {
		if ch.Replication != 3 || ch.Problem != "" {
			t.Errorf("%+v", ch)
		}
	}

	c.Kill(0)
	start := time.Now()
	r := open(t, s, "docs")
	res := search(t, r, "OLLAMA_HOST", eOllama, index.SearchOptions{})
	if len(res.Hits) == 0 || texts(res.Hits)[0] != "guide/setup.md:Set" {
		t.Errorf("search with node0 down: %v", texts(res.Hits))
	}
	if p, err := r.ReadPassage(ctx, "user.go", 0, 0, 0); err != nil || !strings.Contains(p.Text, "getUserById") {
		t.Errorf("ReadPassage with node0 down: %v", err)
	}
	if n, err := r.Chunks(ctx); err != nil || n != 4 {
		t.Errorf("Chunks with node0 down: %d %v", n, err)
	}
	t.Logf("reads with node0 down: %s", time.Since(start))
	// With node0 down a QUORUM write still works; with node1 down too it
	// cannot, and says so.
	w = begin(t, s, "docs", false)
	write(t, w, fixtureVecs(), fileUpdate(src.ID, "more.md", chReplace))
	c.Kill(1)
	start = time.Now()
	err = w.WriteFiles(ctx, []index.FileUpdate{fileUpdate(src.ID, "late.md", chGarden)})
	t.Logf("a write without a quorum failed in %s: %v", time.Since(start), err)
	if !errors.Is(err, ErrNoQuorum) || !strings.Contains(err.Error(), c.Endpoints()[2]) || !strings.Contains(err.Error(), "resumes") {
		t.Errorf("a write without a quorum: %v", err)
	}
	if res := search(t, r, "gardening", nil, index.SearchOptions{}); len(res.Hits) != 1 {
		t.Errorf("search with one node of three: %v", texts(res.Hits))
	}
	c.Start(1)
	c.WaitHealthy(2)

	// The dead node may be gone from the nodes' list: the endpoints tell.
	h, err = s.Health(ctx)
	if err != nil || h.Ready != 2 || h.Endpoints[0].Ready || !h.Endpoints[1].Ready || len(h.Collections) != 4 ||
		!strings.Contains(h.Collections[1].Problem, "2 of its 3 replicas' nodes are ready") {
		t.Errorf("Health with node0 down: %+v %v", h, err)
	}
}

// A refresh of an index whose chunks collection is gone must refuse, as
// the local store's does (index.ErrCorrupt, fix: rebuild). BeginWrite
// used to recreate the collection empty, and Publish's check writes again
// only the documents indexed in the 10 minutes before (clockSkew): an
// older document kept its record without chunks, the refresh called it
// unchanged, and Check and Status called the index whole while a search
// found nothing.
func testRefreshHidesLostCollection(t *testing.T, c *weaviatetest.Cluster) {
	ctx := context.Background()
	s := newStore(t, c, "Hidden")
	src := t.TempDir()
	path := filepath.Join(src, "a.md")
	hourAgo := time.Now().Add(-time.Hour)
	if err := os.WriteFile(path, []byte("# A\n\nThe wombat text.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(path, hourAgo, hourAgo)
	opt := index.BuildOptions{Name: "docs", Paths: []string{src}, Chunk: ingest.ChunkOptions{Size: 200}, MaxFileSize: 1 << 20}
	if _, err := s.Build(ctx, opt); err != nil {
		t.Fatal(err)
	}
	r := open(t, s, "docs")
	// As if a.md had been indexed a minute after it was written, an hour
	// ago: out of Publish's check and of the build's racy window.
	err := s.pool.do(ctx, func(ctx context.Context, cl *wv.Client) error {
		return cl.Data().Updater().WithClassName(r.docs).WithID(docUUID(1, "a.md")).WithMerge().
			WithProperties(map[string]any{"indexed_at": strconv.FormatInt(hourAgo.Add(time.Minute).UnixNano(), 10)}).Do(ctx)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.deleteClass(ctx, r.chunks); err != nil {
		t.Fatal(err)
	}
	opt.Paths = nil
	if sum, err := s.Build(ctx, opt); !errors.Is(err, index.ErrCorrupt) {
		t.Errorf("a refresh of the index without its chunks collection: %+v, %v; want ErrCorrupt", sum, err)
	}
	// And the index says it is damaged rather than answering nothing.
	if err := open(t, s, "docs").Check(ctx); !errors.Is(err, index.ErrCorrupt) {
		t.Errorf("Check of the index without its chunks collection: %v; want ErrCorrupt", err)
	}
}

// testDeferWithoutDim: a DeferVectors build of an index whose embedder
// never answered (no dimension recorded yet: a first build cut short
// before its embedder was checked) lists its chunks as pending, so that
// the FillVectors build embeds them. They were written without vectors
// and listed nowhere: never found by meaning, and nothing noticed.
func testDeferWithoutDim(t *testing.T, c *weaviatetest.Cluster) {
	ctx := context.Background()
	s := newStore(t, c, "Defer")
	w, err := s.beginWrite(ctx, index.WriteRequest{Name: "docs", DeferVectors: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	src, err := w.AddSource(ctx, "/nowhere/docs")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.SetMeta(ctx, "schema_version", "3", "embedder", "test-embed", "chunker", "test"); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFiles(ctx, []index.FileUpdate{fileUpdate(src.ID, "guide/setup.md", chOllama)}); err != nil {
		t.Fatal(err)
	}
	publish(t, w)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	again := begin(t, s, "docs", false)
	if p, err := again.PendingVectors(ctx, src.ID); err != nil || !p["guide/setup.md"] {
		t.Errorf("PendingVectors after a deferred build with no dimension: %v %v, want guide/setup.md", p, err)
	}
}

// testWatchRace: of two watchers that start at once, one watches. The
// other (a second process, played here step by step) found no lease,
// as the first did, and its write lands just after the first's: the
// first read its own write straight back and watched, the other read
// its own and watched too, both rebuilding the index on every change.
func testWatchRace(t *testing.T, c *weaviatetest.Cluster) {
	ctx := context.Background()
	s := newStore(t, c, "Race")
	fixture(t, s)
	proceed := holdPause(t, s)
	other := newStore(t, c, "Race")
	if err := other.ensureClass(ctx, classDef(watchClass("Race"), watchKind, 1)); err != nil {
		t.Fatal(err)
	}
	if have, err := other.readWatch(ctx, "docs"); err != nil || have.live() {
		t.Fatalf("a lease before anyone watches: %+v %v", have, err)
	}
	type result struct {
		l   index.WatchLease
		err error
	}
	first := make(chan result, 1)
	go func() {
		l, err := s.Watch(ctx, "docs")
		first <- result{l, err}
	}()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(2 * time.Millisecond) {
		if o, err := other.readWatch(ctx, "docs"); err == nil && o != nil && o.Holder != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first watcher never wrote its lease")
		}
	}
	mine := other.newHolder()
	if err := other.writeWatch(ctx, "docs", watchObj{Holder: mine, Expires: other.lease.expiry()}); err != nil {
		t.Fatal(err)
	}
	proceed()
	res := <-first
	back, err := other.readWatch(ctx, "docs")
	if err != nil {
		t.Fatal(err)
	}
	otherWatches := back != nil && back.Holder == mine
	if res.err == nil {
		defer res.l.Close()
	} else if !errors.Is(res.err, index.ErrLocked) {
		t.Errorf("the first watcher: %v, want ErrLocked or the lease", res.err)
	}
	if (res.err == nil) == otherWatches {
		t.Errorf("first watcher holds the lease: %v, the other: %v; want exactly one", res.err == nil, otherWatches)
	}
}

// testLeaseTakenOver: a writer whose renewals failed until its lease
// lapsed (the process paused, the cluster out of reach), and whose index
// another lore then took over, must not take it back at its next
// renewal, nor write anything more: two builds would write one index.
func testLeaseTakenOver(t *testing.T, c *weaviatetest.Cluster) {
	ctx := context.Background()
	s := newStore(t, c, "Lapse")
	s.lease.renew = 100 * time.Millisecond
	src := fixture(t, s)
	w := begin(t, s, "docs", false)
	other := newStore(t, c, "Lapse")
	st, err := other.readState(ctx, "docs", Quorum)
	if err != nil || st == nil || st.LockHolder != w.holder {
		t.Fatalf("the record while w writes: %+v %v", st, err)
	}
	// What the other lore writes on finding w's lease expired.
	mine := other.newHolder()
	st.LockHolder, st.LockExpires = mine, other.lease.expiry()
	if err := other.writeState(ctx, st); err != nil {
		t.Fatal(err)
	}
	// Until w's next renewal has run: it either gave way or wrote itself
	// back over the other's lease.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if w.lostTo.Load() != nil {
			break
		}
		if back, err := other.readState(ctx, "docs", Quorum); err == nil && back != nil && back.LockHolder != mine {
			t.Fatalf("w's renewal took the lease back from the lore that took the index over (holder %q)", back.LockHolder)
		}
		if time.Now().After(deadline) {
			t.Fatal("w never renewed its lease")
		}
	}
	err = w.WriteFiles(ctx, []index.FileUpdate{fileUpdate(src.ID, "user.go", chUser)})
	if !errors.Is(err, index.ErrLocked) || !strings.Contains(err.Error(), "took the index over") || !strings.Contains(err.Error(), "run the command again") {
		t.Errorf("a write after the lease was taken over: %v, want ErrLocked telling to run the command again", err)
	}
	if err := w.SetMeta(ctx, "k", "v"); !errors.Is(err, index.ErrLocked) {
		t.Errorf("SetMeta after the lease was taken over: %v, want ErrLocked", err)
	}
	if _, _, err := w.Publish(ctx, index.PublishOptions{}); !errors.Is(err, index.ErrLocked) {
		t.Errorf("Publish after the lease was taken over: %v, want ErrLocked", err)
	}
	w.Close()
	back, err := other.readState(ctx, "docs", Quorum)
	if err != nil || back == nil || back.LockHolder != mine {
		t.Errorf("the other lore's lease is gone: %+v %v", back, err)
	}
	if r := open(t, s, "docs"); chunkCount(t, r) != 4 {
		t.Errorf("the index holds %d chunks after the writer that lost its lease, want the fixture's 4", chunkCount(t, r))
	}
}

// testRemoveRace: `lore index rm` and a build that began at the same
// time (another process, played here step by step) both found no lease
// and wrote theirs, the build's last. The build read its own back and
// went on while rm asked for confirmation; then rm deleted the index
// under it. Exactly one of them must go on.
func testRemoveRace(t *testing.T, c *weaviatetest.Cluster) {
	ctx := context.Background()
	s := newStore(t, c, "RmRace")
	fixture(t, s)
	proceed := holdPause(t, s)
	other := newStore(t, c, "RmRace")
	seen, err := other.readState(ctx, "docs", Quorum)
	if err != nil || seen == nil || seen.LockHolder != "" {
		t.Fatalf("the record before anyone writes: %+v %v", seen, err)
	}
	buildDone := make(chan struct{})
	removed := make(chan error, 1)
	go func() {
		_, err := s.Remove(ctx, "docs", func(index.Info) error {
			<-buildDone // the user answers after the build read its lease back
			return nil
		})
		removed <- err
	}()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(2 * time.Millisecond) {
		if st, err := other.readState(ctx, "docs", Quorum); err == nil && st != nil && st.LockHolder != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("rm never wrote its lease")
		}
	}
	mine := other.newHolder()
	seen.LockHolder, seen.LockExpires = mine, other.lease.expiry()
	if err := other.writeState(ctx, seen); err != nil {
		t.Fatal(err)
	}
	proceed()
	back, err := other.readState(ctx, "docs", Quorum)
	close(buildDone)
	if err != nil {
		t.Fatal(err)
	}
	builds := back != nil && back.LockHolder == mine
	err = <-removed
	if err != nil && !errors.Is(err, index.ErrLocked) {
		t.Errorf("rm: %v, want ErrLocked or the removal", err)
	}
	if (err == nil) == builds {
		t.Errorf("rm removed the index: %v, the build holds its lease: %v; want exactly one", err == nil, builds)
	}
	if builds {
		if st, err := other.readState(ctx, "docs", Quorum); err != nil || st == nil || st.LockHolder != mine {
			t.Errorf("the index the build holds: %+v %v", st, err)
		}
	}
}

// testCancelledBegin: a build cancelled while it settles its lease (Ctrl+C
// in the first half second) gives the lease back, so another machine can
// build at once rather than be refused until the lease expires.
func testCancelledBegin(t *testing.T, c *weaviatetest.Cluster) {
	s := newStore(t, c, "Cancelled")
	fixture(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cancelInPause(s, cancel)
	if w, err := s.BeginWrite(ctx, index.WriteRequest{Name: "docs"}); !errors.Is(err, context.Canceled) {
		if w != nil {
			w.Close()
		}
		t.Fatalf("BeginWrite cancelled while it settles: %v", err)
	}
	other := newStore(t, c, "Cancelled")
	w, err := other.BeginWrite(context.Background(), index.WriteRequest{Name: "docs"})
	if err != nil {
		t.Fatalf("another lore after the cancelled build: %v", err)
	}
	w.Close()
}

// testCancelledWatch: a watcher cancelled while it settles its lease (a
// Ctrl+C as `lore watch` starts) gives the lease back, as a build does:
// left, it would refuse every other watcher until it expired.
func testCancelledWatch(t *testing.T, c *weaviatetest.Cluster) {
	s := newStore(t, c, "WCancelled")
	fixture(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cancelInPause(s, cancel)
	if l, err := s.Watch(ctx, "docs"); !errors.Is(err, context.Canceled) {
		if l != nil {
			l.Close()
		}
		t.Fatalf("Watch cancelled while it settles: %v", err)
	}
	l, err := newStore(t, c, "WCancelled").Watch(context.Background(), "docs")
	if err != nil {
		t.Fatalf("another lore's watcher after the cancelled one: %v", err)
	}
	l.Close()
}

// holdPause makes every lease read-back of s wait until proceed is
// called, as if the pause before it lasted until then, and every one
// after it skip the pause: a test of two contenders has the second write its lease
// within the first's pause, as it would on a cluster, without a pause
// long enough for a loaded machine.
func holdPause(t *testing.T, s *Store) (proceed func()) {
	release := make(chan struct{})
	var once sync.Once
	proceed = func() { once.Do(func() { close(release) }) }
	s.lease.pause = func(ctx context.Context) error {
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	t.Cleanup(proceed)
	return proceed
}

// cancelInPause has s's next lease read-back's pause call cancel (the
// cancel of the context the caller passes), as a Ctrl+C landing in it
// would; the rest of the test pauses as usual.
func cancelInPause(s *Store, cancel func()) {
	pause := s.lease.pause
	var once sync.Once
	s.lease.pause = func(ctx context.Context) error {
		once.Do(cancel)
		select {
		case <-ctx.Done():
			return ctx.Err()
		default:
			return pause(ctx)
		}
	}
}
