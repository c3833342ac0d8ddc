package editor

import (
	"errors"
	"slices"
	"testing"
)

func TestCommand(t *testing.T) {
	for _, tt := range []struct {
		visual, editor string
		want           []string
	}{
		{"", "vim", []string{"vim", "+12", "/d/f.md"}},
		{"", "/usr/bin/nvim", []string{"/usr/bin/nvim", "+12", "/d/f.md"}},
		{"nano", "vim", []string{"nano", "+12", "/d/f.md"}}, // VISUAL wins
		{"", "emacsclient -t", []string{"emacsclient", "-t", "+12", "/d/f.md"}},
		{"", "hx", []string{"hx", "+12", "/d/f.md"}},
		{"", "micro", []string{"micro", "+12", "/d/f.md"}},
		{"code -w", "", []string{"code", "-w", "--goto", "/d/f.md:12"}},
		{"", "codium", []string{"codium", "--goto", "/d/f.md:12"}},
		{"", "mate", []string{"mate", "-l", "12", "/d/f.md"}},
		{"", "ed", []string{"ed", "/d/f.md"}},
	} {
		env := map[string]string{"VISUAL": tt.visual, "EDITOR": tt.editor}
		cmd, err := Command(func(k string) string { return env[k] }, "/d/f.md", 12)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(cmd.Args, tt.want) {
			t.Errorf("VISUAL=%q EDITOR=%q: %q, want %q", tt.visual, tt.editor, cmd.Args, tt.want)
		}
	}
	if _, err := Command(func(string) string { return "" }, "f", 1); !errors.Is(err, ErrNoEditor) {
		t.Fatalf("no editor: %v", err)
	}
}
