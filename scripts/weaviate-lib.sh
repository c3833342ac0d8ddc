# Sourced: a real Weaviate cluster (1 or 3 nodes) on loopback, groundwork for
# the Weaviate backend (issue 27; see docs/weaviate.md). Needs $work (a
# temp dir the caller removes); each node keeps its data, log and PID under
# $work/weaviate-<i>/. Builds the server first if it is not cached.
#
#   weaviate_start_cluster 3     # start nodes 0..2, wait until all HEALTHY
#   weaviate_url 1               # http://127.0.0.1:<port of node 1>
#   weaviate_kill_node 2         # SIGKILL node 2 (a crash)
#   weaviate_start_node 2; weaviate_wait_healthy 3
#   weaviate_stop_all            # TERM, then KILL after WEAVIATE_STOP_TIMEOUT
#
# Every node listens on six ports of one free block: HTTP, gRPC, gossip,
# data (gossip+1), Raft and Raft's internal RPC (Raft+1: with
# CLUSTER_IN_LOCALHOST the server derives a peer's RPC port as its Raft port
# plus one, whatever RAFT_INTERNAL_RPC_PORT says).
weaviate=$PWD/.cache/weaviate/bin/weaviate-server
weaviate_nodes=0
weaviate_base=0
WEAVIATE_STOP_TIMEOUT=${WEAVIATE_STOP_TIMEOUT:-20}
WEAVIATE_START_TIMEOUT=${WEAVIATE_START_TIMEOUT:-120}

# weaviate_free_block N prints a port P such that P..P+N-1 are all free on
# 127.0.0.1 for TCP and UDP (memberlist gossips over both), below the
# kernel's ephemeral range: a killed node restarted must get its ports back,
# and outgoing connections meanwhile take local ports from that range.
weaviate_free_block() {
  python3 - "$1" <<'EOF'
import random, socket, sys
n = int(sys.argv[1])
try:
    low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
except (OSError, ValueError, IndexError):
    low = 32768
low = low if low > 12000 else 32768
for _ in range(200):
    base = random.randrange(10000, low - n)
    socks = []
    try:
        for p in range(base, base + n):
            for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
                s = socket.socket(socket.AF_INET, kind)
                socks.append(s)
                s.bind(("127.0.0.1", p))
        print(base)
        sys.exit(0)
    except OSError:
        pass
    finally:
        for s in socks:
            s.close()
sys.exit("no free block of %d ports" % n)
EOF
}

weaviate_port() { # node kind: kind is http grpc gossip data raft rpc
  local off
  case $2 in http) off=0 ;; grpc) off=1 ;; gossip) off=2 ;; data) off=3 ;; raft) off=4 ;; rpc) off=5 ;; esac
  echo $((weaviate_base + 6 * $1 + off))
}
weaviate_url() { echo "http://127.0.0.1:$(weaviate_port "$1" http)"; }
weaviate_pid() { cat "$work/weaviate-$1/pid" 2>/dev/null; }

# weaviate_start_node I starts node I (of $weaviate_nodes) in a process group
# of its own (setsid without a fork keeps $! as its PID) and returns at once.
weaviate_start_node() {
  local i=$1 j raft_join="" cluster_join="" dir=$work/weaviate-$1
  for ((j = 0; j < weaviate_nodes; j++)); do
    raft_join+=${raft_join:+,}node$j:$(weaviate_port $j raft)
    if ((j != i)); then cluster_join+=${cluster_join:+,}127.0.0.1:$(weaviate_port $j gossip); fi
  done
  mkdir -p "$dir/data"
  date +%s.%N >"$dir/started"
  env PERSISTENCE_DATA_PATH="$dir/data" \
    AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED=true \
    DEFAULT_VECTORIZER_MODULE=none ENABLE_MODULES= \
    DISABLE_TELEMETRY=true GO_PROFILING_DISABLE=true PROMETHEUS_MONITORING_ENABLED=false \
    CLUSTER_HOSTNAME="node$i" CLUSTER_IN_LOCALHOST=true \
    CLUSTER_ADVERTISE_ADDR=127.0.0.1 CLUSTER_BIND_ADDR=127.0.0.1 \
    CLUSTER_GOSSIP_BIND_PORT="$(weaviate_port "$i" gossip)" CLUSTER_DATA_BIND_PORT="$(weaviate_port "$i" data)" \
    CLUSTER_JOIN="$cluster_join" \
    RAFT_PORT="$(weaviate_port "$i" raft)" RAFT_INTERNAL_RPC_PORT="$(weaviate_port "$i" rpc)" \
    RAFT_JOIN="$raft_join" RAFT_BOOTSTRAP_EXPECT="$weaviate_nodes" \
    GRPC_PORT="$(weaviate_port "$i" grpc)" \
    COLLECTION_RETRIEVAL_STRATEGY=LocalOnly \
    LOG_LEVEL=${WEAVIATE_LOG_LEVEL:-info} \
    setsid "$weaviate" --scheme http --host 127.0.0.1 --port "$(weaviate_port "$i" http)" \
    >>"$dir/log" 2>&1 &
  echo $! >"$dir/pid"
  echo $! >>"$work/weaviate.pids"
}

