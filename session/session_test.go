package session

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"unicode/utf8"
)

// FuzzStore: any session id and any question and answer text are stored
// and read back as they were; titles stay valid UTF-8 (a long question is
// cut on a character, not inside one); a removed session is gone.
func FuzzStore(f *testing.F) {
	for _, s := range []struct{ id, q, a string }{
		{NewID(), "how do I ignore a folder?", "Use .loreignore [1]."},
		{"../../etc/passwd", "", ""},
		{"'; DROP TABLE turns; --", "é", "\x00"},
		{"a", string(make([]byte, 79)) + "日本語の質問です", "answer"},
	} {
		f.Add(s.id, s.q, s.a)
	}
	st, err := Open(filepath.Join(f.TempDir(), "sessions.db"))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, id, question, answer string) {
		st.Remove(ctx, id)
		if _, err := st.Append(ctx, id, Turn{Question: question, Answer: answer, Sources: []Source{{N: 1, Label: question}}}); err != nil {
			t.Fatalf("append: %v", err)
		}
		se, err := st.Get(ctx, id)
		if err != nil {
			t.Fatalf("get: %v", err)
		}
		if se.ID != id || len(se.Turns) != 1 || se.Turns[0].Question != question || se.Turns[0].Answer != answer {
			t.Fatalf("read back %+v", se)
		}
		if utf8.ValidString(question) && !utf8.ValidString(se.Title) {
			t.Fatalf("title %q of a valid question is not valid UTF-8", se.Title)
		}
		if err := st.Remove(ctx, id); err != nil {
			t.Fatalf("remove: %v", err)
		}
		if _, err := st.Get(ctx, id); !errors.Is(err, ErrNotFound) {
			t.Fatalf("get after remove: %v", err)
		}
	})
}
