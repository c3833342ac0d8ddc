package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/session"
)

// saveSessions stores sessions of the given turns (questions) where lore
// keeps them, and returns their ids in order.
func saveSessions(t *testing.T, e *env, sessions ...[]string) []string {
	t.Helper()
	cfg, err := config.Load("", func(k string) string { return e.vars[k] }, nil)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(cfg.DataDir, 0o755)
	st, err := session.Open(filepath.Join(cfg.DataDir, "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var ids []string
	for _, questions := range sessions {
		id := session.NewID()
		for _, q := range questions {
			if _, err := st.Append(context.Background(), id, session.Turn{Question: q, Answer: "an answer"}); err != nil {
				t.Fatal(err)
			}
		}
		ids = append(ids, id)
	}
	return ids
}

func TestSessionsRmSaysWhatItRemoved(t *testing.T) {
	e := newEnv(t)
	ids := saveSessions(t, e,
		[]string{"how do I keep lore from indexing a folder that holds generated files?", "and build output?", "thanks"},
		[]string{"one \x1b]0;title\x07 question"})
	r := e.run(false, "sessions", "rm", ids[0])
	if want := "removed session " + ids[0] + " (3 turns, 'how do I keep lore from indexing a fold…')\n"; r.code != 0 || r.stdout != want {
		t.Errorf("exit %d\n got %q\nwant %q\n%s", r.code, r.stdout, want, r.stderr)
	}
	r = e.run(false, "sessions", "rm", ids[1])
	if want := "removed session " + ids[1] + ` (1 turn, 'one  question')` + "\n"; r.code != 0 || r.stdout != want {
		t.Errorf("exit %d\n got %q\nwant %q", r.code, r.stdout, want)
	}
	if r := e.run(false, "sessions", "list"); strings.Contains(r.stdout, ids[0]) || strings.Contains(r.stdout, ids[1]) {
		t.Errorf("still listed:\n%s", r.stdout)
	}
	if r := e.run(false, "sessions", "rm", ids[0]); r.code != exitError || !strings.Contains(r.stderr, "no such session") {
		t.Errorf("twice: exit %d %q", r.code, r.stderr)
	}
}
