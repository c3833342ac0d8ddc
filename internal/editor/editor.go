// Package editor opens a file at a line in the user's editor ($VISUAL,
// then $EDITOR), with the argument convention each editor understands.
package editor

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrNoEditor means neither $VISUAL nor $EDITOR is set.
var ErrNoEditor = errors.New("no editor: set $VISUAL or $EDITOR (e.g. export EDITOR=vim)")

// Command returns the command that opens file at line (1-based) in the
// editor named by getenv("VISUAL") or getenv("EDITOR"). Like git, it runs
// the variable through sh, so it may carry arguments ("code -w") and a
// quoted path with spaces; the file and line are passed as arguments, never
// spliced into the shell text.
func Command(getenv func(string) string, file string, line int) (*exec.Cmd, error) {
	spec := strings.TrimSpace(getenv("VISUAL"))
	if spec == "" {
		spec = strings.TrimSpace(getenv("EDITOR"))
	}
	if spec == "" {
		return nil, ErrNoEditor
	}
	name := program(spec)
	if _, err := exec.LookPath(name); err != nil {
		return nil, fmt.Errorf("editor %s not found: set $VISUAL or $EDITOR to an installed one", name)
	}
	args := Args(name, file, line)
	return exec.Command("/bin/sh", append([]string{"-c", spec + ` "$@"`, spec}, args...)...), nil
}

// program is the editor's command name in spec: the first word, or the
// quoted path that starts it.
func program(spec string) string {
	if q := spec[0]; q == '"' || q == '\'' {
		if end := strings.IndexByte(spec[1:], q); end >= 0 {
			return spec[1 : end+1]
		}
	}
	return strings.Fields(spec)[0]
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
