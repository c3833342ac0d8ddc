package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lore-cli/lore/internal/ollamatest"
)

// TestMain lets the test binary stand in for the lore binary: with
// LORE_TEST_MAIN=1 it runs Main on its arguments, so tests can send real
// signals to a real process.
func TestMain(m *testing.M) {
	if os.Getenv("LORE_TEST_MAIN") == "1" {
		os.Exit(Main(os.Args[1:], newIO()))
	}
	if spec := os.Getenv("LORE_TEST_FREE_BUILD"); spec != "" {
		os.Exit(runFreeBuild(spec))
	}
	os.Exit(m.Run())
}

func TestCtrlCKeepsWorkAndExits130(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process")
	}
	e := newEnv(t)
	srv := ollamatest.New(t)
	srv.SetDelay(20 * time.Millisecond)
	docs := t.TempDir()
	for i := range 200 {
		os.WriteFile(filepath.Join(docs, fmt.Sprintf("f%03d.md", i)), []byte(fmt.Sprintf("# F%d\n\nbody %d\n", i, i)), 0o644)
	}
	cmd := exec.Command(os.Args[0], "index", "--embed-batch-size", "4", docs)
	cmd.Env = []string{"LORE_TEST_MAIN=1", "OLLAMA_HOST=" + srv.URL}
	for k, v := range e.vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Interrupt once some embedding has happened.
	deadline := time.Now().Add(20 * time.Second)
	for srv.EmbeddedInputs() < 40 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitCancelled {
		t.Fatalf("exit %d (%v), want 130; stderr %q", code, err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("stderr %q", stderr.String())
	}
	before := srv.EmbeddedInputs()
	if before >= 200 {
		t.Fatalf("the interrupt came after all %d chunks were embedded", before)
	}
	r := e.run(false, "index", "--json", "--ollama-host", srv.URL)
	var sum struct {
		Embedded int `json:"chunks_embedded"`
		Total    int `json:"total_chunks"`
	}
	json.Unmarshal([]byte(r.stdout), &sum)
	if r.code != 0 || sum.Total != 200 {
		t.Fatalf("resume: exit %d %s %+v", r.code, r.stderr, sum)
	}
	// What was embedded before the interrupt is not embedded again (the
	// request in flight at the signal may be).
	if sum.Embedded+before > 200+4 {
		t.Fatalf("embedded %d before and %d after the interrupt, for 200 chunks", before, sum.Embedded)
	}
}

func TestAskCtrlCKeepsPartialAndExits130(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process")
	}
	e, srv := askEnv(t)
	srv.SetChat(ollamatest.ChatScript{Tokens: []string{"The partial ", "never sent"}, Hang: true})
	cmd := exec.Command(os.Args[0], "ask", "--index", "go", "how do I cancel a context?")
	cmd.Env = []string{"LORE_TEST_MAIN=1"}
	for k, v := range e.vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stdout, stderr lockedBuffer // read while the process writes
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(stdout.String(), "The partial") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("lore ask did not stop on SIGINT")
	}
	if code := cmd.ProcessState.ExitCode(); code != exitCancelled || !strings.HasPrefix(stdout.String(), "The partial ") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
	// The server keeps serving the next request.
	srv.SetChat(ollamatest.ChatScript{Tokens: []string{"fine [1]"}})
	if r := e.run(false, "ask", "--index", "go", "how do I cancel a context?"); r.code != 0 {
		t.Fatalf("next request: exit %d %s", r.code, r.stderr)
	}
}

// lockedBuffer is a bytes.Buffer safe to read while a process writes to it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestAskCtrlCWhileReadingInput: Ctrl+C or SIGTERM while lore ask waits on
// stdin or on a named pipe given as --context-file ends it at once with
// 130, and the turn nobody answered is not saved (it used to wait for the
// input to end, then answer "not in the docs", exit 3 and save a session).
func TestAskCtrlCWhileReadingInput(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process")
	}
	e, _ := askEnv(t)
	fifo := filepath.Join(t.TempDir(), "context")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no named pipes here:", err)
	}
	for _, tc := range []struct {
		name string
		sig  syscall.Signal
		args []string
	}{
		{"stdin/SIGINT", syscall.SIGINT, []string{"ask", "--index", "go"}},
		{"stdin context/SIGTERM", syscall.SIGTERM, []string{"ask", "--index", "go", "--context", "-", "how do I cancel a context?"}},
		{"fifo/SIGINT", syscall.SIGINT, []string{"ask", "--index", "go", "--context-file", fifo, "how do I cancel a context?"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], tc.args...)
			cmd.Env = []string{"LORE_TEST_MAIN=1"}
			for k, v := range e.vars {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			stdin, err := cmd.StdinPipe() // a pipe that stays open: lore waits on it
			if err != nil {
				t.Fatal(err)
			}
			var stdout, stderr lockedBuffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			os.RemoveAll(e.vars["XDG_STATE_HOME"])
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			io.WriteString(stdin, "how do I cancel")
			// The log opens once the configuration is read, after the
			// signal handler is in place and just before the input is.
			deadline := time.Now().Add(20 * time.Second)
			for time.Now().Before(deadline) {
				if _, err := os.Stat(filepath.Join(e.vars["XDG_STATE_HOME"], "lore", "lore.log")); err == nil {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			cmd.Process.Signal(tc.sig)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				// End the input, to see what lore does then.
				stdin.Close()
				if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					f.Close()
				}
				select {
				case <-done:
				case <-time.After(10 * time.Second):
					cmd.Process.Kill()
					<-done
				}
				t.Fatalf("lore ask went on reading its input after %v: exit %d, stdout %q, stderr %q", tc.sig, cmd.ProcessState.ExitCode(), stdout.String(), stderr.String())
			}
			stdin.Close()
			if code := cmd.ProcessState.ExitCode(); code != exitCancelled || stdout.String() != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
			}
			if r := e.run(false, "sessions", "list", "--json"); strings.TrimSpace(r.stdout) != "[]" {
				t.Errorf("a turn nobody answered was saved: %s", r.stdout)
			}
		})
	}
}
