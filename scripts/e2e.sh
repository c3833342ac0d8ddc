#!/usr/bin/env bash
# End-to-end smoke test of lore against a real Ollama server on loopback,
# with a tiny generated model (no downloads). Starts the server, runs lore's
# commands, checks their JSON and exit codes, and stops the server by PID.
# Issue 5 extends this into the full suite; this is its first part.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build-ollama.sh .cache/ollama/bin
go build -o bin/lore ./cmd/lore

work=$(mktemp -d)
server_pid=""
cleanup() {
  if [[ -n $server_pid ]]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
export OLLAMA_HOST=127.0.0.1:$port OLLAMA_MODELS=$work/models XDG_DATA_HOME=$work/data XDG_STATE_HOME=$work/state XDG_CONFIG_HOME=$work/config
.cache/ollama/bin/ollama serve >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 100); do curl -sf "http://$OLLAMA_HOST/" >/dev/null && break; sleep 0.1; done

go run ./internal/testmodels/cmd/tinygguf "$work/tiny.gguf"
printf 'FROM %s\nTEMPLATE """{{ range .Messages }}{{ .Content }}\n{{ end }}"""\nPARAMETER num_predict 24\n' "$work/tiny.gguf" >"$work/Modelfile"
.cache/ollama/bin/ollama create lore-tiny -f "$work/Modelfile" >/dev/null

pass=0 fail=0
check() { # name, condition...
  local name=$1; shift
  if "$@"; then pass=$((pass + 1)); echo "ok   $name"; else fail=$((fail + 1)); echo "FAIL $name"; fi
}
jq_ok() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)" "$@"; }

bin/lore index --embed-model lore-tiny --json docs >"$work/index.json"
check "index embeds every chunk with the real /api/embed" jq_ok "$work/index.json" 'd["files_indexed"] > 0 and d["chunks_embedded"] == d["chunks"] > 0'

bin/lore search --json "ignore files" >"$work/search.json"
check "search is hybrid with real query embeddings" jq_ok "$work/search.json" 'd["mode"] == "hybrid" and len(d["results"]) > 0'

set +e
bin/lore ask --json --chat-model lore-tiny "how do I keep lore from indexing a folder?" >"$work/ask.json"
code=$?
set -e
check "ask streams an answer with timings and token counts (exit $code)" jq_ok "$work/ask.json" 'd["answer"] != "" and d["tokens"]["completion"] > 0 and d["timings_ms"]["first_token"] > 0'

set +e
bin/lore ask --chat-model no-such-model "q" >/dev/null 2>"$work/err"; code=$?
set -e
check "a missing model exits 1 and says how to pull it" test "$code" -eq 1 -a -n "$(grep -l 'ollama pull no-such-model' "$work/err")"

kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""
set +e
bin/lore ask --chat-model lore-tiny "how do I keep lore from indexing a folder?" >"$work/sources" 2>"$work/err"; code=$?
set -e
check "with Ollama stopped, ask answers from sources and exits 4" test "$code" -eq 4

echo "e2e: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
