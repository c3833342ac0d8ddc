#!/usr/bin/env bash
# weaviate-smoke.sh [NODES]: groundwork for issue 27, not a test of lore. Starts
# a Weaviate cluster on loopback (3 nodes unless told), creates a collection
# with replication factor NODES, inserts objects with vectors, runs a hybrid
# and a BM25 query, kills the Raft leader with SIGKILL and reads again, starts
# it again and waits for it to rejoin, then stops everything. Prints what
# scripts/weaviate-notes.md records. Not part of make test, make e2e or .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
nodes=${1:-3}
bulk=${WEAVIATE_SMOKE_BULK:-1000}
work=$(mktemp -d)
trap 'weaviate_stop_all; left=$(weaviate_left_running); [[ -z $left ]] || echo "still running: $left" >&2; if [[ -n ${WEAVIATE_KEEP:-} ]]; then echo "kept $work"; else rm -rf "$work"; fi' EXIT
source scripts/weaviate-lib.sh

step() { printf '\n== %s\n' "$*"; }
rss() { local i; for ((i = 0; i < nodes; i++)); do [[ -f $work/weaviate-$i/pid ]] && printf 'node%d %s MB  ' "$i" "$(weaviate_rss_mb "$i")"; done; echo; }
gql() { # node query: POST a GraphQL query, print its data or fail on errors
  local out
  out=$(jq -n --arg q "$2" '{query: $q}' | curl -sf -H 'Content-Type: application/json' -d @- "$(weaviate_url "$1")/v1/graphql")
  if jq -e '.errors' <<<"$out" >/dev/null; then echo "$out" >&2; return 1; fi
  jq -c '.data.Get.Chunk[] | [.path, (._additional.score // "")]' <<<"$out"
}

step "start $nodes nodes (ports from $(weaviate_free_block 1)…)"
t0=$SECONDS
weaviate_start_cluster "$nodes"
echo "cluster HEALTHY after $((SECONDS - t0))s"
curl -sf "$(weaviate_url 0)/v1/nodes" | jq -c '[.nodes[] | {name, status, version}]'
curl -sf "$(weaviate_url 0)/v1/meta" | jq -c '{version, hostname}'
step "listening sockets of node0"
ss -ltnup 2>/dev/null | grep "pid=$(weaviate_pid 0)," | awk '{print $1, $5}' | sort -u
sleep 5
step "RSS idle"; rss

step "create collection Chunk, replication factor $nodes"
curl -sf -H 'Content-Type: application/json' "$(weaviate_url 0)/v1/schema" -d @- <<EOF | jq -c '{class, replicationConfig, props: [.properties[] | {name, tokenization}]}'
{"class": "Chunk", "vectorizer": "none",
 "replicationConfig": {"factor": $nodes},
 "vectorIndexConfig": {"distance": "cosine"},
 "properties": [
  {"name": "text", "dataType": ["text"], "tokenization": "word"},
  {"name": "path", "dataType": ["text"], "tokenization": "whitespace"}]}
EOF

step "insert 5 objects with vectors (consistency ALL)"
python3 - >"$work/batch.json" <<'EOF'
import json
docs = [
    ("docs/raft.md", "The Raft leader replicates the log to followers", [1, 0, 0, 0]),
    ("docs/gossip.md", "Gossip spreads membership between nodes", [0, 1, 0, 0]),
    ("docs/bm25.md", "BM25 ranks chunks by term frequency", [0, 0, 1, 0]),
    ("docs/hnsw.md", "HNSW is a graph index for vectors", [0, 0, 0, 1]),
    ("docs/leader-election.md", "Leader election in Raft uses randomized timeouts", [0.9, 0.1, 0, 0]),
]
print(json.dumps({"objects": [{"class": "Chunk", "properties": {"path": p, "text": t}, "vector": v} for p, t, v in docs]}))
EOF
curl -sf -H 'Content-Type: application/json' "$(weaviate_url 0)/v1/batch/objects?consistency_level=ALL" -d @"$work/batch.json" |
  jq -c '[.[] | .result.errors // "ok"]'

step "hybrid query on node$((1 % nodes)) (alpha 0.5, query 'raft leader', vector [1,0,0,0])"
gql $((1 % nodes)) '{ Get { Chunk(hybrid: {query: "raft leader", vector: [1, 0, 0, 0], alpha: 0.5}, limit: 3) { path _additional { score } } } }'
step "BM25 query on node$((nodes - 1)) over text (word) and path (whitespace)"
gql $((nodes - 1)) '{ Get { Chunk(bm25: {query: "leader", properties: ["text"]}, limit: 3) { path _additional { score } } } }'
gql $((nodes - 1)) '{ Get { Chunk(bm25: {query: "docs/bm25.md", properties: ["path"]}, limit: 3) { path _additional { score } } } }'

if ((bulk > 0)); then
  step "collection Bulk (replication factor $nodes): insert $bulk objects with random 384-d vectors (batches of 200, consistency QUORUM)"
  curl -sf -H 'Content-Type: application/json' "$(weaviate_url 0)/v1/schema" -o /dev/null -d @- <<EOF
{"class": "Bulk", "vectorizer": "none", "replicationConfig": {"factor": $nodes},
 "properties": [{"name": "text", "dataType": ["text"]}, {"name": "path", "dataType": ["text"]}]}
