# Sourced by scripts/e2e.sh and scripts/with-ollama.sh: a real Ollama server
# on a free loopback port with the tiny generated models. Needs $work (a temp
# dir the caller removes) and sets OLLAMA_HOST, OLLAMA_MODELS, server_pid.
ollama=$PWD/.cache/ollama/bin/ollama
server_pid=""

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }

# start_server runs the server in a process group of its own (setsid without
# a fork keeps $! as its PID) so that its runner subprocess dies with it.
start_server() {
  setsid "$ollama" serve >>"$work/server.log" 2>&1 &
  server_pid=$!
  echo "$server_pid" >>"$work/server.pids"
  for _ in $(seq 200); do curl -sf "http://$OLLAMA_HOST/" >/dev/null && return 0; sleep 0.05; done
  echo "the Ollama server did not start; its log:" >&2
  tail -20 "$work/server.log" >&2
  return 1
}

# left_running prints the servers started under $work that are still alive,
# and any runner serving a model from $work.
left_running() {
  local pid
  for pid in $(cat "$work"/*.pids 2>/dev/null); do kill -0 "$pid" 2>/dev/null && echo "$pid"; done
  pgrep -f "$OLLAMA_MODELS" || true
}

stop_server() { # signal
  if [[ -n $server_pid ]]; then
    kill "-$1" -- "-$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
  fi
}

# create_models writes the tiny GGUF and creates lore-tiny (24-token
# answers), lore-long (answers that keep streaming for a while, for the
# tests that interrupt one), lore-embed (another file, so that it runs
# beside the chat model as a real embedding model does) and lore-embed-768
# (the dimension of real embedding models, for memory measurements).
create_models() {
  go run ./internal/testmodels/cmd/testmodel gguf "$work/tiny.gguf"
  go run ./internal/testmodels/cmd/testmodel embed-gguf "$work/embed.gguf"
  go run ./internal/testmodels/cmd/testmodel embed768-gguf "$work/embed768.gguf"
  local template='TEMPLATE """{{ range .Messages }}{{ .Content }}
{{ end }}"""'
  printf 'FROM %s\n%s\nPARAMETER num_predict 24\n' "$work/tiny.gguf" "$template" >"$work/Modelfile"
  printf 'FROM %s\n%s\nPARAMETER num_predict 4000\n' "$work/tiny.gguf" "$template" >"$work/Modelfile.long"
  "$ollama" create lore-tiny -f "$work/Modelfile" >/dev/null 2>&1
  "$ollama" create lore-long -f "$work/Modelfile.long" >/dev/null 2>&1
  printf 'FROM %s\n' "$work/embed.gguf" >"$work/Modelfile.embed"
  "$ollama" create lore-embed -f "$work/Modelfile.embed" >/dev/null 2>&1
  printf 'FROM %s\n' "$work/embed768.gguf" >"$work/Modelfile.embed768"
  "$ollama" create lore-embed-768 -f "$work/Modelfile.embed768" >/dev/null 2>&1
}

scripts/build-ollama.sh .cache/ollama/bin
export OLLAMA_HOST=127.0.0.1:$(free_port) OLLAMA_MODELS=$work/models
