#!/usr/bin/env bash
# Part of scripts/e2e.sh, run by it inside `unshare -rn`: a network
# namespace whose only interface is loopback, like an air-gapped laptop.
# Ollama listens inside it; strace records every connect(2) lore makes.
# Offline mode must dial the Ollama host and nothing else, even with a web
# provider and its key configured; online mode with an unreachable web
# provider must decide as offline would and say the web failed.
set -uo pipefail
work=$E2E_WORK lore=$E2E_LORE
results=$work/netns.results
: >"$results"
check() { # name, command...
  local name=$1; shift
  if "$@"; then echo "ok   $name" | tee -a "$results"; else echo "FAIL $name" | tee -a "$results"; fi
}
ip link set lo up

setsid "$E2E_OLLAMA" serve >>"$work/server.netns.log" 2>&1 &
pid=$!
echo "$pid" >>"$work/netns.pids"
trap 'kill -TERM -- "-$pid" 2>/dev/null; wait "$pid" 2>/dev/null' EXIT
for _ in $(seq 200); do curl -sf "http://$OLLAMA_HOST/" >/dev/null && break; sleep 0.05; done

# A web provider and its key are configured in both runs; the reranker (a
# random-weight model, so its scores are arbitrary) and the threshold decide
# the route: far below every score keeps the docs, far above asks the web.
export LORE_WEB_PROVIDER=tavily LORE_RERANKER=hugot
question="how do I keep lore from indexing a folder?"
port=${OLLAMA_HOST##*:}

# other_dials TRACE: the connect(2) calls that were not to the Ollama host.
other_dials() { grep 'connect(' "$1" | grep -v "sin_port=htons($port), sin_addr=inet_addr(\"127.0.0.1\")" || true; }

LORE_WEB_FALLBACK_THRESHOLD=-1000000 strace -f -qq -e trace=connect -o "$work/offline.trace" \
  "$lore" ask --json --mode offline "$question" >"$work/offline.json" 2>"$work/offline.err"
code=$?
check "offline, in a namespace with only loopback: the answer arrives (exit $code)" \
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d["answer"] and d["route"] == "docs" else 1)' "$work/offline.json"
check "offline: lore connected to the Ollama host" grep -q "htons($port)" "$work/offline.trace"
others=$(other_dials "$work/offline.trace")
check "offline: no other connection was attempted${others:+: $others}" test -z "$others"

LORE_WEB_FALLBACK_THRESHOLD=1000000 strace -f -qq -e trace=connect -o "$work/online.trace" \
  "$lore" ask --json --mode online "$question" >"$work/online.json" 2>"$work/online.err"
code=$?
# Without the web, the turn is decided as offline would decide it: the
# threshold forced the web route, so the documents were judged not to
# answer, and lore says so (route none, exit 3) rather than answering
# from passages it had just judged too weak (issue 34).
check "online with the web unreachable: decided as offline (route none, exit $code)" \
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d["route"] == "none" and sys.argv[2] == "3" else 1)' "$work/online.json" "$code"
check "online with the web unreachable: the failure is reported" grep -q "web search failed" "$work/online.err"
check "online: the web search was attempted" test -n "$(other_dials "$work/online.trace")"
check "online: the API key is in no output" test -z "$(grep -l tvly-e2e-not-a-key "$work/online.json" "$work/online.err")"