EOF
  t0=$SECONDS
  python3 - "$bulk" "$work" <<'EOF'
import json, random, sys
n, work = int(sys.argv[1]), sys.argv[2]
random.seed(1)
for b in range(0, n, 200):
    objs = [{"class": "Bulk", "properties": {"path": "bulk/%d.md" % i, "text": "filler chunk number %d about nothing" % i},
             "vector": [random.gauss(0, 1) for _ in range(384)]} for i in range(b, min(n, b + 200))]
    open("%s/bulk-%05d.json" % (work, b), "w").write(json.dumps({"objects": objs}))
EOF
  for f in "$work"/bulk-*.json; do
    curl -sf -H 'Content-Type: application/json' "$(weaviate_url 0)/v1/batch/objects?consistency_level=QUORUM" -d @"$f" |
      jq -e 'all(.[]; .result.errors == null)' >/dev/null || { echo "bulk batch $f failed" >&2; exit 1; }
  done
  echo "bulk insert took $((SECONDS - t0))s"
fi
sleep 5
step "RSS after inserts"; rss

if ((nodes > 1)); then
  victim=$((nodes - 1))
  leader=$(curl -sf "$(weaviate_url 0)/v1/cluster/statistics" | jq -r '.statistics[0].leaderId // empty' || true)
  if [[ $leader == node* ]]; then victim=${leader#node}; fi
  survivor=$(((victim + 1) % nodes))
  step "kill -9 node$victim (Raft leader: ${leader:-unknown}); read on node$survivor"
  weaviate_kill_node "$victim"
  gql "$survivor" '{ Get { Chunk(hybrid: {query: "raft leader", vector: [1, 0, 0, 0], alpha: 0.5}, limit: 3) { path _additional { score } } } }'
  gql "$survivor" '{ Get { Chunk(bm25: {query: "gossip"}, limit: 2) { path _additional { score } } } }'
  echo "Aggregate count on node$survivor (15 s bound: count(*) polls the dead node's shard and does not fall back to a replica):"
  t0=$SECONDS
  curl -sf --max-time 15 "$(weaviate_url "$survivor")/v1/graphql" -H 'Content-Type: application/json' \
    -d '{"query": "{ Aggregate { Chunk { meta { count } } } }"}' | jq -c '.data.Aggregate.Chunk[0].meta' ||
    echo "(no answer after $((SECONDS - t0))s)"
  sleep 3
  curl -sf "$(weaviate_url "$survivor")/v1/nodes" | jq -c '[.nodes[] | {name, status}]'
  id=$(curl -sf "$(weaviate_url "$survivor")/v1/objects?class=Chunk&limit=1" | jq -r '.objects[0].id')
  echo "GET object $id with consistency QUORUM on node$survivor:"
  curl -sf "$(weaviate_url "$survivor")/v1/objects/Chunk/$id?consistency_level=QUORUM" | jq -c '.properties'
  echo "insert with consistency QUORUM while node$victim is down:"
  curl -sf -H 'Content-Type: application/json' "$(weaviate_url "$survivor")/v1/objects?consistency_level=QUORUM" \
    -d '{"class": "Chunk", "properties": {"path": "docs/late.md", "text": "written while a node was down"}, "vector": [0, 0.5, 0.5, 0]}' |
    jq -c '{id, path: .properties.path}' || echo "(failed)"

  step "restart node$victim"
  weaviate_start_node "$victim"
  weaviate_wait_ready "$victim"
  t0=$SECONDS
  weaviate_wait_healthy "$nodes" "$victim"
  echo "all $nodes HEALTHY on node$victim $((SECONDS - t0))s after it was ready"
  curl -sf "$(weaviate_url "$victim")/v1/nodes" | jq -c '[.nodes[] | {name, status}]'
  echo "BM25 'written' on node$victim (the object inserted while it was down; async replication catches up):"
  t0=$SECONDS
  until out=$(gql "$victim" '{ Get { Chunk(bm25: {query: "written"}, limit: 2) { path _additional { score } } } }') && [[ -n $out ]]; do
    if ((SECONDS - t0 > 120)); then out="(not there after 120s)"; break; fi
    sleep 1
  done
  echo "$out (after $((SECONDS - t0))s)"
  curl -sf "$(weaviate_url "$victim")/v1/graphql" -H 'Content-Type: application/json' \
    -d '{"query": "{ Aggregate { Chunk { meta { count } } } }"}' | jq -c '.data.Aggregate.Chunk[0].meta'
fi

step "stop all"
t0=$SECONDS
weaviate_stop_all
echo "stopped in $((SECONDS - t0))s; left running: $(weaviate_left_running | tr '\n' ' ')"
echo "log lines on telemetry (OpenTelemetry aside): $(cat "$work"/weaviate-*/log | grep -i telemetr | grep -vic opentelemetry)"
