package agent

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ollama/ollama/api"
)

// promptBytes is what a chat request costs in the budget's own count.
func promptBytes(req *api.ChatRequest) int {
	n := 0
	for _, m := range req.Messages {
		n += len(m.Content) + messageOverhead
	}
	return n
}

// filler is n bytes of text that starts with first and ends with last.
func filler(first, last string, n int) string {
	return first + strings.Repeat("x ", (n-len(first)-len(last))/2) + last
}

func TestPromptFitsTheModelsContext(t *testing.T) {
	noteRe := regexp.MustCompile(`^the context you gave was cut to its first [0-9,]+ characters of 94,000 to fit llama3\.2:3b's 8192-token context$`)
	for _, tc := range []struct {
		name                 string
		numCtx, modelContext int
		passages             []Passage
		turn                 Turn
		answer               string
		check                func(t *testing.T, user string, res Result)
	}{
		{
			name: "small question unchanged", numCtx: 8192,
			turn: Turn{Question: "how do I cancel a context?"},
			check: func(t *testing.T, user string, res Result) {
				if len(res.Cuts) != 0 || len(res.Sources) != 3 || !strings.HasSuffix(user, "</sources>\n\nhow do I cancel a context?") {
					t.Fatalf("cuts %+v, %d sources, prompt:\n%s", res.Cuts, len(res.Sources), user)
				}
			},
		},
		{
			name: "94 KB context", numCtx: 8192,
			turn: Turn{Question: "what does this break?", Context: filler("CONTEXT-START", "CONTEXT-END", 94000)},
			check: func(t *testing.T, user string, res Result) {
				if len(res.Cuts) != 1 || res.Cuts[0].Part != "context" || !noteRe.MatchString(res.Cuts[0].Note) || res.Cuts[0].Of != 94000 {
					t.Fatalf("cuts %+v", res.Cuts)
				}
				// Its beginning is kept, and all the passages and the question.
				if !strings.Contains(user, "Context from the user:\nCONTEXT-START") || strings.Contains(user, "CONTEXT-END") ||
					!strings.HasSuffix(user, "cut to fit]\n\nQuestion: what does this break?") || len(res.Sources) != 3 {
					t.Fatalf("%d sources, prompt ends:\n%s", len(res.Sources), user[len(user)-200:])
				}
			},
		},
		{
			name: "94 KB question", numCtx: 8192,
			turn: Turn{Question: filler("QUESTION-START", "QUESTION-END?", 94000)},
			check: func(t *testing.T, user string, res Result) {
				// Dropping passages could not have saved it: they stay.
				if len(res.Cuts) != 1 || res.Cuts[0].Part != "question" || !strings.HasPrefix(res.Cuts[0].Note, "the question was cut to its first ") || len(res.Sources) != 3 {
					t.Fatalf("cuts %+v, %d sources", res.Cuts, len(res.Sources))
				}
				if !strings.Contains(user, "</sources>\n\nQUESTION-START") || !strings.HasSuffix(user, "QUESTION-END?") || !strings.Contains(user, "characters cut to fit …]") {
					t.Fatalf("the question's ends are not both kept:\n%s…%s", user[:300], user[len(user)-300:])
				}
			},
		},
		{
			name: "passages the model never saw", numCtx: 8192, passages: bigDocs, answer: "See [1] and [3].",
			turn: Turn{Question: "what does this break?", Context: filler("CONTEXT-START", "CONTEXT-END", 94000)},
			check: func(t *testing.T, user string, res Result) {
				if len(res.Cuts) != 2 || res.Cuts[1].Part != "passages" || res.Cuts[1].Note != "only the best 2 of 3 passages were given to the model to fit llama3.2:3b's 8192-token context" {
					t.Fatalf("cuts %+v", res.Cuts)
				}
				// [3] was not in the prompt: it is no source to cite.
				if len(res.Sources) != 2 || strings.Contains(user, "[3] ") || !slices.Equal(res.Invalid, []int{3}) || !res.Sources[0].Cited {
					t.Fatalf("sources %+v, invalid %v", res.Sources, res.Invalid)
				}
			},
		},
		{
			name: "model trained on less than num-ctx", numCtx: 32768, modelContext: 8192,
			turn: Turn{Question: "what does this break?", Context: filler("CONTEXT-START", "CONTEXT-END", 94000)},
			check: func(t *testing.T, user string, res Result) {
				if len(res.Cuts) != 1 || !noteRe.MatchString(res.Cuts[0].Note) {
					t.Fatalf("cuts %+v", res.Cuts)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			chat := &fakeChat{answer: []string{"ok [1]"}}
			if tc.answer != "" {
				chat.answer = []string{tc.answer}
			}
			a := &Agent{Config: Config{Model: "llama3.2:3b", NumCtx: tc.numCtx, ModelContext: tc.modelContext},
				Retriever: &fakeRetriever{passages: cmpOr(tc.passages, docs)}, Reranker: fakeReranker{[]float32{3, 2, 1}}, Chat: chat}
			evs, res, last := collect(t, a, context.Background(), tc.turn)
			if _, ok := last.(Done); !ok {
				t.Fatalf("ended with %#v", last)
			}
			req := chat.requests()[len(chat.requests())-1]
			if got, budget := promptBytes(req), (8192-1024)*bytesPerToken; got > budget {
				t.Fatalf("the prompt is %d bytes, over the %d an 8192-token context leaves", got, budget)
			}
			if req.Options["num_ctx"] != tc.numCtx {
				t.Errorf("num_ctx %v, want %d as configured", req.Options["num_ctx"], tc.numCtx)
			}
			// Every cut is told, before the sources are offered.
			var notes []string
			for _, e := range evs {
				switch e := e.(type) {
				case Notice:
					notes = append(notes, e.Text)
				case SourcesChosen:
					if len(e.Sources) != len(res.Sources) {
						t.Errorf("offered %d sources, the model saw %d", len(e.Sources), len(res.Sources))
					}
					for _, c := range res.Cuts {
						if !slices.Contains(notes, c.Note) {
							t.Errorf("cut not told before the sources: %q (notes %q)", c.Note, notes)
						}
					}
				}
			}
			tc.check(t, req.Messages[len(req.Messages)-1].Content, res)
		})
	}
}

func cmpOr[T any](s, or []T) []T {
	if len(s) == 0 {
		return or
	}
	return s
}

// bigDocs are three passages of 6 KB.
var bigDocs = []Passage{
	{Path: "a.md", Start: 1, End: 90, Text: filler("A", "A", 6000), LexicalRank: 1, VectorRank: 1},
	{Path: "b.md", Start: 1, End: 90, Text: filler("B", "B", 6000), LexicalRank: 2, VectorRank: 2},
	{Path: "c.md", Start: 1, End: 90, Text: filler("C", "C", 6000), LexicalRank: 3, VectorRank: 3},
}

// The order of cutting: the context the user gave (down to a quarter of
// the room), then the lowest-ranked sources, then the oldest history, and
// only then the question.
func TestCutOrder(t *testing.T) {
	cfg := Config{Model: "m", NumCtx: 8192}
	cfg.defaults()
	sources := func(n, size int) []Source {
		var out []Source
		for i := range n {
			out = append(out, Source{N: i + 1, Path: fmt.Sprintf("s%d.md", i+1), Start: 1, End: 2, Text: strings.Repeat("s", size)})
		}
		return out
	}
	history := func(n int) []Message {
		var h []Message
		for i := range n {
			h = append(h, Message{Role: "user", Content: fmt.Sprintf("Q%d ", i) + strings.Repeat("q", 1500)},
				Message{Role: "assistant", Content: fmt.Sprintf("A%d ", i) + strings.Repeat("a", 1500)})
		}
		return h
	}
	big := filler("START", "END", 94000)
	for _, tc := range []struct {
		name    string
		turn    Turn
		sources []Source
		want    []string
		check   func(t *testing.T, p prompt)
	}{
		{"the context first", Turn{Question: "q", Context: big, History: history(2)}, sources(5, 1000), []string{"context"}, nil},
		{"then the passages", Turn{Question: "q", Context: big}, sources(5, 4000), []string{"context", "passages"}, func(t *testing.T, p prompt) {
			if n := len(p.sources); n == 0 || n == 5 {
				t.Errorf("%d passages kept", n)
			}
		}},
		{"then the oldest history", Turn{Question: filler("Q-START", "Q-END", 12000), History: history(4)}, sources(2, 1000), []string{"passages", "history"}, func(t *testing.T, p prompt) {
			if !strings.HasSuffix(p.user, "Q-END") || len(p.history) == 0 || !strings.HasPrefix(p.history[len(p.history)-1].Content, "A3 ") {
				t.Errorf("kept %d history messages; the question must stay whole", len(p.history))
			}
		}},
		// Dropping passages and history could not save it: the question
		// is cut first, to a quarter of the room.
		{"a question too long for the window", Turn{Question: big, History: history(4)}, sources(5, 1000), []string{"passages", "question"}, func(t *testing.T, p prompt) {
			if len(p.sources) == 0 || len(p.history) != 8 || !strings.HasPrefix(p.user[strings.Index(p.user, "</sources>"):], "</sources>\n\nSTART") || !strings.HasSuffix(p.user, "END") {
				t.Errorf("%d sources, %d history", len(p.sources), len(p.history))
			}
		}},
		{"the question whole when the rest can go", Turn{Question: filler("Q-START", "Q-END", 17000), History: history(4)}, sources(2, 1000), []string{"passages", "history"}, func(t *testing.T, p prompt) {
			if len(p.sources) != 1 || !strings.HasSuffix(p.user, "Q-END") {
				t.Errorf("%d sources", len(p.sources))
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := cfg.fitPrompt(tc.turn, tc.sources)
			var parts []string
			for _, c := range p.cuts {
				parts = append(parts, c.Part)
			}
			if !slices.Equal(parts, tc.want) {
				t.Fatalf("cut %v, want %v", parts, tc.want)
			}
			if tc.check != nil {
				tc.check(t, p)
			}
		})
	}
}

// Whatever the input, the prompt fits the window and stays valid text.
func FuzzFitPrompt(f *testing.F) {
	f.Add("how?", "", "passage text", 3, 0, 8192)
	f.Add(strings.Repeat("é", 40000), strings.Repeat("日本", 20000), strings.Repeat("ü", 3000), 5, 4, 8192)
	f.Add("q", strings.Repeat("x", 94000), "p", 1, 1, 2048)
	f.Fuzz(func(t *testing.T, question, extra, text string, nSources, nHistory, window int) {
		if !utf8.ValidString(question + extra + text) {
			t.Skip()
		}
		cfg := Config{Model: "m", NumCtx: 2048 + mod(window, 30000)}
		cfg.defaults()
		var sources []Source
		for i := range 1 + mod(nSources, 8) {
			sources = append(sources, Source{N: i + 1, Path: "a.md", Start: 1, End: 2, Text: text})
		}
		var history []Message
		for range mod(nHistory, 6) {
			history = append(history, Message{Role: "user", Content: question}, Message{Role: "assistant", Content: text})
		}
		p := cfg.fitPrompt(Turn{Question: question, Context: extra, History: history}, sources)
		size := len(systemPrompt) + len(p.user) + 2*messageOverhead
		for _, m := range p.history {
			size += len(m.Content) + messageOverhead
		}
		if budget := (cfg.NumCtx - min(cfg.AnswerTokens, cfg.NumCtx/4)) * bytesPerToken; size > budget {
			t.Fatalf("prompt of %d bytes over the budget of %d", size, budget)
		}
		if !utf8.ValidString(p.user) {
			t.Fatal("the cut split a character")
		}
		if len(p.sources) == 0 || p.sources[len(p.sources)-1].N != len(p.sources) {
			t.Fatalf("sources %+v", p.sources)
		}
	})
}

func mod(n, m int) int { return int(uint(n) % uint(m)) }
