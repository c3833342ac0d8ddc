package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/internal/ollamatest"
)

// The real command with no Ollama: it completes (no hang on the dead
// host), exits 1 and names the fix on the line below the ✗.
func TestDoctorWithoutOllama(t *testing.T) {
	e := newEnv(t)
	if r := e.run(false, "index", "-q", "--embedder", "none", sampleDocs(t)); r.code != 0 {
		t.Fatal(r.stderr)
	}
	addr := ollamatest.ClosedAddr(t)
	e.vars["OLLAMA_HOST"] = addr
	r := e.run(false, "doctor")
	if r.code != exitError {
		t.Fatalf("exit %d, want 1:\n%s%s", r.code, r.stdout, r.stderr)
	}
	lines := strings.Split(r.stdout, "\n")
	found := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "✗ server") && strings.Contains(l, addr) {
			found = i+1 < len(lines) && strings.Contains(lines[i+1], "→ start it: ollama serve")
		}
	}
	if !found {
		t.Errorf("no ✗ Ollama line with its fix:\n%s", r.stdout)
	}
	if strings.Contains(r.stdout, "\x1b[") || r.stderr != "" {
		t.Errorf("escape codes or stderr output on a pipe:\n%q\n%q", r.stdout, r.stderr)
	}

	r = e.run(false, "doctor", "--json")
	var out struct {
		OK     bool `json:"ok"`
		Checks []struct {
			Section, Name, Status, Fix string
		} `json:"checks"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || r.code != exitError || out.OK {
		t.Fatalf("--json: exit %d %v\n%s", r.code, err, r.stdout)
	}
	for _, c := range out.Checks {
		if c.Section == "ollama" && c.Name == "server" && (c.Status != "fail" || !strings.Contains(c.Fix, "ollama serve")) {
			t.Errorf("server check %+v", c)
		}
	}
}

// With the index built and Ollama answering, nothing fails (a reranker
// model and a clipboard program are missing here: warnings) and the exit
// code is 0. Offline, the Ollama host is the only connection made, even
// with a web provider configured.
func TestDoctorHealthyAndOffline(t *testing.T) {
	e := newEnv(t)
	srv := ollamatest.New(t)
	e.vars["OLLAMA_HOST"] = srv.URL
	e.vars["TAVILY_API_KEY"] = "tvly-doctor-secret"
	if r := e.run(false, "index", "-q", sampleDocs(t)); r.code != 0 {
		t.Fatal(r.stderr)
	}
	checkDials := dialsOnlyTo(t, strings.TrimPrefix(srv.URL, "http://"))
	r := e.run(false, "doctor", "-v")
	if r.code != exitOK || strings.Contains(r.stdout, "✗") {
		t.Fatalf("exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout, "tvly-doctor-secret") || !strings.Contains(r.stdout, "tavily-api-key") {
		t.Errorf("the key is shown, or the settings table is missing:\n%s", r.stdout)
	}
	checkDials()
}

// A config file lore cannot read is a ✗ line, not the end of the report.
func TestDoctorBrokenConfig(t *testing.T) {
	e := newEnv(t)
	e.vars["OLLAMA_HOST"] = ollamatest.ClosedAddr(t)
	dir := filepath.Join(e.vars["XDG_CONFIG_HOME"], "lore")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "config.yaml"), []byte("top-k: lots\n"), 0o644)
	r := e.run(false, "doctor")
	if r.code != exitError || !strings.Contains(r.stdout, "✗ config file") || !strings.Contains(r.stdout, "top-k") ||
		!strings.Contains(r.stdout, "terminal") {
		t.Fatalf("exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// Interrupted, doctor prints no report (its cut-short checks would read as
// failures) and exits 130.
func TestDoctorInterrupted(t *testing.T) {
	e := newEnv(t)
	l, err := config.LoadDetailed("", func(k string) string { return e.vars[k] }, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	streams := &ioStreams{Out: &out, Err: &errb, Getenv: func(k string) string { return e.vars[k] }, OutWidth: func() int { return 80 }}
	if code := runDoctor(ctx, l, &doctorOptions{}, streams); code != exitCancelled || out.Len() != 0 || !strings.Contains(errb.String(), "interrupted") {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
}
