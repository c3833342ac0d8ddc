package weaviatestore

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/lore-cli/lore/index/analysis"
	"github.com/lore-cli/lore/index/ingest"
)

// corpusChunks chunks every file lore reads under the eval corpora
// (.cache/eval/corpus, or $LORE_ANALYSE_CORPUS) as a build with the
// default chunk size does; nil when there are none.
func corpusChunks(tb testing.TB) (paths []string, chunks []ingest.Chunk) {
	root := os.Getenv("LORE_ANALYSE_CORPUS")
	if root == "" {
		root = filepath.Join("..", "..", ".cache", "eval", "corpus")
	}
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if len(chunks) >= 20000 { // a bigger corpus adds time, not cases
			return filepath.SkipAll
		}
		if err != nil || d.IsDir() || !ingest.Supported(path) || ingest.Extracted(path) {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		doc, err := ingest.Load(context.Background(), path, data, ingest.ChunkOptions{Size: 1500, Overlap: 0})
		if err != nil {
			return nil
		}
		for _, c := range doc.Chunks {
			paths, chunks = append(paths, path), append(chunks, c)
		}
		return nil
	})
	return paths, chunks
}

// analyseApart is analyse as it was, each text from a pass of its
// own over the chunk: the stored properties the search side expects
// (reader.go queries them with TermText and IdentifierText of the
// question).
func analyseApart(p ingest.Chunk, structured bool) analysed {
	return analysedFrom(analysis.Analyze(analysis.Fields{Heading: p.Heading, Body: p.Text, Structured: structured}), analysis.Texts{
		Body:        analysis.TermText(p.Text),
		Heading:     analysis.TermText(p.Heading),
		Identifiers: analysis.IdentifierText(p.Heading + "\n" + p.Text),
	})
}

// The writer's one pass over a chunk stores the very properties a pass
// per property stored: a search asks them with the terms TermText and
// IdentifierText give, and an index built before is read alike.
func TestAnalyseStoresWhatSearchAsks(t *testing.T) {
	cases := []ingest.Chunk{chOllama, chGarden, chUser, chDecoy,
		{Heading: "Config > maxIdleConns", Text: "Set maxIdleConns and OLLAMA_HOST=x; getUserById(id) and exec.LookPath\n--keep-alive net/http"},
		{Heading: "默认端口", Text: "使用Prometheus监控 默认端口是9090。 HTTPServer's IDs, don't"},
		{Heading: "", Text: "| `--repo-cache-expiration` | duration | the PrunePropagationPolicy |\nfunc NewServer() *Server {}"},
		{Heading: "Straße", Text: "Ünïcödé wörds — ｶﾀｶﾅ and fooBar_baz qux—quux"},
	}
	paths := make([]string, len(cases))
	for i := range cases {
		paths[i] = "doc.md"
	}
	cp, cc := corpusChunks(t)
	paths, cases = append(paths, cp...), append(cases, cc...)
	t.Logf("%d chunks", len(cases))
	bad := 0
	for i, c := range cases {
		st := ingest.Structured(paths[i])
		if got, want := analyse(c, st), analyseApart(c, st); got != want && bad < 5 {
			bad++
			t.Errorf("%s: chunk %q:\none pass: %+v\napart:    %+v", paths[i], c.Text[:min(len(c.Text), 80)], got, want)
		}
	}
}

// BenchmarkAnalyse is the writer's keyword analysis of every chunk of
// the eval corpora (Prepare, on a build's workers).
func BenchmarkAnalyse(b *testing.B) {
	paths, chunks := corpusChunks(b)
	if len(chunks) == 0 {
		b.Skip("no corpus: run the eval once to fetch it, or set LORE_ANALYSE_CORPUS")
	}
	var bytes int64
	for _, c := range chunks {
		bytes += int64(len(c.Text) + len(c.Heading))
	}
	b.SetBytes(bytes)
	b.ResetTimer()
	for b.Loop() {
		for i, c := range chunks {
			analyse(c, ingest.Structured(paths[i]))
		}
	}
	b.ReportMetric(float64(len(chunks))*float64(b.N)/b.Elapsed().Seconds(), "chunks/s")
}
