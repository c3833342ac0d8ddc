// Package clipboard copies text where the user can paste it: the terminal's
// clipboard through OSC 52 (which also reaches the local machine over ssh,
// and inside tmux), plus the system clipboard when a tool for it exists.
package clipboard

import (
	"encoding/base64"
	"errors"
	"os/exec"
	"strings"
)

// OSC52 is the escape sequence that asks the terminal to set its clipboard
// to text. Inside tmux (tmux set) the sequence is also wrapped for tmux's
// passthrough, so it reaches the outer terminal whether tmux's
// set-clipboard is on or it only allows passthrough.
func OSC52(text string, tmux bool) string {
	seq := "\x1b]52;c;" + base64.StdEncoding.EncodeToString([]byte(text)) + "\a"
	if !tmux {
		return seq
	}
	return seq + "\x1bPtmux;" + strings.ReplaceAll(seq, "\x1b", "\x1b\x1b") + "\x1b\\"
}

// tools are the system clipboard programs lore knows, first found wins.
var tools = [][]string{
	{"wl-copy"},
	{"xclip", "-selection", "clipboard"},
	{"xsel", "--clipboard", "--input"},
	{"pbcopy"},
	{"clip.exe"},
}

// ErrNoTool means no system clipboard program was found or it failed.
var ErrNoTool = errors.New("no system clipboard (wl-copy, xclip, xsel or pbcopy)")

// System copies text with the first clipboard program found and returns
// its name. wl-copy and xclip need a display: without WAYLAND_DISPLAY or
// DISPLAY they are not tried.
func System(text string, getenv func(string) string) (string, error) {
	t, path := find(getenv)
	if t == nil {
		return "", ErrNoTool
	}
	cmd := exec.Command(path, t[1:]...)
	cmd.Stdin = strings.NewReader(text)
	if err := cmd.Run(); err != nil {
		return "", errors.Join(ErrNoTool, err)
	}
	return t[0], nil
}

// Tool names the program System would copy with, "" when there is none
// (the terminal's OSC 52 is then the only way).
func Tool(getenv func(string) string) string {
	if t, _ := find(getenv); t != nil {
		return t[0]
	}
	return ""
}

// find is the first clipboard program usable here, and its path.
func find(getenv func(string) string) (tool []string, path string) {
	for _, t := range tools {
		switch t[0] {
		case "wl-copy":
			if getenv("WAYLAND_DISPLAY") == "" {
				continue
			}
		case "xclip", "xsel":
			if getenv("DISPLAY") == "" {
				continue
			}
		}
		if p, err := exec.LookPath(t[0]); err == nil {
			return t, p
		}
	}
	return nil, ""
}
