package session

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
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
	// Every Append is a commit with an fsync; on a disk that is what the
	// fuzzer would measure. Memory-backed /dev/shm, where there is one.
	dir := f.TempDir()
	if d, err := os.MkdirTemp("/dev/shm", "lore-fuzz-"); err == nil {
		dir = d
		f.Cleanup(func() { os.RemoveAll(d) })
	}
	st, err := Open(filepath.Join(dir, "sessions.db"))
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
		if r, err := st.Remove(ctx, id); err != nil || r.ID != id || r.Turns != 1 || r.Title != se.Title {
			t.Fatalf("remove: %+v %v", r, err)
		}
		if _, err := st.Get(ctx, id); !errors.Is(err, ErrNotFound) {
			t.Fatalf("get after remove: %v", err)
		}
	})
}

// A damaged sessions file is named as such, with the way out; it is never
// read as an empty history nor a crash.
func TestDamagedStore(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.db")
	st, err := Open(good)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		st.Append(context.Background(), fmt.Sprint("s", i), Turn{Question: strings.Repeat("question ", 50), Answer: strings.Repeat("answer ", 200)})
	}
	st.Close()
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}

	garbage := filepath.Join(dir, "garbage.db")
	os.WriteFile(garbage, bytes.Repeat([]byte("not sqlite "), 400), 0o644)
	if _, err := Open(garbage); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), garbage) || !strings.Contains(err.Error(), "mv ") {
		t.Fatalf("garbage file: %v", err)
	}

	for seed := range 20 {
		rng := rand.New(rand.NewPCG(uint64(seed), 1))
		b := bytes.Clone(data)
		page := 1 + rng.IntN(len(b)/4096-1) // the header page is the garbage case
		for range 64 {
			b[page*4096+rng.IntN(4096)] = byte(rng.IntN(256))
		}
		p := filepath.Join(dir, fmt.Sprintf("flipped%d.db", seed))
		os.WriteFile(p, b, 0o644)
		st, err := Open(p)
		if err != nil {
			if !errors.Is(err, ErrDamaged) {
				t.Errorf("seed %d: %v is not ErrDamaged", seed, err)
			}
			continue
		}
		// Opened: the damage was in no page the check reads, so reads work.
		if _, err := st.List(context.Background()); err != nil {
			t.Errorf("seed %d: opened, then list: %v", seed, err)
		}
		st.Close()
	}
}

// A turn remembers the index it was asked on, and a session the index of
// its last turn; a store from before that is upgraded in place and its
// sessions have no index.
func TestSessionsRememberTheirIndex(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sessions.db")
	old, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.Exec(schema); err != nil { // the schema before index_name

		t.Fatal(err)
	}
	if _, err := old.Exec(`INSERT INTO sessions VALUES('old', 'an old question', 1, 1)`); err != nil {
		t.Fatal(err)
	}
	if _, err := old.Exec(`INSERT INTO turns VALUES('old', 1, 'an old question', '', 'a', 'docs', 'offline', 'm', '[]', 1)`); err != nil {
		t.Fatal(err)
	}
	old.Close()

	st, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	st.Append(ctx, "s1", Turn{Question: "q", Answer: "a", Index: "work"})
	st.Append(ctx, "s1", Turn{Question: "q2", Answer: "a", Index: "notes"})
	st.Append(ctx, "s2", Turn{Question: "q", Answer: "a", Index: "work"})
	list, err := st.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range list {
		got[s.ID] = s.Index
	}
	if got["s1"] != "notes" || got["s2"] != "work" || got["old"] != "" || len(got) != 3 {
		t.Fatalf("indexes of the sessions: %v", got)
	}
	se, err := st.Get(ctx, "s1")
	if err != nil || se.Index != "notes" || se.Turns[0].Index != "work" {
		t.Fatalf("%v %+v", err, se)
	}
}
