#!/usr/bin/env bash
# End-to-end tests of lore against a real Ollama server on loopback, with a
# tiny generated model (no model downloads): indexing with real embeddings, hybrid
# search, ask, sessions, lore doctor, lore serve asked by the official openai
# npm package, a missing model, a stopped server, a server killed mid-answer,
# Ctrl+C mid-answer, incremental re-indexing, and the offline guarantee
# inside a network namespace. Every server is started in its own process
# group and stopped by it, so nothing is left running.
set -euo pipefail
cd "$(dirname "$0")/.."
go build -o bin/lore ./cmd/lore
lore=$PWD/bin/lore

work=$(mktemp -d)
serve_pid=""
cleanup() {
  [[ -z $serve_pid ]] || { kill -TERM "$serve_pid" 2>/dev/null; wait "$serve_pid" 2>/dev/null; } || true
  stop_server TERM
  if [[ -n ${E2E_KEEP:-} ]]; then echo "e2e: kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
source scripts/ollama-lib.sh
port=${OLLAMA_HOST##*:}
# OLLAMA_DEBUG=2 makes the server log each rendered prompt: the session
# check reads what the server really received.
export OLLAMA_DEBUG=2 XDG_DATA_HOME=$work/data XDG_STATE_HOME=$work/state XDG_CONFIG_HOME=$work/config
unset TAVILY_API_KEY LORE_MODE

# wait_for_bytes FILE N: until FILE holds at least N bytes (at most 60 s).
wait_for_bytes() {
  for _ in $(seq 600); do
    [[ $(stat -c %s "$1" 2>/dev/null || echo 0) -ge $2 ]] && return 0
    sleep 0.1
  done
  return 1
}

start_server
create_models
# A random-weight reranker and a threshold below any of its scores: every
# question is answered from the docs, so each run takes the same path.
go run ./internal/testmodels/cmd/testmodel reranker "$work/reranker"
"$lore" models import "$work/reranker" --name e2e-reranker >/dev/null
mkdir -p "$XDG_CONFIG_HOME/lore"
printf 'embed-model: lore-tiny\nchat-model: lore-tiny\nrerank-model: e2e-reranker\nweb-fallback-threshold: -1000000\n' >"$XDG_CONFIG_HOME/lore/config.yaml"
cp -r docs "$work/corpus"

pass=0 fail=0
check() { # name, command...
  local name=$1; shift
  if "$@"; then pass=$((pass + 1)); echo "ok   $name"; else fail=$((fail + 1)); echo "FAIL $name"; fi
}
jq_ok() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)" "$@"; }
has() { grep -qF -- "$2" "$1"; }
run() { # out err cmd...: runs lore, leaves its exit code in $code
  local out=$1 err=$2; shift 2
  set +e; "$@" >"$out" 2>"$err"; code=$?; set -e
}
question="how do I keep lore from indexing a folder?"

# --- indexing and search ---------------------------------------------------
run "$work/index.json" "$work/err" "$lore" index --json "$work/corpus"
check "index embeds every chunk with the real /api/embed" jq_ok "$work/index.json" 'd["files_indexed"] > 0 and d["chunks_embedded"] == d["chunks"] > 0'

run "$work/search.json" "$work/err" "$lore" search --json "ignore files"
check "search is hybrid with real query embeddings" jq_ok "$work/search.json" 'd["mode"] == "hybrid" and len(d["results"]) > 0'

# --- ask and a follow-up in the same session -------------------------------
run "$work/ask.json" "$work/err" "$lore" ask --json "$question"
check "ask streams an answer with timings and token counts (exit $code)" jq_ok "$work/ask.json" \
  'd["answer"] != "" and d["tokens"]["completion"] > 0 and d["timings_ms"]["first_token"] > 0 and d["session"]'

session=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["session"])' "$work/ask.json")
log_mark=$(stat -c %s "$work/server.log")
run "$work/follow.json" "$work/err" "$lore" ask --json --session "$session" "and what about hidden files?"
tail -c +"$((log_mark + 1))" "$work/server.log" >"$work/server.follow.log"
check "a --session follow-up sends the earlier question to the server (exit $code)" \
  has "$work/server.follow.log" "$question"
