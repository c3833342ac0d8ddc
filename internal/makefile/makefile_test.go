package makefile

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repo is the repository's root, where the Makefile is.
func repo(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	return dir
}

// fakeLore writes a stand-in for bin/lore that prints its arguments and
// exits with askCode for `ask` (0 otherwise).
func fakeLore(t *testing.T, askCode string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "lore")
	script := "#!/bin/sh\necho \"lore ran: $*\"\ncase \" $* \" in *\" ask \"*) exit " + askCode + ";; esac\nexit 0\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// makeRun runs make with args in the repository, stdin not a terminal,
// and returns its output and whether it succeeded.
func makeRun(t *testing.T, args ...string) (string, bool) {
	t.Helper()
	cmd := exec.Command("make", append([]string{"--no-print-directory"}, args...)...)
	cmd.Dir = repo(t)
	cmd.Stdin = strings.NewReader("")
	out, err := cmd.CombinedOutput()
	return string(out), err == nil
}

// noNoise fails on lines that are make's or the shell's, not lore's: a
// shell trace (+ ...), a Makefile comment, the environment.
func noNoise(t *testing.T, out string) {
	t.Helper()
	for line := range strings.Lines(out) {
		if strings.HasPrefix(line, "+") || strings.HasPrefix(line, "#") || strings.Contains(line, "XDG_DATA_HOME=") {
			t.Errorf("noise in the output: %q\n%s", line, out)
		}
	}
}

// make run (not on a terminal) asks one question: "not in the docs"
// (exit 3, as with EMBEDDER=ollama) and passages alone (4) are answers;
// a failure is not.
func TestMakeRun(t *testing.T) {
	for _, tc := range []struct {
		askCode string
		ok      bool
	}{{"0", true}, {"3", true}, {"4", true}, {"1", false}} {
		t.Run("ask exits "+tc.askCode, func(t *testing.T) {
			// -o build: the stand-in is not built.
			out, ok := makeRun(t, "-o", "build", "run", "BIN="+fakeLore(t, tc.askCode))
			if ok != tc.ok {
				t.Fatalf("make run succeeded: %v, want %v\n%s", ok, tc.ok, out)
			}
			if !strings.Contains(out, "lore ran: --index sample ask") {
				t.Fatalf("the question was not asked:\n%s", out)
			}
			if tc.ok {
				noNoise(t, out)
			}
		})
	}
}

// make test prints the commands it runs, no Makefile comments, and says
// when the ONNX Runtime tests were skipped.
func TestMakeTest(t *testing.T) {
	// GO=true: every go command succeeds at once.
	out, ok := makeRun(t, "test", "GO=true", "ORT_LIB=/nonexistent/libonnxruntime.so.1")
	if !ok {
		t.Fatalf("make test failed:\n%s", out)
	}
	noNoise(t, out)
	if !strings.Contains(out, "ONNX Runtime tests were skipped") || !strings.Contains(out, "make ort") {
		t.Errorf("no line says the ONNX Runtime tests were skipped:\n%s", out)
	}
	dir := t.TempDir()
	lib := filepath.Join(dir, "libonnxruntime.so.1")
	os.WriteFile(lib, nil, 0o644)
	if out, _ := makeRun(t, "test", "GO=true", "ORT_LIB="+lib); strings.Contains(out, "skipped") {
		t.Errorf("with the library, the tests were not skipped:\n%s", out)
	}
}
