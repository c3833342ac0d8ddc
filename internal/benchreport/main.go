// Command benchreport turns the output of `make bench` (the text of `go test
// -bench` runs) into the generated section of BENCHMARKS.md: the ratios the
// project tracks, each measured side by side in the same run, and every
// metric of that run. The rest of BENCHMARKS.md (history, analysis) is
// written by hand and left alone.
//
//	benchreport RESULTS.txt BENCHMARKS.md
package main

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/lore-cli/lore/internal/units"
)

const (
	begin = "<!-- make bench: generated section, do not edit by hand -->"
	end   = "<!-- make bench: end of generated section -->"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: benchreport RESULTS.txt BENCHMARKS.md")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(1)
	}
}

func run(resultsPath, mdPath string) error {
	f, err := os.Open(resultsPath)
	if err != nil {
		return err
	}
	defer f.Close()
	res, err := parse(f)
	if err != nil {
		return err
	}
	md, err := os.ReadFile(mdPath)
	if err != nil {
		return err
	}
	out := splice(string(md), render(res, time.Now()))
	tmp := mdPath + ".tmp"
	if err := os.WriteFile(tmp, []byte(out), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, mdPath)
}

// results are the metrics of one run, by benchmark name (without the
// -GOMAXPROCS suffix) and unit, in the order they were printed.
type results struct {
	cpu     string
	order   []string
	metrics map[string][]metric
	notes   []string // lines the benchmarks printed besides their results
}

type metric struct {
	unit  string
	value float64
}

var procSuffix = regexp.MustCompile(`-\d+$`)

func parse(r io.Reader) (results, error) {
	res := results{metrics: map[string][]metric{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "cpu: "):
			res.cpu = strings.TrimPrefix(line, "cpu: ")
		case strings.HasPrefix(line, "Benchmark"):
			fields := strings.Fields(line)
			if len(fields) < 4 {
				continue // a benchmark that printed before its result line
			}
			name := procSuffix.ReplaceAllString(fields[0], "")
			var ms []metric
			for i := 2; i+1 < len(fields); i += 2 {
				v, err := strconv.ParseFloat(fields[i], 64)
				if err != nil {
					return res, fmt.Errorf("%s: metric %q is not a number", name, fields[i])
				}
				if fields[i+1] != "ns/op" {
					ms = append(ms, metric{fields[i+1], v})
				}
			}
			if _, seen := res.metrics[name]; !seen {
				res.order = append(res.order, name)
			}
			res.metrics[name] = ms
		case strings.HasPrefix(line, "    "):
			res.notes = append(res.notes, strings.TrimSpace(line))
		}
	}
	if len(res.order) == 0 {
		return res, fmt.Errorf("no benchmark results in the input")
	}
	return res, sc.Err()
}

func (r results) get(name, unit string) (float64, bool) {
	for _, m := range r.metrics[name] {
		if m.unit == unit {
			return m.value, true
		}
	}
	return 0, false
}

