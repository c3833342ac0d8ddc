// Package termcap guesses what the terminal can do from its environment,
// where no escape sequence can ask it (a query would need a reply on
// stdin, which lore doctor and the chat's start do not wait for).
package termcap

import (
	"strconv"
	"strings"
)

// Support is a guess: yes, no, or the terminal is not one lore knows.
type Support int

const (
	Unknown Support = iota
	Yes
	No
)

// linkPrograms are TERM_PROGRAM values of terminals that show OSC 8 links.
var linkPrograms = map[string]bool{"iTerm.app": true, "WezTerm": true, "vscode": true, "ghostty": true, "Hyper": true, "Tabby": true, "rio": true}

// Hyperlinks guesses whether the terminal shows OSC 8 hyperlinks (the
// chat's clickable citations), and says what the guess rests on.
func Hyperlinks(getenv func(string) string) (Support, string) {
	s, why := hyperlinks(getenv)
	if s == Yes && getenv("TMUX") != "" {
		why += ", inside tmux (links need tmux 3.4 or later)"
	}
	return s, why
}

func hyperlinks(getenv func(string) string) (Support, string) {
	term := getenv("TERM")
	switch {
	case term == "dumb" || term == "linux":
		return No, "TERM=" + term
	case getenv("WT_SESSION") != "":
		return Yes, "Windows Terminal (WT_SESSION)"
	case linkPrograms[getenv("TERM_PROGRAM")]:
		return Yes, "TERM_PROGRAM=" + getenv("TERM_PROGRAM")
	case getenv("TERM_PROGRAM") == "Apple_Terminal":
		return No, "TERM_PROGRAM=Apple_Terminal"
	case getenv("KITTY_WINDOW_ID") != "" || term == "xterm-kitty":
		return Yes, "kitty"
	case getenv("KONSOLE_VERSION") != "":
		return Yes, "Konsole (KONSOLE_VERSION)"
	case getenv("ALACRITTY_WINDOW_ID") != "" || term == "alacritty":
		return Yes, "Alacritty"
	case strings.HasPrefix(term, "foot"):
		return Yes, "TERM=" + term
	}
	if v := getenv("VTE_VERSION"); v != "" {
		// GNOME Terminal, Tilix and other VTE terminals since VTE 0.50.
		if n, err := strconv.Atoi(v); err == nil && n >= 5000 {
			return Yes, "VTE_VERSION=" + v
		}
		return No, "VTE_VERSION=" + v + " (before 0.50)"
	}
	return Unknown, "terminal not recognised"
}
