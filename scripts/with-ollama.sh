#!/usr/bin/env bash
# with-ollama.sh CMD...: runs CMD with a real Ollama server on loopback
# serving the tiny generated model, named to CMD by LORE_BENCH_OLLAMA
# (host:port), LORE_BENCH_MODEL (chat), LORE_BENCH_EMBED_MODEL and
# LORE_BENCH_EMBED768_MODEL; stops the server afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'stop_server TERM; rm -rf "$work"' EXIT
source scripts/ollama-lib.sh
start_server
create_models
LORE_BENCH_OLLAMA=$OLLAMA_HOST LORE_BENCH_MODEL=lore-tiny LORE_BENCH_EMBED_MODEL=lore-embed \
  LORE_BENCH_EMBED768_MODEL=lore-embed-768 "$@"
