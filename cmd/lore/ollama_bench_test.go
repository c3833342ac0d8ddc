package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/ingest"
	"github.com/lore-cli/lore/index/local"
	"github.com/lore-cli/lore/internal/benchdata"
	"github.com/lore-cli/lore/internal/testmodels"
)

// BenchmarkRealOllama measures lore against a real Ollama server running
// the tiny generated model: `make bench` starts one on loopback and sets
// LORE_BENCH_OLLAMA (see scripts/with-ollama.sh). It reports
//
//   - AskTTFT: `lore ask` (a real process) from exec to the first answer
//     byte on stdout, split into stages by a recording proxy between lore and
//     Ollama, against the server's own time to first token for the same
//     final prompt sent straight to /api/chat, in alternating rounds;
//   - Index: chunks/s of `lore index` with the real /api/embed, and of the
//     same build with embedding free (vectors handed out in-process);
//   - AskRSS100k: peak RSS of `lore ask` over a 100k-chunk index of 768-d
//     vectors, against the vectors' raw float32 bytes, and the start-up of
//     `lore search` over it: the process's wall time less the query's
//     embedding, and the vector stage of its first search, which opens the
//     graph. AskRSS1M is the same at 1M chunks (make bench-large).
func BenchmarkRealOllama(b *testing.B) {
	host := os.Getenv("LORE_BENCH_OLLAMA")
	if host == "" {
		b.Skip("needs a real Ollama server: run `make bench`, or set LORE_BENCH_OLLAMA=HOST:PORT with the model in LORE_BENCH_MODEL")
	}
	m := benchModels{chat: cmp.Or(os.Getenv("LORE_BENCH_MODEL"), "lore-tiny")}
	m.embed = cmp.Or(os.Getenv("LORE_BENCH_EMBED_MODEL"), m.chat)
	m.embed768 = cmp.Or(os.Getenv("LORE_BENCH_EMBED768_MODEL"), m.embed)
	b.Run("AskTTFT", func(b *testing.B) { benchAskTTFT(b, host, m) })
	b.Run("Index", func(b *testing.B) { benchIndexEmbed(b, host, m) })
	b.Run("AskRSS100k", func(b *testing.B) { benchAskRSS(b, host, m, 10000) })
	b.Run("AskRSS1M", func(b *testing.B) {
		if os.Getenv("LORE_BENCH_LARGE") == "" {
			b.Skip("1M chunks: make bench-large")
		}
		benchAskRSS(b, host, m, 100000)
	})
}

// benchModels are the chat and embedding models. They should be different
// model files: Ollama runs one runner per file and reloads it when the
// context size changes, which lore's embed and chat requests do. embed768
// has a real embedding model's dimension, for the memory measurement.
type benchModels struct{ chat, embed, embed768 string }

const benchQuestion = "how do I keep lore from indexing a folder?"

// benchEnv is a user environment for lore processes that talk to host.
func benchEnv(b *testing.B, host string, m benchModels) *env {
	e := newEnv(b)
	e.vars["OLLAMA_HOST"] = host
	e.vars["LORE_EMBED_MODEL"] = m.embed
	e.vars["LORE_CHAT_MODEL"] = m.chat
	if lib := os.Getenv("LORE_ONNXRUNTIME_LIB"); lib != "" {
		e.vars["LORE_ONNXRUNTIME_LIB"] = lib
	}
	return e
}

func benchAskTTFT(b *testing.B, host string, m benchModels) {
	e := benchEnv(b, host, m)
	docs, _ := filepath.Abs("../../docs")
	if r := e.run(false, "index", "--quiet", docs); r.code != 0 {
		b.Fatalf("index: %s", r.stderr)
	}
	withTinyReranker(b, e)
	proxy := newRecordingProxy(b, host)
	e.vars["OLLAMA_HOST"] = proxy.URL
	const rounds = 9
	stages := map[string][]time.Duration{}
	for round := range rounds + 1 {
		st, prompt := proxy.askOnce(b, e)
		direct := directTTFT(b, host, prompt)
		if round == 0 {
			continue // loads the models into memory; not a user's steady state
		}
		st["direct-ttft"] = direct
		st["overhead"] = st["lore-ttft"] - direct
		for k, v := range st {
			stages[k] = append(stages[k], v)
		}
	}
	for _, k := range []string{"lore-ttft", "direct-ttft", "overhead", "startup", "before-embed", "query-embed",
		"retrieve", "rerank", "to-chat", "ollama-ttft", "to-stdout"} {
		b.ReportMetric(benchdata.Millis(stages[k], 50), k+"-ms")
	}
	b.ReportMetric(benchdata.Millis(stages["lore-ttft"], 50)/benchdata.Millis(stages["direct-ttft"], 50), "lore/direct")
}