check "the follow-up is answered in the same session" jq_ok "$work/follow.json" "d['session'] == '$session' and d['route'] == 'docs' and d['answer'] != ''"
"$lore" sessions show "$session" >"$work/session.txt" 2>&1 || true
check "the session holds both turns" has "$work/session.txt" "hidden files"

# --- incremental re-index ---------------------------------------------------
file=$(find "$work/corpus" -name '*.md' | sort | head -1)
printf '\n## Added section\n\nA paragraph added after the first index, about zebra crossings.\n' >>"$file"
run "$work/reindex.json" "$work/err" "$lore" index --json "$work/corpus"
check "re-index after editing one file embeds only its changed chunks" jq_ok "$work/reindex.json" \
  'd["files_indexed"] == 1 and d["files_unchanged"] > 0 and 1 <= d["chunks_embedded"] <= 2'
run "$work/zebra.json" "$work/err" "$lore" search --json "zebra crossings"
check "the edited text is searchable" has "$work/zebra.json" "zebra"

# --- lore eval ------------------------------------------------------------------
# The bundled question set over the same docs: hybrid retrieval with real
# query embeddings, every question answered by the real server (the tiny
# model's answers are noise: the checks are that every metric ran, not its
# value), and the threshold calibrated from the e2e reranker's scores.
run "$work/eval.json" "$work/eval.err" "$lore" eval --json examples/questions.jsonl
check "eval answers every question through the real server (exit $code)" jq_ok "$work/eval.json" \
  'd["answers"] and d["setups"][0]["overall"]["n"] == 9 and d["setups"][0]["overall"]["count"]["route"] == 9 and d["setups"][0]["overall"]["errors"] == 0'
check "eval scores retrieval and prints a verdict" jq_ok "$work/eval.json" \
  'd["setups"][0]["overall"]["count"]["hit@5"] == 7 and d["setups"][0]["overall"]["verdict"] in ("EXCELLENT", "ACCEPTABLE", "INSUFFICIENT")'
# The judge through the real server: the tiny model's verdicts are noise,
# so the check is that every answer from the docs went to it and came back
# as a score or a note saying why not.
run "$work/judge.json" "$work/eval.err" "$lore" eval --json --judge-model lore-tiny examples/questions.jsonl
check "eval --judge-model sends each answer to the judge on the real server (exit $code)" jq_ok "$work/judge.json" \
  'd["judged"] and all("faithfulness" in q["scores"] or "relevancy" in q["scores"] or any(n.startswith(("judge", "faithfulness", "relevancy")) for n in q.get("notes") or []) for q in d["setups"][0]["questions"] if q.get("route") == "docs")'
run "$work/eval.txt" "$work/eval.err" "$lore" eval --compare --no-answers examples/questions.jsonl
check "eval --compare puts hybrid, no-rerank, lexical-only and vector-only side by side (exit $code)" \
  bash -c "grep -q '^ *vector-only ' '$work/eval.txt' && grep -q '^ *lexical-only ' '$work/eval.txt' && grep -q 'global score' '$work/eval.txt'"
run "$work/calib.txt" "$work/eval.err" "$lore" eval --calibrate examples/questions.jsonl
check "eval --calibrate recommends a threshold from the reranker's scores (exit $code)" has "$work/calib.txt" "web-fallback-threshold:"

# --- lore doctor: all good, Ollama down, a model missing ----------------------
run "$work/doctor.txt" "$work/doctor.err" "$lore" doctor
check "doctor with everything in place exits 0 (got $code)" test "$code" = 0
check "doctor finds the real server, both models and the reranker" bash -c \
  "grep -q '✓ server .*version' '$work/doctor.txt' && grep -Eq '[✓!] chat model +lore-tiny' '$work/doctor.txt' && grep -Eq '[✓!] embed model +lore-tiny' '$work/doctor.txt' && grep -q '✓ forward pass' '$work/doctor.txt'"
run "$work/doctor.down" "$work/doctor.err" env LORE_OLLAMA_HOST="127.0.0.1:$(free_port)" "$lore" doctor
check "doctor with Ollama down exits 1 with a ✗ server line (got $code)" bash -c \
  "test '$code' = 1 && grep -q '✗ server' '$work/doctor.down' && grep -q 'ollama serve' '$work/doctor.down'"
