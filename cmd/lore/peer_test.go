package main

import (
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lore-cli/lore/internal/ollama"
	"github.com/lore-cli/lore/internal/ollamatest"
)

// hostileOllama are servers at OLLAMA_HOST that misbehave as a proxy, a
// captive portal or a stuck server does, each answering every path.
var hostileOllama = map[string]http.HandlerFunc{
	// 200 and a JSON body that never ends.
	"endless": func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		if r.Method == http.MethodHead {
			return // the heartbeat passes: the replies with a body do not
		}
		io.WriteString(w, `{"embeddings":[[`)
		chunk := strings.Repeat("0.123456789,", 4096)
		for r.Context().Err() == nil {
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
		}
	},
	// Accepts the request and never answers.
	"hung": func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // only then does the server see the client go
		<-r.Context().Done()
	},
	// A login page, status 200.
	"html": func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<!DOCTYPE html><html><body><form>Sign in to the Wi-Fi</form></body></html>")
	},
}

// Whatever answers at OLLAMA_HOST, each command does what it does when
// Ollama is down, within the deadlines, with a line naming the host:
// search by keyword, ask with the passages and exit 4, index with an error
// and the index untouched (issue 23, items 1, 3 and 4).
func TestHostileOllamaFallsBack(t *testing.T) {
	e := newEnv(t)
	e.vars["OLLAMA_HOST"] = ollamatest.New(t).URL
	docs := searchDocs(t)
	if r := e.run(false, "--index", "go", "index", "-q", docs); r.code != 0 {
		t.Fatal(r.stderr)
	}
	os.WriteFile(filepath.Join(docs, "new.md"), []byte("# New\n\nA page that needs embedding.\n"), 0o644)
	defer func(d time.Duration) { ollama.ReplyTimeout = d }(ollama.ReplyTimeout)
	ollama.ReplyTimeout = 500 * time.Millisecond
	e.vars["LORE_EMBED_TIMEOUT"] = "500ms"
	e.vars["LORE_FIRST_TOKEN_TIMEOUT"] = "500ms"

	for name, h := range hostileOllama {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(h)
			defer srv.Close()
			e.vars["OLLAMA_HOST"] = srv.URL

			r := e.run(false, "search", "--index", "go", "cancel a context")
			t.Logf("search: %s", r.stderr)
			if r.code != 0 || !strings.Contains(r.stdout, "context.md") || !strings.Contains(r.stderr, "lexical search only") || !strings.Contains(r.stderr, srv.URL) {
				t.Errorf("search: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			r = e.run(false, "ask", "--index", "go", "how do I cancel a context?")
			t.Logf("ask: %s", r.stderr)
			if r.code != exitSourcesOnly || !strings.Contains(r.stdout, "[1] context.md") || !strings.Contains(r.stderr, srv.URL) || strings.Contains(r.stderr, "<") {
				t.Errorf("ask: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			before := treeHash(t, e.vars["XDG_DATA_HOME"])
			r = e.run(false, "--index", "go", "index", "-q", docs)
			t.Logf("index: %s", r.stderr)
			if r.code != exitError || !strings.Contains(r.stderr, srv.URL) || strings.Count(r.stderr, "\n") != 1 || strings.Contains(r.stderr, "<") {
				t.Errorf("index: exit %d %q", r.code, r.stderr)
			}
			if treeHash(t, e.vars["XDG_DATA_HOME"]) != before {
				t.Error("index: the failed build changed the index")
			}
		})
	}
}

// treeHash sums the names and contents of the files under dir.
func treeHash(t *testing.T, dir string) string {
	h := sha256.New()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		fmt.Fprintf(h, "%s %d\n", p, len(b))
		h.Write(b)
		return err
	})
	return fmt.Sprintf("%x", h.Sum(nil))
}

// Ollama that answers its health checks but never starts the answer: the
// passages, exit 4, and a line naming the host and the setting, within
// first-token-timeout (issue 23, item 3).
func TestAskFirstTokenNeverComes(t *testing.T) {
	e, srv := askEnv(t)
	srv.SetChat(ollamatest.ChatScript{Tokens: []string{"too late"}, FirstDelay: time.Minute})
	e.vars["LORE_FIRST_TOKEN_TIMEOUT"] = "300ms"
	r := e.run(false, "ask", "--index", "go", "how do I cancel a context?")
	if r.code != exitSourcesOnly || !strings.Contains(r.stdout, "[1] context.md") || strings.Contains(r.stdout, "too late") ||
		!strings.Contains(r.stderr, "Ollama at "+srv.URL+" did not answer within 300ms") || !strings.Contains(r.stderr, "first-token-timeout") {
		t.Errorf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// lore search against a host whose replies never end stays within 100 MiB
// of its peak against a well-behaved one (issue 23, item 1: it grew to
// 22 GB). Each search runs in a child process (this test binary, re-run)
// so that its peak RSS is its own; one that grows past 1 GiB is killed.
func TestSearchPeakMemoryAgainstEndlessBody(t *testing.T) {
	if testing.Short() {
		t.Skip("runs lore search in child processes")
	}
	e := newEnv(t)
	e.vars["OLLAMA_HOST"] = ollamatest.New(t).URL
	if r := e.run(false, "--index", "go", "index", "-q", searchDocs(t)); r.code != 0 {
		t.Fatal(r.stderr)
	}
	endless := httptest.NewServer(hostileOllama["endless"])
	defer endless.Close()

	normal := searchPeak(t, e, e.vars["OLLAMA_HOST"])
	hostile := searchPeak(t, e, endless.URL)
	t.Logf("peak RSS of lore search: %d MiB against the fake Ollama, %d MiB against an endless body", normal>>20, hostile>>20)
	if hostile-normal > 100<<20 {
		t.Errorf("an endless body raised the peak by %d MiB", (hostile-normal)>>20)
	}
}

// searchPeak runs lore search against host in a child process and returns
// its peak RSS in bytes.
func searchPeak(t *testing.T, e *env, host string) int64 {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSearchChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "LORE_TEST_SEARCH_CHILD=1", "OLLAMA_HOST="+host)
	for k, v := range e.vars {
		if k != "OLLAMA_HOST" {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("child search: %v\n%s", err, out.String())
			}
			return cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10 // KiB on Linux
		case <-tick.C:
			if rss := currentRSS(cmd.Process.Pid); rss > 1<<30 {
				cmd.Process.Kill()
				<-done
				t.Fatalf("child search passed 1 GiB (%d MiB) and was killed", rss>>20)
			}
		}
	}
}

// currentRSS reads a process's resident set from /proc, 0 when it cannot.
func currentRSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// TestSearchChild is the child of TestSearchPeakMemoryAgainstEndlessBody:
// one lore search in the environment it was given.
func TestSearchChild(t *testing.T) {
	if os.Getenv("LORE_TEST_SEARCH_CHILD") == "" {
		t.Skip("run by TestSearchPeakMemoryAgainstEndlessBody")
	}
	var out, errb strings.Builder
	code := Main([]string{"search", "--index", "go", "cancel a context"}, &ioStreams{In: strings.NewReader(""), Out: &out, Err: &errb,
		Getenv: os.Getenv, ErrWidth: func() int { return 100 }, OutWidth: func() int { return 100 }})
	if code != 0 || !strings.Contains(out.String(), "context.md") {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
}