// withTinyReranker installs a random-weight cross-encoder of the tiny shape
// so that the rerank stage runs (its cost at real model sizes is
// BenchmarkRerank's subject), and sets the web threshold below any score so
// that every question is answered from the docs.
func withTinyReranker(b *testing.B, e *env) {
	dir := filepath.Join(b.TempDir(), "reranker")
	if err := testmodels.WriteCrossEncoder(dir, testmodels.Tiny, nil); err != nil {
		b.Fatal(err)
	}
	if r := e.run(false, "models", "import", dir, "--name", "bench-reranker"); r.code != 0 {
		b.Fatalf("models import: %s", r.stderr)
	}
	e.vars["LORE_RERANK_MODEL"] = "bench-reranker"
	e.vars["LORE_WEB_FALLBACK_THRESHOLD"] = "-1e9"
}

// recordingProxy sits between lore and Ollama and timestamps each request:
// when it arrived, when the first byte of the answer came back, when it
// ended. It keeps the body of the last /api/chat request, the final prompt.
type recordingProxy struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []*proxied
	chat []byte
}

type proxied struct {
	path                  string
	start, firstByte, end time.Time
}

func newRecordingProxy(b *testing.B, host string) *recordingProxy {
	target, _ := url.Parse("http://" + host)
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.FlushInterval = -1 // stream as the server writes
	p := &recordingProxy{}
	rp.ModifyResponse = func(resp *http.Response) error {
		resp.Body = &timedBody{ReadCloser: resp.Body, mu: &p.mu, r: resp.Request.Context().Value(reqKey{}).(*proxied)}
		return nil
	}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		p.mu.Lock()
		req := &proxied{path: r.URL.Path, start: time.Now()}
		p.reqs = append(p.reqs, req)
		if r.URL.Path == "/api/chat" {
			p.chat = body
		}
		p.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), reqKey{}, req)))
	}))
	b.Cleanup(p.Close)
	return p
}

type reqKey struct{}

type timedBody struct {
	io.ReadCloser
	mu *sync.Mutex
	r  *proxied
}

func (t *timedBody) Read(buf []byte) (int, error) {
	n, err := t.ReadCloser.Read(buf)
	now := time.Now()
	t.mu.Lock()
	if n > 0 && t.r.firstByte.IsZero() {
		t.r.firstByte = now
	}
	if err != nil {
		t.r.end = now
	}
	t.mu.Unlock()
	return n, err
}

var stageLine = regexp.MustCompile(`(?m)^(\w+)\s+(\d+) ms$`)

