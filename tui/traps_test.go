package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// /index to another index in the middle of a session starts a new one:
// a session keeps to one index, and the engine refuses a follow-up on
// another (issue 34).
func TestIndexSwitchStartsANewSession(t *testing.T) {
	h := newHarness(t, 80, 20, "dark")
	h.finishAnswer(h.streamAnswer())
	h.m.sessionID = "01d5e5510000"
	h.typeText("/index notes")
	h.press(tea.Key{Code: tea.KeyEnter})
	if h.m.index != "notes" || h.m.sessionID != "" {
		t.Fatalf("index %q, session %q", h.m.index, h.m.sessionID)
	}
	if s := h.screen(); !strings.Contains(s, "index: notes (a new session") {
		t.Fatalf("the new session is not told:\n%s", s)
	}
}
