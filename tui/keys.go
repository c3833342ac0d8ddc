package tui

import "charm.land/bubbles/v2/key"

// keyMap is every key the chat answers to; `?` shows it (bubbles help).
type keyMap struct {
	Send, Newline, History         key.Binding
	PageUp, PageDown, Top, Bottom  key.Binding
	AnswerStart, Sources, Open     key.Binding
	Copy, Cancel, Quit, Help, Tab  key.Binding
	PanelMove, PanelShow, PanelEnt key.Binding
}

func newKeyMap(newline string) keyMap {
	return keyMap{
		Send:        key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "send")),
		Newline:     key.NewBinding(key.WithKeys("shift+enter", "alt+enter", "ctrl+j"), key.WithHelp(newline, "newline")),
		History:     key.NewBinding(key.WithKeys("up", "down"), key.WithHelp("↑/↓", "earlier questions")),
		PageUp:      key.NewBinding(key.WithKeys("pgup"), key.WithHelp("pgup", "scroll up")),
		PageDown:    key.NewBinding(key.WithKeys("pgdown"), key.WithHelp("pgdn", "scroll down")),
		Top:         key.NewBinding(key.WithKeys("home"), key.WithHelp("home", "top")),
		Bottom:      key.NewBinding(key.WithKeys("end"), key.WithHelp("end", "follow")),
		AnswerStart: key.NewBinding(key.WithKeys("ctrl+t"), key.WithHelp("ctrl+t", "answer start")),
		Sources:     key.NewBinding(key.WithKeys("ctrl+s"), key.WithHelp("ctrl+s", "sources")),
		Open:        key.NewBinding(key.WithKeys("ctrl+o"), key.WithHelp("ctrl+o N", "open source N")),
		Copy:        key.NewBinding(key.WithKeys("ctrl+y"), key.WithHelp("ctrl+y", "copy answer")),
		Cancel:      key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
		Quit:        key.NewBinding(key.WithKeys("ctrl+c", "ctrl+d"), key.WithHelp("ctrl+c/d", "quit")),
		Help:        key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "keys")),
		Tab:         key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "complete /command")),
		PanelMove:   key.NewBinding(key.WithKeys("up", "down", "k", "j"), key.WithHelp("↑/↓", "move")),
		PanelShow:   key.NewBinding(key.WithKeys("space"), key.WithHelp("space", "show passage")),
		PanelEnt:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open in editor")),
	}
}

// ShortHelp and FullHelp make keyMap a help.KeyMap.
func (k keyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Send, k.Newline, k.Sources, k.Cancel, k.Help}
}

func (k keyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Send, k.Newline, k.History, k.Tab},
		{k.PageUp, k.PageDown, k.Top, k.Bottom, k.AnswerStart},
		{k.Sources, k.Open, k.Copy},
		{k.Cancel, k.Quit, k.Help},
	}
}