// askOnce runs `lore ask` as a process and splits its time to first
// answer byte into stages. It returns them with the chat request's body.
func (p *recordingProxy) askOnce(b *testing.B, e *env) (map[string]time.Duration, []byte) {
	p.mu.Lock()
	p.reqs, p.chat = nil, nil
	p.mu.Unlock()
	cmd := exec.Command(os.Args[0], "ask", "--verbose", benchQuestion)
	cmd.Env = benchProcEnv(e)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, _ := cmd.StdoutPipe()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	var first time.Time
	buf := make([]byte, 4096)
	for {
		n, err := stdout.Read(buf)
		if n > 0 && first.IsZero() {
			first = time.Now()
		}
		if err != nil {
			break
		}
	}
	if err := cmd.Wait(); err != nil || first.IsZero() {
		b.Fatalf("lore ask: %v (no answer: %v): %s", err, first.IsZero(), stderr.String())
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var embed, chat *proxied
	for _, r := range p.reqs {
		switch r.path {
		case "/api/embed":
			embed = cmp.Or(embed, r)
		case "/api/chat":
			chat = r
		}
	}
	if embed == nil || chat == nil || len(p.reqs) == 0 {
		b.Fatalf("lore ask made no query embedding or chat request: %+v", p.reqs)
	}
	st := map[string]time.Duration{
		"lore-ttft":    first.Sub(start),
		"startup":      p.reqs[0].start.Sub(start),
		"before-embed": embed.start.Sub(p.reqs[0].start),
		"query-embed":  embed.end.Sub(embed.start),
		"to-chat":      chat.start.Sub(embed.end),
		"ollama-ttft":  chat.firstByte.Sub(chat.start),
		"to-stdout":    first.Sub(chat.firstByte),
	}
	for _, m := range stageLine.FindAllStringSubmatch(stderr.String(), -1) {
		if m[1] == "retrieve" || m[1] == "rerank" {
			n, _ := strconv.Atoi(m[2])
			st[m[1]] = time.Duration(n) * time.Millisecond
		}
	}
	return st, p.chat
}

func benchProcEnv(e *env) []string {
	vars := []string{"LORE_TEST_MAIN=1", "PATH=" + os.Getenv("PATH")}
	for k, v := range e.vars {
		vars = append(vars, k+"="+v)
	}
	return vars
}

// directTTFT sends body to the server's /api/chat and returns the time to
// the first message with content, then drains the stream so the runner is
// idle for the next round.
func directTTFT(b *testing.B, host string, body []byte) time.Duration {
	start := time.Now()
	resp, err := http.Post("http://"+host+"/api/chat", "application/json", bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var ttft time.Duration
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m struct {
			Message struct{ Content string }
			Error   string
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m.Error != "" {
			b.Fatalf("direct chat: %v %s", err, m.Error)
		}
		if ttft == 0 && m.Message.Content != "" {
			ttft = time.Since(start)
		}
	}
	if ttft == 0 {
		b.Fatal("direct chat streamed no content")
	}
	return ttft
}

// benchIndexEmbed indexes the same corpus twice: with the model's real
// /api/embed, and with embedding free, so the difference is the model's.
func benchIndexEmbed(b *testing.B, host string, m benchModels) {
	src := b.TempDir()
	if err := benchdata.WriteCorpus(src, 30, 10); err != nil {
		b.Fatal(err)
	}
	e := benchEnv(b, host, m)
	start := time.Now()
	r := e.run(false, "index", "--json", src)
	real := time.Since(start)
	var sum struct {
		Chunks   int `json:"chunks"`
		Embedded int `json:"chunks_embedded"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil || r.code != 0 || sum.Embedded != sum.Chunks {
		b.Fatalf("index: exit %d %s %+v", r.code, r.stderr, sum)
	}
	free, dim := freeBuild(b, host, m.embed, src, b.TempDir())
	b.ReportMetric(float64(sum.Chunks), "chunks")
	b.ReportMetric(float64(dim), "dim")
	b.ReportMetric(float64(sum.Chunks)/real.Seconds(), "real-embed-chunks/s")
	b.ReportMetric(float64(sum.Chunks)/free.Seconds(), "no-embed-chunks/s")
	b.ReportMetric(free.Seconds()/real.Seconds(), "share-not-embedding")
}

// freeBuild builds an index of src in dir under the model's name and
// dimension with vectors that cost nothing, and returns how long it took.
// The build runs in a child process: os/exec clones with
// CLONE_VM|CLONE_VFORK, so the child execs out of this process's address
// space and Linux carries that space's peak into the child's ru_maxrss; a
// large build here would show up as the peak of every lore process
// measured after it.
func freeBuild(b *testing.B, host, model, src, dir string) (time.Duration, int) {
	dim := modelDim(b, host, model)
	spec, _ := json.Marshal(freeBuildSpec{Src: src, Dir: dir, Model: model, Dim: dim})
	cmd := exec.Command(os.Args[0])
	cmd.Env = []string{"LORE_TEST_FREE_BUILD=" + string(spec)}
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("build: %v: %s", err, out)
	}
	secs, err := strconv.ParseFloat(string(bytes.TrimSpace(out)), 64)
	if err != nil {
		b.Fatalf("build: %s", out)
	}
	return time.Duration(secs * float64(time.Second)), dim
}

type freeBuildSpec struct {
	Src, Dir, Model string
	Dim             int
}

// runFreeBuild is the child side of freeBuild (see TestMain): it prints the
// build's seconds.
func runFreeBuild(specJSON string) int {
	var spec freeBuildSpec
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		fmt.Println(err)
		return 1
	}
	opt := index.BuildOptions{Name: "default", Paths: []string{spec.Src}, Embedder: &freeEmbedder{model: spec.Model, dim: spec.Dim, rng: rand.New(rand.NewSource(1))},
		EmbedBatchSize: 64, Chunk: ingest.ChunkOptions{Size: 1500, Overlap: 200}, MaxFileSize: 4 << 20}
	start := time.Now()
	if _, err := local.Build(context.Background(), spec.Dir, opt); err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Println(time.Since(start).Seconds())
	return 0
}

// modelDim asks the server for one embedding.
func modelDim(b *testing.B, host, model string) int {
	body, _ := json.Marshal(map[string]any{"model": model, "input": "x"})
	resp, err := http.Post("http://"+host+"/api/embed", "application/json", bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ Embeddings [][]float32 }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || len(out.Embeddings) != 1 {
		b.Fatalf("embed: %v", err)
	}
	return len(out.Embeddings[0])
}

// freeEmbedder hands out random unit vectors under a real model's name, so
// an index it builds opens with that model's query embeddings.
type freeEmbedder struct {
	model string
	dim   int
	rng   *rand.Rand
}

func (f *freeEmbedder) Model() string                      { return f.model }
func (f *freeEmbedder) Check(context.Context) (int, error) { return f.dim, nil }
func (f *freeEmbedder) EmbedQuery(ctx context.Context, s string) ([]float32, error) {
	v, err := f.EmbedDocuments(ctx, []string{s})
	return v[0], err
}
func (f *freeEmbedder) EmbedDocuments(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		v := make([]float32, f.dim)
		var n float32
		for j := range v {
			v[j] = float32(f.rng.NormFloat64())
			n += v[j] * v[j]
		}
		for j := range v {
			v[j] /= float32(math.Sqrt(float64(n)))
		}
		out[i] = v
	}
	return out, nil
}

// benchAskRSS builds an index of files×10 chunks (vectors free, under the
// model's name) and measures `lore ask` and `lore search` processes over it.
func benchAskRSS(b *testing.B, host string, m benchModels, files int) {
	src := b.TempDir()
	if err := benchdata.WriteCorpus(src, files, 10); err != nil {
		b.Fatal(err)
	}
	m.embed = m.embed768
	e := benchEnv(b, host, m)
	dir := filepath.Join(e.home, "data", "lore", "indexes", "default")
	build, dim := freeBuild(b, host, m.embed, src, dir)
	withTinyReranker(b, e)
	ix, err := local.Open(dir, "default")
	if err != nil {
		b.Fatal(err)
	}
	st, err := ix.Status(context.Background())
	ix.Close()
	if err != nil {
		b.Fatal(err)
	}
	var rss []float64
	var total []time.Duration
	for range 3 {
		cmd := exec.Command(os.Args[0], "ask", "--json", "the word index and the word search")
		cmd.Env = benchProcEnv(e)
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		if err := cmd.Run(); err != nil {
			b.Fatalf("lore ask: %v: %s", err, stderr.String())
		}
		var res struct {
			Answer  string
			Timings map[string]float64 `json:"timings_ms"`
		}
		if json.Unmarshal(out.Bytes(), &res); res.Answer == "" {
			b.Fatalf("lore ask gave no answer: %s", out.String())
		}
		rss = append(rss, float64(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss)/1024)
		total = append(total, time.Duration(res.Timings["total"]*float64(time.Millisecond)))
	}
	slices.Sort(rss)
	if self := benchdata.PeakRSSMiB(); rss[0] <= self {
		b.Fatalf("lore ask peaked at %.0f MiB, no more than this process's %.0f MiB: the number is this process's, not lore's", rss[0], self)
	}

	// Start-up of `lore search`: each run is a new process whose first
	// search opens the graph.
	var startup, vector []time.Duration
	for range 5 {
		cmd := exec.Command(os.Args[0], "search", "--json", "--no-rerank", "-k", "5", "the word index and the word search")
		cmd.Env = benchProcEnv(e)
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		start := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("lore search: %v: %s", err, stderr.String())
		}
		wall := time.Since(start)
		var res struct {
			Mode    string
			Timings map[string]float64 `json:"timings_ms"`
		}
		if json.Unmarshal(out.Bytes(), &res); res.Mode != "hybrid" {
			b.Fatalf("lore search was not hybrid: %s %s", out.String(), stderr.String())
		}
		ms := func(k string) time.Duration { return time.Duration(res.Timings[k] * float64(time.Millisecond)) }
		startup = append(startup, wall-ms("embed"))
		vector = append(vector, ms("vector"))
	}
	raw := float64(st.Chunks) * float64(dim) * 4 / (1 << 20)
	b.ReportMetric(float64(st.Chunks), "chunks")
	b.ReportMetric(float64(dim), "dim")
	b.ReportMetric(build.Seconds(), "build-s")
	b.ReportMetric(rss[len(rss)-1], "peak-RSS-MiB")
	b.ReportMetric(raw, "raw-vectors-MiB")
	b.ReportMetric(rss[len(rss)-1]-raw, "RSS-over-raw-MiB")
	b.ReportMetric(benchdata.Millis(total, 50), "answer-total-ms")
	b.ReportMetric(benchdata.Millis(startup, 50), "search-startup-ms")
	b.ReportMetric(benchdata.Millis(vector, 50), "search-vector-ms")
}
