#!/usr/bin/env bash
# make bench: every benchmark in one run, so that the ratios BENCHMARKS.md
# records are measured side by side on the same machine at the same time.
# The raw output stays in .cache/bench/results.txt; benchreport rewrites the
# generated section of BENCHMARKS.md from it.
set -euo pipefail
cd "$(dirname "$0")/.."
out=.cache/bench/results.txt
mkdir -p .cache/bench
: >"$out"
export LORE_ONNXRUNTIME_LIB=$PWD/.cache/ort/libonnxruntime.so.1
bench() { go test -run '^$' -bench "$1" -benchtime 1x -timeout 60m "${@:2}" | tee -a "$out"; }
bench . ./index/local/ ./index/hnsw/ ./index/watch/ ./app/ ./rerank/ ./tui/ ./tui/mdstream/
bench Stores ./index/weaviatestore/           # local, one Weaviate node, 3 nodes: the same corpus and vectors
bench ServeLoad ./serve/                     # 64 streaming clients for 30 s against a stand-in Ollama, loopback only
(cd bench && go test -run '^$' -bench . -benchtime 1x -timeout 60m ./...) | tee -a "$out"
scripts/with-ollama.sh go test -run '^$' -bench RealOllama -benchtime 1x -timeout 60m ./cmd/lore | tee -a "$out"
go run ./internal/benchreport "$out" BENCHMARKS.md
echo "bench: results in $out; BENCHMARKS.md updated"
