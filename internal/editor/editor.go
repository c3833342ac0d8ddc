// Package editor opens a file at a line in the user's editor ($VISUAL,
// then $EDITOR), with the argument convention each editor understands.
package editor

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrNoEditor means neither $VISUAL nor $EDITOR is set.
var ErrNoEditor = errors.New("no editor: set $VISUAL or $EDITOR (e.g. export EDITOR=vim)")

// Command returns the command that opens file at line (1-based) in the
// editor named by getenv("VISUAL") or getenv("EDITOR"). The variable may
// carry arguments ("code -w"); they are kept.
func Command(getenv func(string) string, file string, line int) (*exec.Cmd, error) {
	spec := strings.TrimSpace(getenv("VISUAL"))
	if spec == "" {
		spec = strings.TrimSpace(getenv("EDITOR"))
	}
	if spec == "" {
		return nil, ErrNoEditor
	}
	fields := strings.Fields(spec)
	args := append(fields[1:len(fields):len(fields)], Args(fields[0], file, line)...)
	return exec.Command(fields[0], args...), nil
}

// Args are the arguments that open file at line in editor (a command name
// or path). Editors lore does not know get the file alone.
func Args(editor, file string, line int) []string {
	if line < 1 {
		line = 1
	}
	switch strings.TrimSuffix(filepath.Base(editor), ".exe") {
	case "vi", "vim", "nvim", "gvim", "mvim", "view", "emacs", "emacsclient", "nano", "hx", "helix", "micro", "kak", "joe", "jed", "ne", "mg":
		return []string{"+" + strconv.Itoa(line), file}
	case "code", "code-insiders", "codium", "vscodium", "cursor", "windsurf":
		return []string{"--goto", file + ":" + strconv.Itoa(line)}
	case "subl", "sublime_text", "zed":
		return []string{file + ":" + strconv.Itoa(line)}
	case "mate":
		return []string{"-l", strconv.Itoa(line), file}
	}
	return []string{file}
}
