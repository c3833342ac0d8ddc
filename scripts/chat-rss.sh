#!/usr/bin/env bash
# chat-rss.sh [TURNS]: peak RSS of a real `lore chat` process after TURNS
# questions (default 200), typed in tmux and answered by a real Ollama
# server on loopback with the tiny generated model. Prints one benchmark
# line for BENCHMARKS.md. Everything it starts, it stops by PID.
set -euo pipefail
cd "$(dirname "$0")/.."
turns=${1:-200}
go build -o bin/lore ./cmd/lore
lore=$PWD/bin/lore
work=$(mktemp -d)
sock=lore-rss-$$
cleanup() {
  tmux -L "$sock" kill-server 2>/dev/null || true
  stop_server TERM
  rm -rf "$work"
}
trap cleanup EXIT
source scripts/ollama-lib.sh
export XDG_DATA_HOME=$work/data XDG_STATE_HOME=$work/state XDG_CONFIG_HOME=$work/config
start_server
create_models
mkdir -p "$XDG_CONFIG_HOME/lore"
printf 'embed-model: lore-embed\nchat-model: lore-tiny\nreranker: none\n' >"$XDG_CONFIG_HOME/lore/config.yaml"
"$lore" index --quiet docs
tmux -L "$sock" -f /dev/null new-session -d -s rss -x 120 -y 40 \
  "env XDG_DATA_HOME=$XDG_DATA_HOME XDG_STATE_HOME=$XDG_STATE_HOME XDG_CONFIG_HOME=$XDG_CONFIG_HOME OLLAMA_HOST=$OLLAMA_HOST $lore chat"
pane_pid=$(tmux -L "$sock" display-message -p -t rss '#{pane_pid}')
sleep 1
lore_pid=$(pgrep -P "$pane_pid" -x lore || echo "$pane_pid")
start=$SECONDS
for i in $(seq "$turns"); do
  tmux -L "$sock" send-keys -t rss "question $i: how do I keep lore from indexing a folder?" Enter
  # The next question is typed once this one is saved.
  for _ in $(seq 300); do
    [[ $(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT count(*) FROM turns').fetchone()[0])" "$XDG_DATA_HOME/lore/sessions.db" 2>/dev/null || echo 0) -ge $i ]] && break
    sleep 0.1
  done
done
hwm=$(awk '/VmHWM/ {print $2}' "/proc/$lore_pid/status")
rss=$(awk '/VmRSS/ {print $2}' "/proc/$lore_pid/status")
tmux -L "$sock" send-keys -t rss C-d
echo "BenchmarkChatProcess/Turns$turns 1 $(( (SECONDS - start) * 1000000000 )) ns/op $(awk -v k="$hwm" 'BEGIN{printf "%.1f", k/1024}') peak-RSS-MiB $(awk -v k="$rss" 'BEGIN{printf "%.1f", k/1024}') RSS-MiB"
