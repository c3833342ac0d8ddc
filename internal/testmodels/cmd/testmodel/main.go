// Command testmodel writes lore's random-weight test models, for end-to-end
// tests and benchmarks that run real servers and runtimes without
// downloading weights:
//
//	testmodel gguf OUT.gguf        tiny llama chat model for `ollama create`
//	testmodel embed-gguf OUT.gguf  the same shape from another seed, to embed
//	testmodel embed768-gguf OUT.gguf  768 dimensions, for query embeddings
//	testmodel reranker DIR         tiny cross-encoder for `lore models import`
//	testmodel reranker-int8 DIR    its dynamically quantised (qint8) twin
package main

import (
	"fmt"
	"os"

	"github.com/lore-cli/lore/internal/testmodels"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: testmodel gguf|embed-gguf|embed768-gguf OUT.gguf | testmodel reranker|reranker-int8 DIR")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "gguf":
		err = testmodels.WriteGGUF(os.Args[2], testmodels.TinyLlama)
	case "embed-gguf":
		err = testmodels.WriteGGUF(os.Args[2], testmodels.TinyEmbed)
	case "embed768-gguf":
		err = testmodels.WriteGGUF(os.Args[2], testmodels.Embed768)
	case "reranker":
		err = testmodels.WriteCrossEncoder(os.Args[2], testmodels.Tiny, nil)
	case "reranker-int8":
		cfg := testmodels.Tiny
		cfg.Quant = testmodels.QInt8
		err = testmodels.WriteCrossEncoder(os.Args[2], cfg, nil)
	default:
		fmt.Fprintf(os.Stderr, "testmodel: unknown kind %q: use gguf, embed-gguf, embed768-gguf, reranker or reranker-int8\n", os.Args[1])
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "testmodel:", err)
		os.Exit(1)
	}
}