run "$work/doctor.model" "$work/doctor.err" env LORE_CHAT_MODEL=no-such-model "$lore" doctor
check "doctor with the chat model missing exits 1 and names ollama pull (got $code)" bash -c \
  "test '$code' = 1 && grep -q '✗ chat model' '$work/doctor.model' && grep -q 'ollama pull no-such-model' '$work/doctor.model'"

# --- lore eval on the public Prometheus docs set (../shared/eval) -------------
# Hybrid with the real server's embeddings, in an index of its own: the table
# and the verdict (the tiny model's vectors are noise, so not the numbers).
# The questions live beside the repository (../shared/eval) and the docs come
# from the Go module proxy (GOPROXY, its cache first): without either, these
# checks are skipped, saying why, and the rest still run.
questions=../shared/eval/prometheus_docs.jsonl
skipped=0
if [[ ! -f $questions ]]; then
  echo "skip eval on the Prometheus set: $questions is missing (it sits beside the repository in CI)"
  skipped=1
elif ! prom=$(go mod download -json github.com/prometheus/prometheus@v0.316.0 2>"$work/prom.dl.err" |
  python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["Dir"]) if d.get("Dir") else sys.exit(d.get("Error", "no Dir"))' 2>>"$work/prom.dl.err"); then
  echo "skip eval on the Prometheus set: the Go module proxy did not give github.com/prometheus/prometheus@v0.316.0: $(tail -1 "$work/prom.dl.err")"
  skipped=1
else
  prom=$prom/docs
  run "$work/prom.json" "$work/err" "$lore" --index prom index --json "$prom"
  first=$code
  # Chunks of the same text share one vector, so embedded counts can be fewer
  # than chunks: a second run that embeds nothing says none is missing.
  run "$work/prom2.json" "$work/err" "$lore" --index prom index --json "$prom"
  check "the Prometheus docs index with real embeddings, none missing (exit $first, $code)" \
    jq_ok "$work/prom2.json" 'd["total_chunks"] > 500 and d["chunks_embedded"] == 0 and d["files_unchanged"] == 30'
  run "$work/prom.txt" "$work/prom.err" "$lore" --index prom eval --no-answers "$questions"
  check "eval on the Prometheus set prints the table and a verdict (exit $code)" \
    bash -c "grep -q '^ *all  *40 ' '$work/prom.txt' && grep -Eq 'global score .*(EXCELLENT|ACCEPTABLE|INSUFFICIENT)' '$work/prom.txt'"
fi

# --- Ctrl+C mid-answer -------------------------------------------------------
# interrupt_when_streaming OUT SIGNAL-COMMAND...: once lore's stdout (OUT) has
# 20 bytes of answer, remembers them in $streamed and runs the command; then
# waits for lore at most 60 s (killing it after that) and sets $code.
interrupt_when_streaming() {
  local out=$1; shift
  streamed="" code=none
  if wait_for_bytes "$out" 20; then
    streamed=$(head -c 20 "$out")
    "$@"
    timeout 60 tail --pid="$lore_pid" -f /dev/null || kill -KILL "$lore_pid"
  else
    kill -KILL "$lore_pid"
  fi
  set +e; wait "$lore_pid"; local c=$?; set -e
  [[ -n $streamed ]] && code=$c
  return 0
}
# kept OUT: the answer that had streamed is still there, and lore went on
# to list the sources it was answering from.
kept() { [[ -n $streamed && $(head -c 20 "$1") == "$streamed" ]] && grep -q '^Sources:' "$1"; }

"$lore" ask --chat-model lore-long "$question" >"$work/int.out" 2>"$work/int.err" &
lore_pid=$!
interrupt_when_streaming "$work/int.out" kill -INT "$lore_pid"
check "SIGINT mid-answer exits 130 (got $code)" test "$code" = 130
check "the interrupted answer keeps what streamed" kept "$work/int.out"
run "$work/after.json" "$work/err" "$lore" ask --json "$question"
check "the server answers the next question (exit $code)" jq_ok "$work/after.json" 'd["answer"] != ""'

# --- the chat, in tmux --------------------------------------------------------
source scripts/e2e-chat.sh

# --- lore serve, asked by the official openai npm package ----------------------
source scripts/e2e-serve.sh

