package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/internal/ollamatest"
	"github.com/lore-cli/lore/internal/testmodels"
)

// The module path is github.com/lore-cli/lore; the command is lore. Help
// and completion scripts name the command.
func TestCommandIsNamedLore(t *testing.T) {
	e := newEnv(t)
	if r := e.run(false, "index", "--help"); r.code != 0 || !strings.Contains(r.stdout, "\n  lore index [PATH...]") {
		t.Errorf("index --help usage line:\n%s", r.stdout)
	}
	if r := e.run(false, "completion", "bash"); r.code != 0 || !strings.Contains(r.stdout, "complete -o default -F __start_lore lore") {
		t.Errorf("bash completion is not for lore: %d", r.code)
	}
}

// complete runs the shell's completion request (what the scripts of `lore
// completion` run at Tab) and returns the candidates, without their
// descriptions and the directive line.
func (e *env) complete(args ...string) (candidates []string, r run) {
	e.t.Helper()
	r = e.run(false, append([]string{"__complete"}, args...)...)
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if l != "" && !strings.HasPrefix(l, ":") {
			c, _, _ := strings.Cut(l, "\t")
			candidates = append(candidates, c)
		}
	}
	if r.code != 0 || strings.Contains(r.stderr, "lore:") {
		e.t.Errorf("__complete %v: exit %d %q", args, r.code, r.stderr)
	}
	return candidates, r
}

func TestCompletionOffersIndexesAndSessions(t *testing.T) {
	e := newEnv(t)
	if got, _ := e.complete("--index", ""); len(got) != 0 {
		t.Errorf("no indexes yet: %q", got)
	}
	twoIndexes(t, e)
	for _, args := range [][]string{{"--index", ""}, {"search", "--index", ""}, {"index", "rm", ""}, {"--index", "work", "index", "rm", ""}} {
		if got, _ := e.complete(args...); strings.Join(got, " ") != "default work" {
			t.Errorf("%v: %q", args, got)
		}
	}
	if got, _ := e.complete("index", "rm", "work", ""); len(got) != 0 {
		t.Errorf("a second name: %q", got)
	}

	ids := saveSessions(t, e, []string{"how do I index?"}, []string{"what is \x1b[31mred\x1b[0m?"})
	slices.Sort(ids)
	want := strings.Join(ids, " ")
	for _, args := range [][]string{{"sessions", "rm", ""}, {"sessions", "show", ""}, {"ask", "--session", ""}, {"chat", "--resume="}, {"chat", "--resume", ""}, {"--resume", ""}} {
		got, r := e.complete(args...)
		if strings.HasPrefix(args[len(args)-1], "--resume=") {
			// --resume takes its id after =; cobra completes the word whole.
			for i := range got {
				got[i] = strings.TrimPrefix(got[i], "--resume=")
			}
		}
		if slices.Sort(got); strings.Join(got, " ") != want {
			t.Errorf("%v: %q, want %q", args, got, want)
		}
		if strings.Contains(r.stdout, "\x1b") {
			t.Errorf("%v: a control sequence in a description: %q", args, r.stdout)
		}
	}
	if got, _ := e.complete("chat", "--resume", ids[0], ""); len(got) != 0 {
		t.Errorf("after the id: %q", got)
	}
	if got, _ := e.complete(""); !slices.Contains(got, "index") || !slices.Contains(got, "chat") || slices.Contains(got, ids[0]) {
		t.Errorf("lore <Tab>: %q", got)
	}
	if got, _ := e.complete("chat", "--online", ""); len(got) != 0 {
		t.Errorf("chat without --resume takes no argument: %q", got)
	}
	if got, r := e.complete("sessions", "show", ""); len(got) != 2 || !strings.Contains(r.stdout, "\thow do I index?\n") {
		t.Errorf("no description: %q", r.stdout)
	}
}

func TestCompletionOffersModels(t *testing.T) {
	e := newEnv(t)
	srv := ollamatest.New(t)
	e.vars["OLLAMA_HOST"] = srv.URL
	for _, args := range [][]string{{"ask", "--model", ""}, {"ask", "--chat-model", ""}, {"index", "--embed-model", ""},
		{"--model", ""}, {"chat", "-m", ""}, {"eval", "--judge-model", ""}} {
		if got, _ := e.complete(args...); strings.Join(got, " ") != "all-minilm:latest llama3.2:3b nomic-embed-text:latest" {
			t.Errorf("%v: %q", args, got)
		}
	}

	cfg, err := config.Load("", func(k string) string { return e.vars[k] }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := testmodels.WriteCrossEncoder(filepath.Join(cfg.ModelsDir(), "org__tiny"), testmodels.Tiny, nil); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(cfg.ModelsDir(), "org__broken"), 0o755)
	for _, args := range [][]string{{"search", "--rerank-model", ""}, {"eval", "--rerank-model", ""}, {"models", "rm", ""}} {
		if got, _ := e.complete(args...); strings.Join(got, " ") != "org/tiny" {
			t.Errorf("%v: %q", args, got)
		}
	}
}

// Completion runs at every Tab: with Ollama down, hung or not Ollama at
// all it offers no model, prints no error and returns.
func TestCompletionWithoutOllama(t *testing.T) {
	release := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer hung.Close()
	defer close(release)
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<!doctype html><title>Sign in</title>")
	}))
	defer html.Close()
	for name, host := range map[string]string{"down": "http://" + ollamatest.ClosedAddr(t), "hung": hung.URL, "not Ollama": html.URL} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			e.vars["OLLAMA_HOST"] = host
			got, r := e.complete("ask", "--model", "")
			if len(got) != 0 || !strings.HasPrefix(strings.TrimSpace(r.stdout), ":") {
				t.Errorf("candidates %q, stdout %q", got, r.stdout)
			}
		})
	}
}
