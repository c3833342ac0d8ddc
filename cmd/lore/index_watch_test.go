package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lore-cli/lore/wire"
)

// lore index --watch --json is a stream of events a script can follow;
// SIGINT and SIGTERM end it with 130, every batch applied kept.
func TestIndexWatchJSONEventsAndExit130(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process")
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			e := newEnv(t)
			docs := t.TempDir()
			os.WriteFile(filepath.Join(docs, "a.md"), []byte("# A\n\nalpha\n"), 0o644)
			if r := e.run(false, "index", "--embedder", "none", docs); r.code != 0 {
				t.Fatalf("index: %d %s", r.code, r.stderr)
			}
			cmd := exec.Command(os.Args[0], "index", "--watch", "--json")
			cmd.Env = []string{"LORE_TEST_MAIN=1"}
			for k, v := range e.vars {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			lines := make(chan wire.WatchEvent, 16)
			go func() {
				sc := bufio.NewScanner(out)
				for sc.Scan() {
					var ev wire.WatchEvent
					if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
						t.Errorf("not one JSON event a line: %q", sc.Text())
						continue
					}
					lines <- ev
				}
				close(lines)
			}()
			next := func() wire.WatchEvent {
				t.Helper()
				select {
				case ev := <-lines:
					return ev
				case <-time.After(30 * time.Second):
					t.Fatal("no event")
				}
				return wire.WatchEvent{}
			}
			if ev := next(); ev.Event != "started" || ev.Index != "default" {
				t.Fatalf("first event: %+v", ev)
			}
			os.WriteFile(filepath.Join(docs, "b.md"), []byte("# B\n\nbravo\n"), 0o644)
			ev := next()
			if ev.Event != "synced" || ev.Files != 1 || ev.ChunksAdded != 1 || len(ev.Paths) != 1 || ev.Paths[0] != filepath.Join(docs, "b.md") {
				t.Errorf("event for a saved file: %+v", ev)
			}
			cmd.Process.Signal(sig)
			err = cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 130 {
				t.Errorf("after %v: %v, want exit 130", sig, err)
			}
			if r := e.run(false, "search", "--json", "bravo"); r.code != 0 || !json.Valid([]byte(r.stdout)) || !strings.Contains(r.stdout, "b.md") {
				t.Errorf("the batch applied before the signal is kept: %d %s", r.code, r.stdout)
			}
		})
	}
}