# --- lore mcp: the official TypeScript MCP SDK over stdio and HTTP, then -----
# --- mark3labs/mcp-go's client over HTTP ---------------------------------------
[[ -d .cache/npm/node_modules/@modelcontextprotocol/sdk ]] ||
  npm install --prefix .cache/npm @modelcontextprotocol/sdk@1 --no-audit --no-fund >/dev/null ||
  echo "e2e: could not install @modelcontextprotocol/sdk (its checks will fail)"
set +e; timeout 600 node scripts/e2e-mcp.mjs "$lore" >"$work/mcp.results" 2>&1; mcp_exit=$?; set -e
cat "$work/mcp.results"
pass=$((pass + $(grep -c '^ok' "$work/mcp.results" || true)))
fail=$((fail + $(grep -c '^FAIL' "$work/mcp.results" || true)))
[[ $mcp_exit -eq 0 || $(grep -c '^FAIL' "$work/mcp.results") -gt 0 ]] || { echo "FAIL scripts/e2e-mcp.mjs died (exit $mcp_exit)"; fail=$((fail + 1)); }
# --- lore mcp --http: mark3labs/mcp-go's client (its default, sessionless
# protocol, and pinned to the versions with sessions), as a Go test that
# starts the binary with this environment and the real server ---------------
set +e; LORE_E2E_LORE=$lore timeout 900 go test -count=1 -run '^TestMCPGoClient$' -v ./cmd/lore >"$work/mcpgo.out" 2>&1; set -e
check "http: mark3labs/mcp-go's default client lists, searches, reads a resource and asks with progress" \
  grep -q -- '--- PASS: TestMCPGoClient/default_client' "$work/mcpgo.out"
check "http: mark3labs/mcp-go's client pinned to 2025-11-25 does the same" \
  grep -q -- '--- PASS: TestMCPGoClient/legacy_protocol' "$work/mcpgo.out"
grep -q -- '--- PASS: TestMCPGoClient ' "$work/mcpgo.out" || tail -30 "$work/mcpgo.out"

# --- missing model, server killed mid-answer, server stopped -----------------
run /dev/null "$work/err" "$lore" ask --chat-model no-such-model "$question"
check "a missing model gives the passages (exit 4) and says how to pull it (got $code)" test "$code" = 4 -a -n "$(grep -l 'ollama pull no-such-model' "$work/err")"

"$lore" ask --chat-model lore-long "$question" >"$work/kill.out" 2>"$work/kill.err" &
lore_pid=$!
interrupt_when_streaming "$work/kill.out" stop_server KILL
check "Ollama killed mid-answer: lore exits 1 (got $code)" test "$code" = 1
check "Ollama killed mid-answer: the partial answer is kept" kept "$work/kill.out"
check "Ollama killed mid-answer: one clear error line" has "$work/kill.err" "the answer broke off"

run "$work/sources" "$work/err" "$lore" ask "$question"
check "with Ollama stopped, ask lists sources and exits 4 (got $code)" test "$code" = 4 -a -s "$work/sources"

# --- the offline guarantee, in a network namespace with only loopback -------
if unshare -rn true 2>/dev/null && command -v strace >/dev/null; then
  set +e
  unshare -rn env E2E_WORK="$work" E2E_LORE="$lore" E2E_OLLAMA="$ollama" OLLAMA_HOST="127.0.0.1:$port" \
    TAVILY_API_KEY=tvly-e2e-not-a-key scripts/e2e-netns.sh
  netns=$?
  set -e
  ran=$(grep -c '' "$work/netns.results" 2>/dev/null || true)
  pass=$((pass + $(grep -c '^ok' "$work/netns.results" || true)))
  fail=$((fail + $(grep -c '^FAIL' "$work/netns.results" || true)))
  # Every check must have run: a namespace script that died half-way fails.
  [[ ${ran:-0} -eq 7 ]] || { echo "FAIL the network namespace script ran ${ran:-0} of 7 checks (exit $netns)"; fail=$((fail + 1)); }
else
  echo "FAIL the offline test needs unshare (util-linux) and strace"
  fail=$((fail + 1))
fi

stop_server TERM
# Runners are not this shell's children: give them a moment to exit.
for _ in $(seq 50); do [[ -z $(left_running) ]] && break; sleep 0.1; done
check "no Ollama server or runner is left running" test -z "$(left_running)"

echo "e2e: $pass passed, $fail failed, $skipped skipped"
[[ $fail -eq 0 ]]