// tracked are the comparisons the project watches, in the order shown.
var tracked = []struct {
	what, bench, unit, target string
}{
	{"`lore ask` time to first token / Ollama's own, same final prompt", "BenchmarkRealOllama/AskTTFT", "lore/direct", ""},
	{"`lore ask` overhead before the first token (ms)", "BenchmarkRealOllama/AskTTFT", "overhead-ms", ""},
	{"index build of 300 chunks (64-d), chunks/s with embedding free", "BenchmarkRealOllama/Index", "no-embed-chunks/s", ""},
	{"the same build, chunks/s with the real /api/embed (tiny model)", "BenchmarkRealOllama/Index", "real-embed-chunks/s", ""},
	{"share of an index build spent outside embedding", "BenchmarkRealOllama/Index", "share-not-embedding", ""},
	{"peak RSS of `lore ask` on 100k chunks, 768-d (MiB)", "BenchmarkRealOllama/AskRSS100k", "peak-RSS-MiB", ""},
	{"the same, less the raw float32 vectors (293 MiB) (MiB)", "BenchmarkRealOllama/AskRSS100k", "RSS-over-raw-MiB", "≤ 150"},
	{"`lore search` at 100k, a fresh process: graph opened and searched (ms)", "BenchmarkRealOllama/AskRSS100k", "search-vector-ms", "≤ 100"},
	{"the same process's wall time less the query embedding (ms)", "BenchmarkRealOllama/AskRSS100k", "search-startup-ms", ""},
	{"peak RSS of `lore ask` on 1M chunks, less the raw vectors (MiB, make bench-large)", "BenchmarkRealOllama/AskRSS1M", "RSS-over-raw-MiB", "≤ 150"},
	{"`lore search` at 1M, a fresh process: graph opened and searched (ms, make bench-large)", "BenchmarkRealOllama/AskRSS1M", "search-vector-ms", "≤ 100"},
	{"`lore serve`, 64 streaming clients for 30 s: errors other than the promised 429s", "BenchmarkServeLoad", "errors", "0"},
	{"the same: streams completed (20 tokens, 20 ms apart, at most 4 at once)", "BenchmarkServeLoad", "streams", ""},
	{"the same: 429s answered (each client waits Retry-After, then retries)", "BenchmarkServeLoad", "429s", ""},
	{"the same: first `data:` line p50, admission queue included (ms)", "BenchmarkServeLoad", "ttfb-p50-ms", ""},
	{"the same: first `data:` line p95 (ms)", "BenchmarkServeLoad", "ttfb-p95-ms", ""},
	{"the same: whole stream p50 / the stand-in called directly, 4 at a time", "BenchmarkServeLoad", "load/direct", ""},
	{"`lore serve` overhead per streamed answer, 4 clients, over the stand-in directly (ms)", "BenchmarkServeLoad", "overhead-ms", ""},
	{"RSS growth over the 30 s of load (MiB)", "BenchmarkServeLoad", "RSS-growth-MiB", "≤ 50"},
	{"goroutines left after the server stopped, over the count before it started", "BenchmarkServeLoad", "goroutines-left", "0"},
	{"opening a saved graph: 1M nodes, 768-d (ms)", "BenchmarkOpen/1000k", "open-ms", ""},
	{"index 100k chunks, 768-d, graph included (chunks/s)", "BenchmarkIndex100k", "chunks/s", "≥ 3,000"},
	{"HNSW inserts alone, 100k structured 768-d vectors, both cores (inserts/s)", "BenchmarkGraphInsert100k", "inserts/s", ""},
	{"no-op refresh of 10k files (s)", "BenchmarkNoopReindex10k", "s/refresh", "≤ 2"},
	{"retrieval p50 at 10k chunks (ms)", "BenchmarkSearch/10k", "p50-ms", ""},
	{"retrieval p50 at 100k chunks, hybrid (ms)", "BenchmarkSearch/100k", "p50-ms", "≤ 5"},
	{"retrieval p95 at 100k chunks, hybrid (ms)", "BenchmarkSearch/100k", "p95-ms", "≤ 15"},
	{"keyword stage p50 inside hybrid retrieval at 100k (ms)", "BenchmarkSearch/100k", "lexical-p50-ms", ""},
	{"keyword stage p50 at 1M chunks, BM25F top 50 (ms, make bench-large)", "BenchmarkLexicalStage/1000k", "bm25f-p50-ms", "≤ 10"},
	{"lexical-only index build of 100k chunks (chunks/s)", "BenchmarkIndexLexical100k", "chunks/s", "≥ 4,000"},
	{"import into the local store, 10k chunks, 384-d (chunks/s)", "BenchmarkStores/local", "import-chunks/s", ""},
	{"hybrid query p50 on the local store (ms)", "BenchmarkStores/local", "hybrid-p50-ms", ""},
	{"import into one Weaviate node, 10k chunks, 384-d (chunks/s)", "BenchmarkStores/weaviate-1", "import-chunks/s", ""},
	{"hybrid query p50 on one Weaviate node (ms)", "BenchmarkStores/weaviate-1", "hybrid-p50-ms", ""},
	{"import into 3 Weaviate nodes, replication 3, one machine, 10k chunks, 384-d (chunks/s)", "BenchmarkStores/weaviate-3", "import-chunks/s", ""},
	{"hybrid query p50 on 3 Weaviate nodes, replication 3, one machine (ms)", "BenchmarkStores/weaviate-3", "hybrid-p50-ms", ""},
	{"update one file of a 10k-chunk index on one Weaviate node (ms)", "BenchmarkStores/weaviate-1", "update-one-file-ms", ""},
	{"update one file of a 10k-chunk index on 3 Weaviate nodes (ms)", "BenchmarkStores/weaviate-3", "update-one-file-ms", ""},
	{"HNSW recall@10 at 100k, ef 128", "BenchmarkSearch/100k", "recall@10", "≥ 0.97"},
	{"HNSW speed / exact search at 100k", "BenchmarkSearch/100k", "x-exact", "≥ 20"},
	{"bench/hnsw at 100k: lore's recall@10, ef 128", "BenchmarkANN/100k/lore", "recall@10-ef128", ""},
	{"bench/hnsw at 100k: coder/hnsw v0.6.1's recall@10, ef 128", "BenchmarkANN/100k/coder-v0.6.1", "recall@10-ef128", ""},
	{"chromem-go / lore vector stage at 100k", "BenchmarkVectorStage/100k", "chromem/lore", ""},
	{"keyword stage p50 at 100k, BM25F top 50 over lore's postings (ms)", "BenchmarkLexicalStage/100k", "bm25f-p50-ms", "≤ 1"},
	{"the same with the proximity re-rank, as lore searches (ms)", "BenchmarkLexicalStage/100k", "lore-p50-ms", ""},
	{"the previous lore's FTS5 bm25() query at 100k (ms)", "BenchmarkLexicalStage/100k", "fts5-p50-ms", ""},
	{"lore's keyword stage / FTS5 at 100k (p50)", "BenchmarkLexicalStage/100k", "lore/fts5", ""},
	{"bleve v2 BM25 / FTS5 at 100k (p50)", "BenchmarkLexicalStage/100k", "bleve/fts5", ""},
	{"rerank 20×256 tokens, MiniLM-L-6 shape, ONNX Runtime (ms)", "BenchmarkRerank", "ort-L6-ms", ""},
	{"lore's ONNX Runtime backend / a bare onnxruntime_go session", "BenchmarkRerank", "lore/bare-ort", "≤ 1.1"},
	{"hugot pure-Go backend / ONNX Runtime", "BenchmarkRerank", "hugot/ort", ""},
	{"rerank 20×256, MiniLM-L-6 shape, fp32, ONNX Runtime, beside int8 (ms)", "BenchmarkRerankInt8", "L6-fp32-ms", ""},
	{"int8 / fp32 time, MiniLM-L-6 shape, the export `models pull` picks here", "BenchmarkRerankInt8", "L6-int8/fp32", "≤ 0.4 (issue 13)"},
	{"int8 / fp32 time, MiniLM-L-6 shape, qint8 (the AVX-512/arm64 exports)", "BenchmarkRerankInt8", "L6-qint8/fp32", ""},
	{"int8 / fp32 time, TinyBERT-L-2 shape, the export `models pull` picks here", "BenchmarkRerankInt8", "TinyBERT-int8/fp32", ""},
	{"int8's top 5 that are fp32's top 5, MiniLM-L-6 shape, random weights (of 5)", "BenchmarkRerankInt8", "L6-int8-top5-agree", "reported (issue 13)"},
	{"int8's largest score difference from fp32, MiniLM-L-6 shape (logits)", "BenchmarkRerankInt8", "L6-int8-max-diff", "reported (issue 13)"},
	{"fp32's score spread over the 20 passages, the scale of that difference", "BenchmarkRerankInt8", "L6-fp32-spread", ""},
	{"rerank of 20 passages of varied length, sorted and split where it pads less / one batch", "BenchmarkRerankBatching", "varied-split/one-batch", ""},
	{"chat: render cost per token at a 20k-character answer, incremental / full re-render", "BenchmarkStreamVsFull", "incremental/full", "≤ 0.1"},
	{"chat: one frame, 200-turn transcript above a streaming answer (µs)", "BenchmarkChat/Frame200", "frame-us", ""},
	{"chat: one frame scrolling a 200-turn transcript (µs)", "BenchmarkChat/Frame200", "scroll-frame-us", ""},
	{"chat: Enter to the first frame showing a stage, real engine (ms)", "BenchmarkChat/KeyToStage", "key-to-stage-ms", ""},
	{"chat: a token from the engine to the frame that shows it (ms)", "BenchmarkChat/TokenToFrame", "token-to-frame-ms", ""},
	{"chat: heap in use after a 200-turn session (MiB)", "BenchmarkChat/Session200", "heap-MiB", ""},
}

