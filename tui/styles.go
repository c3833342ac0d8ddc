package tui

import (
	"image/color"

	"charm.land/lipgloss/v2"
)

// styles are the chat's colours for one theme. With NO_COLOR every style
// is plain: emphasis survives as bold and reverse video only.
type styles struct {
	dark                      bool
	noColor                   bool
	links                     bool // OSC 8 hyperlinks on sources and [n] markers
	question, answer, dim     lipgloss.Style
	user, assistant           lipgloss.Style
	badgeDocs, badgeWeb       lipgloss.Style
	badgeNone, badgeSources   lipgloss.Style
	badgeOffline, badgeOnline lipgloss.Style
	status, statusKey         lipgloss.Style
	cited, uncited, web       lipgloss.Style
	banner, notice, errText   lipgloss.Style
	panel, panelTitle, cursor lipgloss.Style
	newLines                  lipgloss.Style
	accent                    color.Color
}

func newStyles(dark, noColor bool) styles {
	ld := lipgloss.LightDark(dark)
	s := styles{dark: dark, noColor: noColor}
	if noColor {
		plain := lipgloss.NewStyle()
		bold := plain.Bold(true)
		rev := plain.Reverse(true)
		s.question, s.answer, s.dim, s.user, s.assistant = bold, plain, plain, bold, bold
		s.badgeDocs, s.badgeWeb, s.badgeNone, s.badgeSources, s.badgeOffline, s.badgeOnline = rev, rev, rev, rev, rev, rev
		s.status, s.statusKey = rev, rev.Bold(true)
		s.cited, s.uncited, s.web = bold, plain, plain.Underline(true)
		s.banner, s.notice, s.errText = rev, plain, bold
		s.panel, s.panelTitle, s.cursor = plain.Border(lipgloss.NormalBorder()), bold, rev
		s.newLines = rev
		return s
	}
	accent := ld(lipgloss.Color("#5A4FCF"), lipgloss.Color("#9D8CFF"))
	muted := ld(lipgloss.Color("#6B6B6B"), lipgloss.Color("#8A8A8A"))
	fg := ld(lipgloss.Color("#1F1F1F"), lipgloss.Color("#E6E6E6"))
	barBg := ld(lipgloss.Color("#E4E4EC"), lipgloss.Color("#26233A"))
	badge := func(bg color.Color) lipgloss.Style {
		return lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("#FFFFFF")).Background(bg).Padding(0, 1)
	}
	s.accent = accent
	s.question = lipgloss.NewStyle().Bold(true).Foreground(fg)
	s.answer = lipgloss.NewStyle().Foreground(fg)
	s.dim = lipgloss.NewStyle().Foreground(muted)
	s.user = lipgloss.NewStyle().Bold(true).Foreground(accent)
	s.assistant = lipgloss.NewStyle().Bold(true).Foreground(ld(lipgloss.Color("#0B7A5C"), lipgloss.Color("#5FD7A7")))
	s.badgeDocs = badge(lipgloss.Color("#1E8A5A"))
	s.badgeWeb = badge(lipgloss.Color("#2D6CDF"))
	s.badgeNone = badge(lipgloss.Color("#B5532A"))
	s.badgeSources = badge(lipgloss.Color("#8A6D00"))
	s.badgeOffline = badge(lipgloss.Color("#4A4A4A"))
	s.badgeOnline = badge(lipgloss.Color("#2D6CDF"))
	s.status = lipgloss.NewStyle().Foreground(fg).Background(barBg)
	s.statusKey = s.status.Bold(true).Foreground(accent)
	s.cited = lipgloss.NewStyle().Foreground(fg)
	s.uncited = lipgloss.NewStyle().Foreground(muted)
	s.web = lipgloss.NewStyle().Foreground(ld(lipgloss.Color("#2D6CDF"), lipgloss.Color("#7AB0FF")))
	s.banner = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("#FFFFFF")).Background(lipgloss.Color("#B5532A")).Padding(0, 1)
	s.notice = lipgloss.NewStyle().Foreground(ld(lipgloss.Color("#8A6D00"), lipgloss.Color("#E0C060")))
	s.errText = lipgloss.NewStyle().Foreground(ld(lipgloss.Color("#B00020"), lipgloss.Color("#FF6B6B")))
	s.panel = lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(muted)
	s.panelTitle = lipgloss.NewStyle().Bold(true).Foreground(accent)
	s.cursor = lipgloss.NewStyle().Reverse(true)
	s.newLines = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("#FFFFFF")).Background(accent).Padding(0, 1)
	return s
}

// glamourStyle is glamour's standard style for the theme (glamour v2 has
// no automatic choice).
func (s styles) glamourStyle() string {
	switch {
	case s.noColor:
		return "notty"
	case s.dark:
		return "dark"
	}
	return "light"
}
