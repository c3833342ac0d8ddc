# Sourced by scripts/e2e.sh while its Ollama server runs and the default
# index is built: `lore serve` with a token, asked by the official `openai`
# npm package (scripts/e2e-serve.mjs) and by curl, then stopped by its PID
# with SIGTERM. Needs $lore, $work, $question, check(), has() and jq_ok()
# from e2e.sh; sets serve_pid while the server runs (e2e.sh's cleanup stops it).

# The official client, installed once into the repository's cache (no
# install scripts run; Node 20 takes openai 5, 7 needs Node 22).
npm_prefix=$PWD/.cache/npm
# A failed install is not fatal here: the client's checks then fail, saying so.
if [[ ! -f $npm_prefix/node_modules/openai/package.json ]]; then
  npm_install() { npm install --prefix "$npm_prefix" --no-audit --no-fund --ignore-scripts --loglevel=error openai@5 >/dev/null; }
  npm_install || npm_install || echo "e2e: could not install the openai npm package into $npm_prefix"
fi

# Off loopback without a token, lore serve refuses to start (exit 2).
run /dev/null "$work/serve.refused" env -u LORE_SERVE_TOKEN "$lore" serve --addr 0.0.0.0:0
check "lore serve off loopback without a token refuses to start (exit 2, got $code)" \
  bash -c "test '$code' = 2 && grep -q 'LORE_SERVE_TOKEN' '$work/serve.refused'"

# Port 0: the kernel picks a free port, and the first log line names it.
serve_token=e2e-$RANDOM$RANDOM
LORE_SERVE_TOKEN=$serve_token "$lore" serve --addr 127.0.0.1:0 2>"$work/serve.log" &
serve_pid=$!
echo "$serve_pid" >>"$work/serve.pids"
serve_url=""
for _ in $(seq 300); do
  serve_url=$(sed -n '1s/.*"msg":"listening","addr":"\(http:[^"]*\)".*/\1/p' "$work/serve.log")
  [[ -n $serve_url ]] && break
  kill -0 "$serve_pid" 2>/dev/null || break
  sleep 0.1
done
serve_up() {
  [[ -n $serve_url ]] || return 1
  for _ in $(seq 100); do curl -sf "$serve_url/healthz" >/dev/null && return 0; sleep 0.1; done
  return 1
}
check "lore serve logs where it listens and answers /healthz without the token" serve_up

if [[ -n $serve_url ]]; then
  auth="Authorization: Bearer $serve_token"
  run "$work/serve.node" "$work/serve.node.err" env LORE_BASE_URL="$serve_url/v1" LORE_TOKEN="$serve_token" \
    LORE_QUESTION="$question" LORE_INDEX=default LORE_NPM_PREFIX="$npm_prefix" node scripts/e2e-serve.mjs
  cat "$work/serve.node"
  pass=$((pass + $(grep -c '^ok' "$work/serve.node" || true)))
  fail=$((fail + $(grep -c '^FAIL' "$work/serve.node" || true)))
  # Every check must have run: a script that died half-way fails.
  ran=$(grep -cE '^(ok|FAIL)' "$work/serve.node" || true)
  [[ $ran -eq 12 ]] ||
    { echo "FAIL the openai npm script ran $ran of 12 checks (exit $code): $(tail -3 "$work/serve.node.err")"; fail=$((fail + 1)); }

  curl -s -o "$work/serve.search.json" -w '%{http_code}' -H "$auth" -H 'Content-Type: application/json' \
    -d '{"query":"ignore files","k":3}' "$serve_url/v1/search" >"$work/serve.search.code" || true
  check "POST /v1/search answers in the shape of lore search --json (HTTP $(cat "$work/serve.search.code"))" \
    jq_ok "$work/serve.search.json" 'd["mode"] == "hybrid" and 0 < len(d["results"]) <= 3 and d["index"] == "default"'
  curl -s -o "$work/serve.metrics" -H "$auth" "$serve_url/metrics" || true
  check "GET /metrics counts the requests and times the stages" bash -c \
    "grep -q '^lore_http_requests_total{code=\"200\",route=\"/v1/chat/completions\"} [1-9]' '$work/serve.metrics' &&
     grep -q '^lore_http_requests_total{code=\"401\",route=\"/v1/chat/completions\"} 1' '$work/serve.metrics' &&
     grep -q '^lore_stage_duration_seconds_count{stage=\"generate\"} [1-9]' '$work/serve.metrics'"
  check "GET /metrics without the token is refused (401)" \
    test "$(curl -s -o /dev/null -w '%{http_code}' "$serve_url/metrics")" = 401
fi

kill -TERM "$serve_pid" 2>/dev/null || true
set +e
timeout 60 tail --pid="$serve_pid" -f /dev/null || kill -KILL "$serve_pid"
wait "$serve_pid"
serve_code=$?
set -e
serve_pid=""
check "lore serve stops on SIGTERM with exit 0 (got $serve_code)" \
  bash -c "test '$serve_code' = 0 && grep -q '\"msg\":\"stopped\"' '$work/serve.log'"
check "lore serve logs one JSON line per request, never the token" bash -c \
  "grep -q '\"msg\":\"request\".*\"route\":\"/v1/chat/completions\".*\"status\":200' '$work/serve.log' && ! grep -qF '$serve_token' '$work/serve.log'"