// askStages are AskTTFT's stages, in the order a question goes through them.
var askStages = []struct{ unit, what string }{
	{"startup-ms", "process start to its first request to Ollama (config, index, graph, reranker loaded)"},
	{"before-embed-ms", "first request to the query embedding (server and model checks)"},
	{"query-embed-ms", "query embedding, /api/embed round trip"},
	{"retrieve-ms", "retrieve stage as lore times it (embedding + BM25 + HNSW + RRF)"},
	{"rerank-ms", "rerank stage (tiny random cross-encoder)"},
	{"to-chat-ms", "end of the query embedding to the /api/chat request"},
	{"ollama-ttft-ms", "/api/chat request to its first byte, as lore sent it"},
	{"direct-ttft-ms", "the same request sent straight to the server: its first token"},
	{"to-stdout-ms", "first byte from the server to the first byte on lore's stdout"},
	{"lore-ttft-ms", "`lore ask` total: exec to the first answer byte"},
	{"overhead-ms", "lore's overhead: total minus the server's own first-token time"},
}

func render(r results, now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n## Latest `make bench` run\n\n", begin)
	fmt.Fprintf(&b, "%s, %s. Each ratio below was measured side by side in this one run; medians where a benchmark repeats.\n\n",
		now.UTC().Format("2006-01-02"), cmp.Or(r.cpu, "unknown CPU"))
	b.WriteString("| comparison | this run | target |\n|---|---:|---|\n")
	for _, t := range tracked {
		if v, ok := r.get(t.bench, t.unit); ok {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", t.what, format(v), t.target)
		}
	}
	if _, ok := r.metrics["BenchmarkRealOllama/AskTTFT"]; ok {
		b.WriteString("\n`lore ask` against a real Ollama server, stage by stage (median of 9 rounds, ms):\n\n| stage | ms |\n|---|---:|\n")
		for _, s := range askStages {
			if v, ok := r.get("BenchmarkRealOllama/AskTTFT", s.unit); ok {
				fmt.Fprintf(&b, "| %s | %s |\n", s.what, format(v))
			}
		}
	}
	b.WriteString("\nEvery metric of the run:\n\n| benchmark | metric | value |\n|---|---|---:|\n")
	for _, name := range r.order {
		for _, m := range r.metrics[name] {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", strings.TrimPrefix(name, "Benchmark"), m.unit, format(m.value))
		}
	}
	if len(r.notes) > 0 {
		b.WriteString("\nPrinted by the benchmarks:\n\n```\n" + strings.Join(r.notes, "\n") + "\n```\n")
	}
	b.WriteString(end + "\n")
	return b.String()
}

// format prints a number with sensible precision for a table.
func format(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1000:
		return units.Count(int(math.Round(v)))
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	default:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
}

// splice replaces the generated section of md, or puts it after the first
// paragraph when there is none yet.
func splice(md, section string) string {
	if i := strings.Index(md, begin); i >= 0 {
		if j := strings.Index(md[i:], end); j >= 0 {
			return md[:i] + section + strings.TrimPrefix(md[i+j+len(end):], "\n")
		}
	}
	at := strings.Index(md, "\n## ")
	if at < 0 {
		return md + "\n" + section
	}
	return md[:at+1] + section + "\n" + md[at+1:]
}
