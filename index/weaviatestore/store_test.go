package weaviatestore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-openapi/strfmt"
	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/ingest"
	"github.com/lore-cli/lore/internal/weaviatetest"
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
	eOllama   = []float32{1, 0, 0, 0}
	eGarden   = []float32{0, 1, 0, 0}
	eUser     = []float32{0, 0, 1, 0}
	eDecoy    = []float32{0, 0, 0, 1}
	chOllama  = ingest.Chunk{Start: 1, End: 3, Heading: "Configuration", Kind: "prose", Text: "Set OLLAMA_HOST to point lore at another server."}
	chGarden  = ingest.Chunk{Start: 5, End: 9, Heading: "Elsewhere", Kind: "prose", Text: "Unrelated prose about gardening and ripe tomatoes in summer."}
	chUser    = ingest.Chunk{Start: 1, End: 4, Kind: "code", Text: "func getUserById(id int) (*User, error) {\n\treturn db.find(id)\n}"}
	chDecoy   = ingest.Chunk{Start: 6, End: 8, Kind: "code", Text: "// the ollama host: ollama runs on a host, the host of ollama, host host"}
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

// One node, one cluster for the whole run; each subtest its own prefix.
func TestSingleNode(t *testing.T) {
	c := weaviatetest.Start(t, 1)
	ctx := context.Background()

	t.Run("schema", func(t *testing.T) {
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
	})

	s := newStore(t, c, "Lore")
	w := begin(t, s, "docs", false)
	src, err := w.AddSource(ctx, "/nowhere/docs")
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := w.AddSource(ctx, "/nowhere/docs"); again != src || src.ID != 1 {
		t.Errorf("AddSource twice: %+v %+v", src, again)
	}
	write(t, w, fixtureVecs(), fileUpdate(src.ID, "guide/setup.md", chOllama, chGarden), fileUpdate(src.ID, "user.go", chUser, chDecoy))
	if files, chunks := publish(t, w); files != 2 || chunks != 4 {
		t.Fatalf("Publish: %d files, %d chunks", files, chunks)
	}

	t.Run("search", func(t *testing.T) {
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
		rrf := open(t, newStore(t, c, "Lore", func(c *Config) { c.Hybrid = HybridLore }), "docs")
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
		if _, err := r.SearchVector(ctx, "x", []float32{1, 0}, index.SearchOptions{}, 0); !errors.Is(err, index.ErrDimension) {
			t.Errorf("a 2-d query: %v", err)
		}

		res = search(t, r, "OLLAMA_HOST", eOllama, index.SearchOptions{Limit: 3})
		if res.Mode != "hybrid" || len(res.Hits) != 3 || texts(res.Hits)[0] != "guide/setup.md:Set" || res.Hits[0].Score <= 0 {
			t.Errorf("weaviate hybrid: %s %v", res.Mode, texts(res.Hits))
		}
	})

	t.Run("read", func(t *testing.T) {
		r := open(t, s, "docs")
		files, err := r.Files(ctx)
		if err != nil || len(files) != 2 || files[0].Path != "guide/setup.md" || files[1].Path != "user.go" || files[0].Source != "/nowhere/docs" {
			t.Errorf("Files: %+v %v", files, err)
		}
		p, err := r.ReadPassage(ctx, "guide/setup.md", 0, 0, 0)
		if err != nil || !p.FromChunks || p.Start != 1 || p.End != 9 || p.Text != chOllama.Text+"\n\n"+chGarden.Text {
			t.Errorf("ReadPassage: %+v %v", p, err)
		}
		if p, err := r.ReadPassage(ctx, "/nowhere/docs/guide/setup.md", 4, 6, 0); err != nil || p.Text != chGarden.Text {
			t.Errorf("ReadPassage absolute, lines 4-6: %+v %v", p, err)
		}
		for _, bad := range []string{"missing.md", "../etc/passwd", "/etc/passwd", ""} {
			if _, err := r.ReadPassage(ctx, bad, 0, 0, 0); !errors.Is(err, index.ErrNotIndexed) {
				t.Errorf("ReadPassage(%q): %v", bad, err)
			}
		}
		a, err := r.SampleChunks(ctx, 2, 50, 7)
		b, _ := r.SampleChunks(ctx, 2, 50, 7)
		if err != nil || len(a) != 2 || strings.Join(texts(a), ",") != strings.Join(texts(b), ",") {
			t.Errorf("SampleChunks: %v %v %v", texts(a), texts(b), err)
		}
		for _, h := range a {
			if len(h.Text) < 50 {
				t.Errorf("sampled a short chunk: %q", h.Text)
			}
		}
		st, err := r.Status(ctx)
		if err != nil || st.Documents != 2 || st.Chunks != 4 || st.Vectors != 4 || st.Embedder != "test-embed" || st.Dimension != 4 ||
			st.BuiltAt == nil || st.ChunksByKind["code"] != 2 || st.DocumentsByKind["markdown"] != 1 || len(st.Sources) != 1 || st.Damaged != "" {
			t.Errorf("Status: %+v %v", st, err)
		}
		if changed, err := r.Changed(ctx, "/nowhere/docs", "user.go"); changed || err != nil {
			t.Errorf("Changed on a source not on this machine: %v %v", changed, err)
		}
		gs, err := r.CheckGraph(ctx)
		if err != nil || !gs.Needed || !gs.Present || gs.Nodes != 4 || gs.Vectors != 4 || gs.Problem != "" {
			t.Errorf("CheckGraph: %+v %v", gs, err)
		}
		if err := r.Check(ctx); err != nil {
			t.Error(err)
		}
		list, err := s.List(ctx)
		if err != nil || len(list) != 1 || list[0].Name != "docs" || !list[0].Built || list[0].Chunks != 4 || list[0].Embedder != "test-embed" ||
			list[0].Path != "weaviate:"+r.chunks {
			t.Errorf("List: %+v %v", list, err)
		}
	})

	t.Run("rewrite", func(t *testing.T) {
		w := begin(t, s, "docs", false)
		docs, err := w.Documents(ctx, src.ID)
		if err != nil || len(docs) != 2 || docs["user.go"].MTimeNS != fileUpdate(1, "x", chUser).MTimeNS || docs["user.go"].Status != index.StatusIndexed {
			t.Fatalf("Documents: %+v %v", docs, err)
		}
		// Twice, as a retry after a timeout would: the same objects again.
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
	})

	t.Run("vectors", func(t *testing.T) {
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
		w = begin(t, s, "docs", false) // no cache: the cluster's answer
		if m, err := w.MissingVectors(ctx, []string{h1, h2}); err != nil || len(m) != 1 || !m[h2] {
			t.Errorf("MissingVectors from a new writer: %v %v", m, err)
		}
		// A chunk whose vector a previous run stored gets it from there.
		write(t, w, nil, fileUpdate(src.ID, "one.txt", ingest.Chunk{Start: 1, End: 1, Kind: "prose", Text: "one"}))
		publish(t, w)
		res := search(t, open(t, s, "docs"), "", []float32{0, 0, 0.5, 0.5}, index.SearchOptions{NoLexical: true, Limit: 1})
		if len(res.Hits) != 1 || res.Hits[0].Path != "one.txt" {
			t.Errorf("the stored vector was not used: %v", texts(res.Hits))
		}
	})

	t.Run("remove documents", func(t *testing.T) {
		w := begin(t, s, "docs", false)
		docs, err := w.Documents(ctx, src.ID)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.RemoveDocuments(ctx, []int64{docs["user.go"].ID, docs["one.txt"].ID}); err != nil {
			t.Fatal(err)
		}
		if files, chunks := publish(t, w); files != 1 || chunks != 1 {
			t.Errorf("after RemoveDocuments: %d files, %d chunks", files, chunks)
		}
		r := open(t, s, "docs")
		if res := search(t, r, "getUserById", nil, index.SearchOptions{}); len(res.Hits) != 0 {
			t.Errorf("a removed document is found: %v", texts(res.Hits))
		}
		if _, err := r.ReadPassage(ctx, "user.go", 0, 0, 0); !errors.Is(err, index.ErrNotIndexed) {
			t.Errorf("ReadPassage of a removed document: %v", err)
		}
	})

	t.Run("lost chunk", func(t *testing.T) {
		// A chunk the cluster took and then lost, in a run cut short
		// before its Publish: the next run's Publish finds it (it checks
		// what was written since the last Publish, not only by itself),
		// forgets the file so that the next pass writes it again, and
		// says which.
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
		if _, err := s.Remove(ctx, "lost", nil); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("damaged meta", func(t *testing.T) {
		// A meta object lore cannot read: reads and builds refuse with the
		// fix, and the fix (removal) works, collections and all.
		w := begin(t, s, "bad", false)
		bsrc, err := w.AddSource(ctx, "/nowhere/bad")
		if err != nil {
			t.Fatal(err)
		}
		write(t, w, fixtureVecs(), fileUpdate(bsrc.ID, "a.md", chOllama))
		publish(t, w)
		chunks := w.chunks
		garbage := &models.Object{Class: metaClass("Lore"), ID: strfmt.UUID(metaID("bad")), Properties: map[string]any{"name": "bad", "generations": "{not json"}}
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
	})

	t.Run("rebuild", func(t *testing.T) {
		old := open(t, s, "docs")
		gen := s.Generation(ctx, "docs")
		w := begin(t, s, "docs", true)
		if w.gen == old.gen {
			t.Fatal("a rebuild writes the current generation")
		}
		// Another process (another holder) is refused while it writes, and
		// so is a second build in this one (lore serve or mcp with writes).
		if _, err := newStore(t, c, "Lore").BeginWrite(ctx, index.WriteRequest{Name: "docs"}); !errors.Is(err, index.ErrLocked) {
			t.Errorf("a second writer: %v", err)
		}
		if _, err := s.BeginWrite(ctx, index.WriteRequest{Name: "docs"}); !errors.Is(err, index.ErrLocked) {
			t.Errorf("a second writer in the same process: %v", err)
		}
		if _, err := newStore(t, c, "Lore").Remove(ctx, "docs", nil); !errors.Is(err, index.ErrLocked) {
			t.Errorf("Remove while a writer holds the index: %v", err)
		}
		if prev, err := w.PreviousSources(ctx); err != nil || len(prev) != 1 || prev[0] != "/nowhere/docs" {
			t.Errorf("PreviousSources: %v %v", prev, err)
		}
		nsrc, err := w.AddSource(ctx, "/nowhere/docs")
		if err != nil {
			t.Fatal(err)
		}
		write(t, w, fixtureVecs(), fileUpdate(nsrc.ID, "user.go", chUser))
		// Until Publish, readers see the old generation.
		if s.Generation(ctx, "docs") != gen {
			t.Error("the generation changed before Publish")
		}
		for _, r := range []*Reader{old, open(t, s, "docs")} {
			if res := search(t, r, "getUserById", nil, index.SearchOptions{}); len(res.Hits) != 0 {
				t.Errorf("the rebuild is visible before Publish: %v", texts(res.Hits))
			}
			if res := search(t, r, "config.yaml", nil, index.SearchOptions{}); len(res.Hits) != 1 {
				t.Errorf("the old generation is not readable: %v", texts(res.Hits))
			}
		}
		publish(t, w)
		if s.Generation(ctx, "docs") == gen {
			t.Error("the generation did not change at Publish")
		}
		r := open(t, s, "docs")
		if res := search(t, r, "getUserById", nil, index.SearchOptions{}); len(res.Hits) != 1 {
			t.Errorf("the new generation: %v", texts(res.Hits))
		}
		if res := search(t, r, "config.yaml", nil, index.SearchOptions{}); len(res.Hits) != 0 {
			t.Errorf("the old generation's chunks in the new: %v", texts(res.Hits))
		}
		for _, k := range kinds {
			if cl, err := s.getClass(ctx, s.class("docs", old.gen, k)); err != nil || cl != nil {
				t.Errorf("the old %s collection is still there (%v)", k, err)
			}
		}
		if _, err := old.Chunks(ctx); !errors.Is(err, index.ErrCorrupt) {
			t.Errorf("a reader of a dropped generation: %v (want it told to reopen)", err)
		}
	})

	t.Run("on disk", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "a.md")
		data := []byte("Set OLLAMA_HOST first.\n")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		fi, _ := os.Stat(path)
		sum := sha256.Sum256(data)
		up := index.FileUpdate{Path: "a.md", Size: fi.Size(), MTimeNS: fi.ModTime().UnixNano(), Hash: hex.EncodeToString(sum[:16]),
			Status: index.StatusIndexed, Chunker: "test", Chunks: []ingest.Chunk{{Start: 1, End: 1, Kind: "prose", Text: "Set OLLAMA_HOST first."}}}
		w := begin(t, s, "disk", false)
		src, err := w.AddSource(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		up.SourceID = src.ID
		if err := w.WriteFiles(ctx, []index.FileUpdate{up}); err != nil {
			t.Fatal(err)
		}
		publish(t, w)
		r := open(t, s, "disk")
		changed := func() bool {
			t.Helper()
			c, err := r.Changed(ctx, dir, "a.md")
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		if changed() {
			t.Error("an untouched file is changed")
		}
		if c, _ := r.Changed(ctx, dir, "b.md"); !c {
			t.Error("a file the index does not hold is not changed")
		}
		later := fi.ModTime().Add(time.Hour)
		os.Chtimes(path, later, later)
		if changed() {
			t.Error("a touch that kept the bytes is a change")
		}
		if st, err := r.Status(ctx); err != nil || len(st.Changed) != 1 || st.Changed[0].Change != "modified" {
			t.Errorf("Status after a touch: %+v %v", st.Changed, err)
		}
		w = begin(t, s, "disk", false)
		up.MTimeNS = later.UnixNano()
		if err := w.TouchFiles(ctx, []index.FileUpdate{up}); err != nil {
			t.Fatal(err)
		}
		docs, err := w.Documents(ctx, src.ID)
		if err != nil || docs["a.md"].MTimeNS != later.UnixNano() || docs["a.md"].Hash != up.Hash || docs["a.md"].Size != fi.Size() {
			t.Errorf("Documents after TouchFiles: %+v %v", docs, err)
		}
		publish(t, w)
		if st, err := r.Status(ctx); err != nil || len(st.Changed) != 0 || st.Chunks != 1 {
			t.Errorf("Status after TouchFiles: %+v %v", st, err)
		}
		os.WriteFile(path, []byte("Set OLLAMA_HOST last.\n"), 0o644)
		if !changed() {
			t.Error("other bytes of the same size are no change")
		}
		os.Remove(path)
		if !changed() {
			t.Error("a deleted file is no change")
		}
		if st, _ := r.Status(ctx); len(st.Changed) != 1 || st.Changed[0].Change != "deleted" {
			t.Errorf("Status after a delete: %+v", st.Changed)
		}
	})

	t.Run("remove", func(t *testing.T) {
		r := open(t, s, "docs")
		no := errors.New("no")
		if _, err := s.Remove(ctx, "docs", func(index.Info) error {
			if _, err := newStore(t, c, "Lore").BeginWrite(ctx, index.WriteRequest{Name: "docs"}); !errors.Is(err, index.ErrLocked) {
				t.Errorf("a build while Remove asks: %v", err)
			}
			return no
		}); err != no {
			t.Fatalf("Remove, refused: %v", err)
		}
		if n := chunkCount(t, open(t, s, "docs")); n != 1 {
			t.Errorf("a refused Remove left %d chunks", n)
		}
		var asked index.Info
		if _, err := s.Remove(ctx, "docs", func(in index.Info) error { asked = in; return nil }); err != nil {
			t.Fatal(err)
		}
		if asked.Name != "docs" || asked.Chunks != 1 {
			t.Errorf("confirm saw %+v", asked)
		}
		if names, err := s.Names(ctx); err != nil || len(names) != 1 || names[0] != "disk" {
			t.Errorf("Names after Remove: %v %v", names, err)
		}
		if _, err := s.Open(ctx, "docs"); !errors.Is(err, index.ErrNoIndex) {
			t.Errorf("Open after Remove: %v", err)
		}
		if cl, _ := s.getClass(ctx, r.chunks); cl != nil {
			t.Error("the chunks collection is still there")
		}
	})
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