# weaviate_wait_ready I waits for node I's /v1/.well-known/ready and prints
# how long the node took since it was started.
weaviate_wait_ready() {
  local i=$1 deadline=$((SECONDS + WEAVIATE_START_TIMEOUT))
  while ((SECONDS < deadline)); do
    if curl -sf -o /dev/null "$(weaviate_url "$i")/v1/.well-known/ready"; then
      echo "node$i ready after $(python3 -c "import time; print('%.1fs' % (time.time() - $(cat "$work/weaviate-$i/started")))")"
      return 0
    fi
    if ! weaviate_alive "$(weaviate_pid "$i")"; then break; fi
    sleep 0.2
  done
  echo "weaviate node$i is not ready; its log:" >&2
  tail -20 "$work/weaviate-$i/log" >&2
  return 1
}

# weaviate_wait_healthy N [I] waits until /v1/nodes on node I (default 0)
# lists N nodes, all HEALTHY.
weaviate_wait_healthy() {
  local n=$1 i=${2:-0} deadline=$((SECONDS + WEAVIATE_START_TIMEOUT)) got=""
  while ((SECONDS < deadline)); do
    got=$(curl -sf "$(weaviate_url "$i")/v1/nodes" | jq -r '[.nodes[] | select(.status == "HEALTHY")] | length' 2>/dev/null) || got=""
    if [[ $got == "$n" ]]; then return 0; fi
    sleep 0.5
  done
  echo "weaviate: $n nodes not HEALTHY on node$i (got ${got:-no answer})" >&2
  curl -s "$(weaviate_url "$i")/v1/nodes" | jq -c '[.nodes[] | {name, status}]' >&2 || true
  return 1
}

# weaviate_start_cluster N starts N nodes together (Raft waits for
# RAFT_BOOTSTRAP_EXPECT voters before it elects a leader), then waits.
weaviate_start_cluster() {
  local i
  weaviate_nodes=$1
  weaviate_base=$(weaviate_free_block $((6 * $1)))
  for ((i = 0; i < weaviate_nodes; i++)); do weaviate_start_node "$i"; done
  for ((i = 0; i < weaviate_nodes; i++)); do weaviate_wait_ready "$i" || return 1; done
  weaviate_wait_healthy "$weaviate_nodes"
}

weaviate_kill_node() { # I: SIGKILL to node I's process group, no shutdown
  local pid
  pid=$(weaviate_pid "$1") || return 0
  kill -KILL -- "-$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  rm -f "$work/weaviate-$1/pid"
}

# weaviate_alive PID: the process exists and is not a zombie.
weaviate_alive() { [[ -r /proc/$1/stat ]] && [[ $(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) != Z ]]; }

# weaviate_stop_node I...: SIGTERM to each node's process group, then SIGKILL
# to those still alive after WEAVIATE_STOP_TIMEOUT seconds.
weaviate_stop_node() {
  local i pid pids=() deadline=$((SECONDS + WEAVIATE_STOP_TIMEOUT))
  for i in "$@"; do
    pid=$(weaviate_pid "$i") || continue
    kill -TERM -- "-$pid" 2>/dev/null || true
    pids+=("$i:$pid")
  done
  for i in "${pids[@]}"; do
    pid=${i#*:}
    while weaviate_alive "$pid" && ((SECONDS < deadline)); do sleep 0.2; done
    if weaviate_alive "$pid"; then
      echo "weaviate node${i%%:*} ignored TERM for ${WEAVIATE_STOP_TIMEOUT}s: KILL" >&2
      kill -KILL -- "-$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
    rm -f "$work/weaviate-${i%%:*}/pid"
  done
}

weaviate_stop_all() {
  local i all=()
  for ((i = 0; i < weaviate_nodes; i++)); do all+=("$i"); done
  weaviate_stop_node "${all[@]}"
}

# weaviate_left_running prints the PIDs started under $work still alive.
weaviate_left_running() {
  local pid
  for pid in $(cat "$work/weaviate.pids" 2>/dev/null); do weaviate_alive "$pid" && echo "$pid"; done
  return 0
}

weaviate_rss_mb() { # I: resident set of node I in MB
  awk '/^VmRSS/ {printf "%d\n", $2 / 1024}' "/proc/$(weaviate_pid "$1")/status"
}

scripts/build-weaviate.sh .cache/weaviate/bin
