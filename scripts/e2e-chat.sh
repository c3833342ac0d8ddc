# Sourced by scripts/e2e.sh while its Ollama server runs: the chat, used as a
# person would, in tmux (a server of its own on a private socket, stopped by
# its PID). Needs $lore, $work, check() and has() from e2e.sh.

tmux_sock=lore-e2e-$$
tm() { tmux -L "$tmux_sock" "$@"; }
capture() { tm capture-pane -p -t "$1" >"$work/chat.$2.txt"; }
# wait_screen TARGET TEXT [SECONDS]: until the pane shows TEXT.
wait_screen() {
  local deadline=$((SECONDS + ${3:-30}))
  while ((SECONDS < deadline)); do
    tm capture-pane -p -t "$1" 2>/dev/null | grep -qF -- "$2" && return 0
    sleep 0.1
  done
  return 1
}
answer_lines() { tm capture-pane -p -t "$1" | grep -c '^  [^ ]' || true; }

# An editor that records how it was called, named vi so that lore passes
# it vi's arguments (+LINE FILE).
mkdir -p "$work/editor"
cat >"$work/editor/vi" <<EOS
#!/bin/sh
echo "\$@" >"$work/editor.args"
EOS
chmod +x "$work/editor/vi"

chat_env="XDG_DATA_HOME=$XDG_DATA_HOME XDG_STATE_HOME=$XDG_STATE_HOME XDG_CONFIG_HOME=$XDG_CONFIG_HOME OLLAMA_HOST=$OLLAMA_HOST EDITOR=$work/editor/vi TERM=xterm-256color"
tm -f /dev/null new-session -d -s chat -x 120 -y 40 "env $chat_env $lore chat --model lore-long; echo \"exit \$?\" >$work/chat.exit; sleep 30"
tmux_pid=$(tm display-message -p '#{pid}')
wait_screen chat:0 "chunks" 30 || true
capture chat:0 start
check "the chat opens on the index" has "$work/chat.start.txt" "OFFLINE"

tm send-keys -t chat:0 "$question" Enter
wait_screen chat:0 "generating" 60 || true
# lore-long streams 4,000 tokens: the first ones (after the model loads)
# must show while the stage still says generating.
for _ in $(seq 600); do [[ $(answer_lines chat:0) -gt 0 ]] && break; sleep 0.1; done
first=$(answer_lines chat:0)
capture chat:0 streaming
sleep 2
second=$(answer_lines chat:0)
capture chat:0 streaming2
check "tokens arrive before the answer ends ($first then $second answer lines, stage shown)" \
  test "$first" -gt 0 -a "$second" -ge "$first" -a -n "$(grep -l 'generating' "$work/chat.streaming2.txt")"

tm send-keys -t chat:0 Escape
wait_screen chat:0 "CANCELLED" 30 || true
capture chat:0 cancelled
check "esc cancels the answer and keeps what streamed" has "$work/chat.cancelled.txt" "cancelled — the partial answer above is kept"
sleep 0.5

tm send-keys -t chat:0 "/model lore-tiny" Enter
tm send-keys -t chat:0 "$question" Enter
wait_screen chat:0 " DOCS " 90 || true
capture chat:0 answered
check "a second question is answered from the docs, with sources and the route badge" has "$work/chat.answered.txt" "Sources:"

tm send-keys -t chat:0 C-s
wait_screen chat:0 "passages" 10 || true
capture chat:0 panel
check "ctrl+s opens the sources panel with every retrieved passage" has "$work/chat.panel.txt" "Sources · "
tm send-keys -t chat:0 Escape
sleep 0.5 # an escape followed at once by another key reads as alt+key

tm send-keys -t chat:0 C-o 1
for _ in $(seq 100); do [[ -s $work/editor.args ]] && break; sleep 0.1; done
check "ctrl+o 1 opens source [1] in \$EDITOR at its line (+LINE path)" \
  grep -qE '^\+[0-9]+ /.+' "$work/editor.args"
wait_screen chat:0 "OFFLINE" 10 || true
capture chat:0 after-editor
check "the chat is drawn again after the editor exits" has "$work/chat.after-editor.txt" "Sources:"

tm send-keys -t chat:0 C-d
for _ in $(seq 100); do [[ -s $work/chat.exit ]] && break; sleep 0.1; done
check "ctrl+d quits with exit 0" grep -q '^exit 0$' "$work/chat.exit"
check "the terminal is restored: main screen, cursor visible" \
  test "$(tm display-message -p -t chat:0 '#{alternate_on} #{cursor_flag}')" = "0 1"

tm new-window -t chat -n resume "env $chat_env $lore chat --resume; echo \"exit \$?\" >$work/chat.exit2; sleep 30"
wait_screen chat:resume "resumed session" 30 || true
capture chat:resume resumed
check "lore chat --resume continues the last session" has "$work/chat.resumed.txt" "$question"
tm send-keys -t chat:resume C-d
for _ in $(seq 100); do [[ -s $work/chat.exit2 ]] && break; sleep 0.1; done

tm kill-server 2>/dev/null || true
for _ in $(seq 50); do kill -0 "$tmux_pid" 2>/dev/null || break; sleep 0.1; done
check "no chat or tmux process is left running" test -z "$(kill -0 "$tmux_pid" 2>/dev/null && echo alive; pgrep -f "$lore chat" || true)"
if [[ -n ${E2E_SHOW:-} ]]; then for f in "$work"/chat.*.txt; do echo "== $f"; cat "$f"; done; fi
