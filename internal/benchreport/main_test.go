package main

import (
	"strings"
	"testing"
	"time"
)

const sample = `goos: linux
cpu: AMD EPYC
BenchmarkSearch/10k-2   	       1	9000 ns/op	         4.8 p50-ms	      11.0 p95-ms
    10k chunks, M=16 ef=128: recall@10 0.990
BenchmarkSearch/100k-2  	       1	9000 ns/op	        23.0 p50-ms	       0.966 recall@10	      21.3 x-exact
BenchmarkRerankInt8-2 	1	9000 ns/op	      0.55 L6-int8/fp32	         4.000 L6-int8-top5-agree
BenchmarkRealOllama/AskTTFT-2 	1	9000 ns/op	      1.083 lore/direct	      324.7 overhead-ms	      70.49 startup-ms
PASS
`

func TestReportKeepsHandWrittenTextAndReplacesItsSection(t *testing.T) {
	res, err := parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := res.get("BenchmarkSearch/100k", "recall@10"); v != 0.966 {
		t.Fatalf("recall@10 = %v", v)
	}
	md := "# Benchmarks\n\nIntro.\n\n## Indexing\n\nHand-written analysis.\n"
	day := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	once := splice(md, render(res, day))
	for _, want := range []string{
		"| `lore ask` time to first token / Ollama's own, same final prompt | 1.08 |",
		"| HNSW recall@10 at 100k, ef 128 | 0.966 | ≥ 0.97 |",
		"| int8 / fp32 time, MiniLM-L-6 shape, the export `models pull` picks here | 0.55 | ≤ 0.4 (issue 13) |",
		"| process start to its first request to Ollama (config, index, graph, reranker loaded) | 70.49 |",
		"| Search/10k | p95-ms | 11.00 |",
		"10k chunks, M=16 ef=128: recall@10 0.990",
		"Hand-written analysis.",
	} {
		if !strings.Contains(once, want) {
			t.Errorf("report lacks %q:\n%s", want, once)
		}
	}
	if strings.Index(once, begin) > strings.Index(once, "## Indexing") {
		t.Error("the generated section should come before the hand-written ones")
	}
	res.metrics["BenchmarkSearch/100k"][0].value = 9.5
	twice := splice(once, render(res, day))
	if strings.Count(twice, begin) != 1 || !strings.Contains(twice, "| retrieval p50 at 100k chunks, hybrid (ms) | 9.50 | ≤ 5 |") {
		t.Errorf("a second run should replace the section, not add one:\n%s", twice)
	}
	if !strings.HasSuffix(twice, "Hand-written analysis.\n") {
		t.Error("text after the section changed")
	}
}

func TestReportReplacesASectionAtTheEndOfTheFile(t *testing.T) {
	res, _ := parse(strings.NewReader(sample))
	md := strings.TrimSuffix(splice("# B\n", render(res, time.Now())), "\n")
	if out := splice(md, render(res, time.Now())); strings.Count(out, begin) != 1 {
		t.Fatalf("%d sections", strings.Count(out, begin))
	}
}

func TestReportRefusesInputWithoutResults(t *testing.T) {
	if _, err := parse(strings.NewReader("FAIL lore/index\n")); err == nil {
		t.Fatal("no error for output without benchmark results")
	}
}
