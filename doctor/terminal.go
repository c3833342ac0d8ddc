package doctor

import (
	"github.com/lore-cli/lore/internal/termcap"
)

// checkTerminal reports what the chat can do on this terminal. Nothing
// here stops lore working, so a terminal is never a failure.
func checkTerminal(t Terminal) []Check {
	colour := Check{Name: "colour", Status: OK, Detail: t.Profile}
	switch {
	case t.Profile == "TrueColor":
		colour.Detail = "true colour"
	case t.Profile == "ANSI256":
		colour.Detail = "256 colours"
	case t.Profile == "ANSI":
		colour.Detail = "16 colours"
	}
	switch {
	case t.Getenv("NO_COLOR") != "":
		colour.Detail = "none (NO_COLOR is set)"
	case t.Profile == "NoTTY":
		colour.Detail = "not a terminal (output is piped: plain text)"
	case t.Profile == "Ascii":
		colour.Detail = "none (TERM=" + t.Getenv("TERM") + ")"
	}

	links := Check{Name: "hyperlinks", Status: OK}
	switch s, why := termcap.Hyperlinks(t.Getenv); s {
	case termcap.Yes:
		links.Detail = "likely (" + why + ")"
	case termcap.No:
		links.Status, links.Detail = Warn, "no ("+why+"): citations show as paths"
		links.Fix = "a terminal with OSC 8 links (kitty, WezTerm, iTerm2, GNOME Terminal) makes citations clickable"
	default:
		links.Detail = "unknown (" + why + "): lore sends OSC 8 links, shown as plain text where unsupported"
	}

	clip := Check{Name: "clipboard", Status: OK, Detail: t.Clipboard + ", and OSC 52 through the terminal"}
	if t.Clipboard == "" {
		clip.Status, clip.Detail = Warn, "OSC 52 only (no wl-copy, xclip, xsel or pbcopy): works where the terminal allows it"
		clip.Fix = "install wl-clipboard or xclip for the system clipboard"
	}
	if t.Getenv("TMUX") != "" {
		clip.Detail += "; inside tmux the OSC 52 copy is passed through"
	}
	return []Check{colour, links, clip}
}
