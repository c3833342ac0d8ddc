package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lore-cli/lore/session"
)

// TestChatResumeID: `lore chat --resume ID`, the README's form, takes ID
// as the session (it failed with "unknown command"); --resume alone and
// --resume=ID still work, and a stray word is still an unknown command.
func TestChatResumeID(t *testing.T) {
	e := newEnv(t)
	for _, args := range [][]string{
		{"chat", "--resume", "3f9a1c0e2b7d"},
		{"chat", "--resume", "3f9a1c0e2b7d", "--online"},
		{"chat", "--resume=3f9a1c0e2b7d"},
		{"chat", "--resume"},
		{"--resume", "3f9a1c0e2b7d"},
	} {
		// Off a terminal the chat stops at the terminal check, after the
		// command line was taken.
		r := e.run(false, args...)
		if strings.Contains(r.stderr, "unknown command") || r.code == exitUsage && !strings.Contains(r.stderr, "needs a terminal") {
			t.Errorf("%q: exit %d %q", args, r.code, r.stderr)
		}
	}
	for _, args := range [][]string{
		{"chat", "--resume", "3f9a1c0e2b7d", "extra"},
		{"chat", "sesions"},
		{"serach"},
	} {
		if r := e.run(false, args...); r.code != exitUsage || !strings.Contains(r.stderr, "unknown command") {
			t.Errorf("%q: exit %d %q", args, r.code, r.stderr)
		}
	}
}

type fakeSessions []session.Session

func (f fakeSessions) ListSessions(context.Context) ([]session.Session, error) { return f, nil }

func (f fakeSessions) Session(_ context.Context, id string) (session.Session, error) {
	for _, s := range f {
		if s.ID == id {
			return s, nil
		}
	}
	return session.Session{}, session.ErrNotFound
}

func TestResumeSession(t *testing.T) {
	saved := fakeSessions{{ID: "3f9a1c0e2b7d"}, {ID: "0a0a0a0a0a0a"}}
	suggest := newRootCmd(newIO()).SuggestionsFor
	for _, tc := range []struct {
		sessions fakeSessions
		resume   string
		want     string
		err      string
	}{
		{saved, "", "", ""},
		{saved, resumeLast, "3f9a1c0e2b7d", ""},
		{saved, "0a0a0a0a0a0a", "0a0a0a0a0a0a", ""},
		{nil, resumeLast, "", "no saved session to resume"},
		{saved, "ffffffffffff", "", "no such session"},
		{saved, "serach", "", "did you mean `lore search`"},
	} {
		got, err := resumeSession(context.Background(), tc.sessions, tc.resume, suggest)
		if got != tc.want || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%q: %q, %v; want %q, %q", tc.resume, got, err, tc.want, tc.err)
		}
		if tc.err == "no such session" && !errors.As(err, new(usageError)) {
			t.Errorf("%q: a session that does not exist is bad usage: %v", tc.resume, err)
		}
	}
}
