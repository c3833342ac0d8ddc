package app

import (
	"context"
	"errors"
	"testing"

	"github.com/lore-cli/lore/agent"
	"github.com/lore-cli/lore/internal/ollamatest"
)

// lore eval's ablations switch stages of the one search path off: each
// switch changes what the search runs, and a vector-only search that
// cannot embed says so instead of quietly searching by keyword.
func TestSearchStages(t *testing.T) {
	srv := ollamatest.New(t)
	e, _, _ := alphaEngine(t, srv)
	ctx := context.Background()
	for name, c := range map[string]struct {
		st   Stages
		mode string
		vec  bool
		lex  bool
	}{
		"all":          {Stages{}, "hybrid", true, true},
		"lexical-only": {Stages{NoVector: true}, "lexical", false, true},
		"vector-only":  {Stages{NoLexical: true}, "vector", true, false},
	} {
		res, err := e.Search(ctx, SearchRequest{Query: "alpha widget", K: 5, Stages: c.st})
		if err != nil || res.Mode != c.mode || len(res.Passages) != 1 {
			t.Fatalf("%s: %v %+v", name, err, res)
		}
		p := res.Passages[0]
		if (p.VectorRank > 0) != c.vec || (p.LexicalRank > 0) != c.lex {
			t.Errorf("%s: vector rank %d, lexical rank %d", name, p.VectorRank, p.LexicalRank)
		}
	}

	// A keyword-only index has nothing for a vector-only search.
	lex := testConfig(t, srv.URL)
	docs := t.TempDir()
	writeDocs(t, docs, map[string]string{"a.md": "# Alpha\n\nThe alpha widget spins.\n"})
	build(t, lex, docs, false, nil)
	le, err := Open(Options{Config: lex})
	if err != nil {
		t.Fatal(err)
	}
	defer le.Close()
	if _, err := le.Search(ctx, SearchRequest{Query: "alpha", K: 5, Stages: Stages{NoLexical: true}}); !errors.Is(err, ErrNoVectors) {
		t.Fatalf("vector-only on a keyword-only index: %v", err)
	}
}

// lore eval's questions are asked like any turn but never saved: the
// user's sessions hold only the user's conversations.
func TestAskNoSave(t *testing.T) {
	srv := ollamatest.New(t)
	e, _, _ := alphaEngine(t, srv)
	ctx := context.Background()
	for _, noSave := range []bool{true, false} {
		_, events, err := e.Ask(ctx, AskRequest{Turn: agent.Turn{Question: "what does the alpha widget do?"}, NoSave: noSave})
		if err != nil {
			t.Fatal(err)
		}
		saved := false
		for ev := range events {
			if _, ok := ev.(agent.Saved); ok {
				saved = true
			}
		}
		if saved == noSave {
			t.Errorf("NoSave %v: saved %v", noSave, saved)
		}
	}
	list, err := e.ListSessions(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("sessions: %d %v", len(list), err)
	}
}

// lore eval generate drafts from random passages: the same seed picks the
// same ones, and tiny chunks are never picked.
func TestSampleChunks(t *testing.T) {
	srv := ollamatest.New(t)
	cfg := testConfig(t, srv.URL)
	docs := t.TempDir()
	files := map[string]string{"tiny.md": "# T\n\nx\n"}
	for _, n := range []string{"a", "b", "c", "d", "e", "f"} {
		files[n+".md"] = "# " + n + "\n\n" + n + " is a section long enough to draft a question from, about the letter " + n + " and what it does.\n"
	}
	writeDocs(t, docs, files)
	build(t, cfg, docs, false, nil)
	e, err := Open(Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	a, err := e.SampleChunks(ctx, 3, 40, 7)
	b, _ := e.SampleChunks(ctx, 3, 40, 7)
	all, _ := e.SampleChunks(ctx, 100, 40, 8)
	if err != nil || len(a) != 3 || paths(a) != paths(b) || len(all) != 6 {
		t.Fatalf("%v: %s / %s / %d", err, paths(a), paths(b), len(all))
	}
	for _, p := range all {
		if p.Path == "tiny.md" {
			t.Fatal("a tiny chunk was picked")
		}
	}
}
