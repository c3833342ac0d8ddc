package editor

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestArgs(t *testing.T) {
	for _, tt := range []struct {
		editor string
		want   []string
	}{
		{"vim", []string{"+12", "/d/f.md"}},
		{"/usr/bin/nvim", []string{"+12", "/d/f.md"}},
		{"emacsclient", []string{"+12", "/d/f.md"}},
		{"hx", []string{"+12", "/d/f.md"}},
		{"micro", []string{"+12", "/d/f.md"}},
		{"nano", []string{"+12", "/d/f.md"}},
		{"code", []string{"--goto", "/d/f.md:12"}},
		{"codium", []string{"--goto", "/d/f.md:12"}},
		{"mate", []string{"-l", "12", "/d/f.md"}},
		{"ed", []string{"/d/f.md"}},
	} {
		if got := Args(tt.editor, "/d/f.md", 12); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.editor, got, tt.want)
		}
	}
}

// The command really runs the editor the variable names, with its own
// arguments, a path with spaces, and the file and line as arguments (a
// file name with shell characters stays one argument).
func TestCommandRunsTheEditor(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "my editors", "vi")
	os.MkdirAll(filepath.Dir(bin), 0o755)
	out := filepath.Join(dir, "args")
	os.WriteFile(bin, []byte("#!/bin/sh\nfor a in \"$@\"; do echo \"$a\"; done >"+out+"\n"), 0o755)
	file := filepath.Join(dir, "a $(touch pwned) b.md")
	for _, tt := range []struct {
		visual, editor string
		want           []string
	}{
		{"", `"` + bin + `" -R`, []string{"-R", "+7", file}},
		{`'` + bin + `'`, "nano", []string{"+7", file}}, // VISUAL wins
	} {
		env := map[string]string{"VISUAL": tt.visual, "EDITOR": tt.editor}
		cmd, err := Command(func(k string) string { return env[k] }, file, 7)
		if err != nil {
			t.Fatal(err)
		}
		cmd.Dir = dir // where a shell-run file name would leave its mark
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v %s", cmd.Args, err, b)
		}
		b, _ := os.ReadFile(out)
		if got := strings.Split(strings.TrimSpace(string(b)), "\n"); !slices.Equal(got, tt.want) {
			t.Errorf("VISUAL=%q EDITOR=%q: editor got %q, want %q", tt.visual, tt.editor, got, tt.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		t.Fatal("the file name was run by the shell")
	}
	if _, err := Command(func(string) string { return "no-such-editor-x" }, "f", 1); err == nil || !strings.Contains(err.Error(), "no-such-editor-x not found") {
		t.Fatalf("missing editor: %v", err)
	}
	if _, err := Command(func(string) string { return "" }, "f", 1); !errors.Is(err, ErrNoEditor) {
		t.Fatalf("no editor: %v", err)
	}
}
