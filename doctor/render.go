package doctor

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/lore-cli/lore/internal/termsafe"
)

// Styles colour a report on a terminal; Plain is for pipes, files and
// NO_COLOR.
type Styles struct {
	Header, OK, Warn, Fail, Skip, Fix lipgloss.Style
}

// Plain is a report without escape sequences.
func Plain() Styles {
	s := lipgloss.NewStyle()
	return Styles{Header: s, OK: s, Warn: s, Fail: s, Skip: s, Fix: s}
}

// Coloured uses the terminal's basic colours, which every profile has.
func Coloured() Styles {
	s := lipgloss.NewStyle()
	return Styles{
		Header: s.Bold(true),
		OK:     s.Foreground(lipgloss.Green),
		Warn:   s.Foreground(lipgloss.Yellow),
		Fail:   s.Foreground(lipgloss.Red).Bold(true),
		Skip:   s.Faint(true),
		Fix:    s.Foreground(lipgloss.Cyan),
	}
}

var marks = [...]string{OK: "✓", Warn: "!", Fail: "✗", Skip: "-"}

// nameWidth fits the longest check name ("forward pass").
const nameWidth = 12

// WriteText writes the report as one screen: a header per section, a line
// per check ("✓ name  detail"), the fix of each failure and warning on an
// indented "→" line, and a verdict. Details wrap at width; on a narrow
// terminal they go under the name, where they have the width to read.
func (r Report) WriteText(w io.Writer, width int, st Styles) error {
	indent := strings.Repeat(" ", 2+2+nameWidth+2)
	narrow := width > 0 && width < 60
	if narrow {
		indent = strings.Repeat(" ", 4)
	}
	textWidth := max(width-len(indent), 20)
	// wrap styles line by line: a style given several lines would pad
	// them all to the widest.
	wrap := func(s string, style lipgloss.Style) string {
		// Details quote servers (a version, a model, an error) and paths:
		// without their escapes, before the report's own styles go on.
		s = termsafe.Line(s)
		// Wrap can leave a breakpoint character one column over: Hardwrap
		// keeps the promise of the width.
		lines := strings.Split(ansi.Hardwrap(ansi.Wrap(s, textWidth, " /,"), textWidth, true), "\n")
		for i := range lines {
			lines[i] = style.Render(strings.TrimRight(lines[i], " "))
		}
		return strings.Join(lines, "\n"+indent)
	}
	var b strings.Builder
	section := ""
	for _, c := range r.Checks {
		if c.Section != section {
			if section != "" {
				b.WriteString("\n")
			}
			section = c.Section
			b.WriteString(st.Header.Render(section) + "\n")
		}
		style := [...]lipgloss.Style{OK: st.OK, Warn: st.Warn, Fail: st.Fail, Skip: st.Skip}[c.Status]
		name, plain := fmt.Sprintf("%-*s", nameWidth, c.Name), lipgloss.NewStyle()
		if narrow {
			name = c.Name
		}
		if c.Status == Skip {
			name, plain = st.Skip.Render(name), st.Skip
		}
		sep := "  "
		if narrow {
			sep = "\n" + indent
		}
		fmt.Fprintf(&b, "  %s %s%s%s\n", style.Render(marks[c.Status]), name, sep, wrap(c.Detail, plain))
		if c.Fix != "" && (c.Status == Fail || c.Status == Warn) {
			fmt.Fprintf(&b, "%s%s\n", indent, wrap("→ "+c.Fix, st.Fix))
		}
	}
	verdict := r.verdict()
	if width > 0 {
		verdict = ansi.Wrap(verdict, width, " ")
	}
	b.WriteString("\n" + verdict + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func (r Report) verdict() string {
	fails, warns := r.Counts()
	switch {
	case fails == 0 && warns == 0:
		return "all good"
	case fails == 0:
		return plural(warns, "warning") + ", nothing broken"
	}
	fix := ": fix the ✗ lines above"
	if fails == 1 {
		fix = ": fix the ✗ line above"
	}
	if warns == 0 {
		return plural(fails, "problem") + fix
	}
	return plural(fails, "problem") + " and " + plural(warns, "warning") + fix
}

// WriteOrigins writes where every setting came from (lore doctor -v).
func (r Report) WriteOrigins(w io.Writer) error {
	var b strings.Builder
	b.WriteString("\nsettings (value, origin)\n")
	for _, k := range r.Config.Keys {
		origin := string(k.Origin)
		if k.Name != "" {
			origin += " " + k.Name
		}
		v := k.Value
		if v == "" {
			v = `""`
		}
		fmt.Fprintf(&b, "  %-24s %-28s %s\n", k.Key, v, origin)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// jsonReport is the --json form; its field names are stable for scripts.
type jsonReport struct {
	OK     bool          `json:"ok"`
	Checks []Check       `json:"checks"`
	Config ConfigSummary `json:"config"`
}

// WriteJSON writes the report as one JSON object: ok, checks (section,
// name, status "ok"/"warn"/"fail"/"skip", detail, fix) and config (file,
// found, keys with value and origin; a secret's value is "set" or "not set").
func (r Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(termsafe.JSON(w))
	enc.SetIndent("", "  ")
	checks := r.Checks
	if checks == nil {
		checks = []Check{}
	}
	return enc.Encode(jsonReport{OK: r.OK(), Checks: checks, Config: r.Config})
}
