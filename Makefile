# lore: build, try, test.
GO      ?= go
BIN     := bin/lore
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

# make run indexes the bundled docs/ into an index of its own and opens the
# chat on it when run on a terminal; elsewhere (CI, a pipe) it indexes,
# searches and asks one question. Its index and sessions live under
# .cache/sample, not in your own data. With Ollama running and
# nomic-embed-text pulled, try: make run EMBEDDER=ollama
EMBEDDER ?= none
SAMPLE  := XDG_DATA_HOME=$(CURDIR)/.cache/sample/data XDG_STATE_HOME=$(CURDIR)/.cache/sample/state

# ONNX Runtime for the onnxruntime reranker backend, from the npm package
# onnxruntime-node (its tarball carries the Linux x64 library). Version 1.23.x
# matches onnxruntime_go v1.25.0 (ORT API version 23). No install scripts run.
ORT_VERSION := 1.23.2
ORT_LIB     := .cache/ort/libonnxruntime.so.1
export LORE_TEST_ORT_LIB := $(CURDIR)/$(ORT_LIB)

.PHONY: build run test bench bench-large lint fuzz clean eval-chunking ort ollama weaviate e2e e2e-weaviate

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/lore

# Each step is echoed as the command a user would type (no shell trace of
# the environment). ask exits 3 when the question is "not in the docs" and
# 4 when it answers with passages alone (no model): both are answers here.
run: build
	@echo '$$ lore --index sample index --rebuild --embedder $(EMBEDDER) docs'
	@$(SAMPLE) $(BIN) --index sample index --rebuild --embedder $(EMBEDDER) docs
	@if [ -t 0 ] && [ -t 1 ]; then $(SAMPLE) $(BIN) --index sample chat; else \
	  echo '$$ lore --index sample index status' && \
	  $(SAMPLE) $(BIN) --index sample index status && \
	  echo '$$ lore --index sample search -k 3 "how do I keep lore from indexing a folder?"' && \
	  $(SAMPLE) $(BIN) --index sample search -k 3 "how do I keep lore from indexing a folder?" && \
	  echo '$$ lore --index sample ask "how do I keep lore from indexing a folder?"' && \
	  { $(SAMPLE) $(BIN) --index sample ask "how do I keep lore from indexing a folder?" || \
	    { code=$$?; [ $$code -eq 3 ] || [ $$code -eq 4 ]; }; }; fi

# hugot's pure-Go backend (GoMLX) races internally (a model import runs it
# too), and SQLite (C translated to Go) is ten times slower under -race:
# those tests run in the third step, without it. The ONNX Runtime tests
# need the library make ort fetches; without it they are skipped, and the
# last line says so.
test:
	$(GO) vet ./...
	$(GO) test -race ./...
	$(GO) test -count=1 -run 'Rerank|Backends|Variants|Hybrid|Store|Pull|Models|CorruptionSuite' ./rerank/ ./app/ ./cmd/lore/
	@[ -f $(ORT_LIB) ] || echo "note: the ONNX Runtime tests were skipped: run make ort first to run them too"

# Benchmarks, not tests: about twenty minutes on 2 cores, a real Ollama
# server included. Writes the generated section of BENCHMARKS.md.
bench: ort ollama weaviate
	scripts/bench.sh

# Retrieval at 1M chunks: tens of minutes and several GiB of memory.
bench-large: ollama
	LORE_BENCH_LARGE=1 $(GO) test -run '^$$' -bench 'Search/1000k' -benchtime 1x -timeout 120m ./index/local/
	cd bench && LORE_BENCH_LARGE=1 $(GO) test -run '^$$' -bench 'LexicalStage/1000k' -benchtime 1x -timeout 60m ./lexical/
	LORE_BENCH_LARGE=1 scripts/with-ollama.sh $(GO) test -run '^$$' -bench 'RealOllama/AskRSS1M' -benchtime 1x -timeout 120m ./cmd/lore

# staticcheck at a pinned version through go run, so that lint needs no
# install and gives the same verdict everywhere (its checks:
# staticcheck.conf). The first run downloads and builds it (a minute).
STATICCHECK_VERSION := v0.8.2
lint:
	@out=$$(gofmt -l $$($(GO) list -f '{{.Dir}}' ./...)); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

# Every parser of outside input, FUZZTIME each (go test fuzzes one target
# at a time). Findings are kept under each package's testdata/fuzz and run
# by make test from then on.
FUZZTIME ?= 30s
FUZZ := index/ingest:FuzzMarkdown index/ingest:FuzzHTML index/ingest:FuzzCodeAndText index/ingest:FuzzStructured index/local:FuzzQuery index/bm25:FuzzDecode index/hnsw:FuzzGraphFile rerank:FuzzModelDir rerank:FuzzONNXGraph internal/ollama:FuzzChatStream \
	config:FuzzConfigFile cmd/lore:FuzzContextFileRange session:FuzzStore tui/mdstream:FuzzIncremental internal/termsafe:FuzzText agent:FuzzFitPrompt \
	mcpserve:FuzzRequests mcpserve:FuzzStdioFrames
fuzz:
	for t in $(FUZZ); do $(GO) test ./$${t%%:*} -run '^$$' -fuzz "^$${t#*:}$$" -fuzztime $(FUZZTIME) || exit 1; done

ort: $(ORT_LIB)

$(ORT_LIB):
	mkdir -p .cache/ort
	cd .cache/ort && npm pack --silent onnxruntime-node@$(ORT_VERSION) >/dev/null && \
		tar xzf onnxruntime-node-$(ORT_VERSION).tgz package/bin/napi-v6/linux/x64/libonnxruntime.so.1 && \
		mv package/bin/napi-v6/linux/x64/libonnxruntime.so.1 . && rm -rf package onnxruntime-node-$(ORT_VERSION).tgz

# A real Ollama server built from source, for end-to-end tests (cached).
ollama:
	scripts/build-ollama.sh .cache/ollama/bin

# A real Weaviate server built from its Go module (cached), for the
# Weaviate store's tests and make e2e-weaviate.
weaviate:
	scripts/build-weaviate.sh .cache/weaviate/bin

# lore on a real 3-node Weaviate cluster on loopback: the store's own
# tests against real servers (the kill -9 test included), then the CLI
# end to end with a real Ollama server.
e2e-weaviate: weaviate ollama
	LORE_REQUIRE_WEAVIATE=1 $(GO) test -count=1 -timeout 20m ./index/weaviatestore/ ./internal/weaviatetest/
	scripts/e2e-weaviate.sh

# lore against a real Ollama server on loopback with a generated model.
e2e:
	scripts/e2e.sh

clean:
	rm -rf bin .cache

# Measure lexical retrieval on the dev set at several chunk budgets
# (indexes all of $(go env GOROOT)/src once per budget: minutes).
BUDGETS ?= 600,1000,1500,2500,4000
eval-chunking:
	LORE_EVAL_BUDGETS=$(BUDGETS) $(GO) test ./index/local -run TestEvalChunkBudget -v -timeout 60m | grep chunk-size
