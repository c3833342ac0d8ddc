package eval

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/lore-cli/lore/agent"
)

func answerable(kw ...string) Question {
	return Question{ID: "q", Question: "How long are logs kept?", Kind: "lookup",
		Gold: []Gold{{Path: "guide/logs.md", Lines: [2]int{10, 20}}}, AnswerKeywords: kw}
}

func unanswerable() Question {
	no := false
	return Question{ID: "u", Question: "Does lore run on Windows 95?", Kind: "lookup", Answerable: &no}
}

// threeSources are the sources of a docs turn: [1] is gold, [2] is the gold
// file at other lines, [3] another file.
func threeSources() []agent.Source {
	return []agent.Source{
		{N: 1, Path: "guide/logs.md", Start: 12, End: 18, Text: "Logs are kept for 15d."},
		{N: 2, Path: "guide/logs.md", Start: 40, End: 52, Text: "Log format."},
		{N: 3, Path: "guide/other.md", Start: 1, End: 9, Text: "Other."},
	}
}

func docsResult(answer string) agent.Result {
	return agent.Result{Route: agent.RouteDocs, Mode: agent.Offline, Sources: threeSources(), Answer: answer}
}

func TestKeywords(t *testing.T) {
	tests := []struct {
		name     string
		keywords []string
		answer   string
		want     float64
	}{
		{"plain", []string{"15d"}, "Logs are kept for 15d [1].", 1},
		{"case", []string{"Retention"}, "RETENTION is 15d [1].", 1},
		{"in a code span", []string{"max_age"}, "Set `max_age` [1].", 1},
		{"in bold", []string{"15d"}, "Logs are kept for **15d** [1].", 1},
		{"space before the unit", []string{"15d"}, "Logs are kept for 15 d [1].", 1},
		{"keyword with a space, answer without", []string{"100 MB"}, "The cap is 100MB [1].", 1},
		{"thousands separator", []string{"8192"}, "num_ctx defaults to 8,192 [1].", 1},
		{"phrase across a line break", []string{"log rotation"}, "Enable log\nrotation [1].", 1},
		{"inside a longer number", []string{"15d"}, "Logs are kept for 115d [1].", 0},
		{"a different unit is not forgiven", []string{"15d"}, "Logs are kept for 15 days [1].", 0},
		{"inside an identifier", []string{"ctx"}, "Set num_ctx [1].", 0},
		{"half found", []string{"15d", "logrotate"}, "Logs are kept for 15d [1].", 0.5},
		{"punctuation in the keyword", []string{".loreignore"}, "Add a `.loreignore` file [1].", 1},
		{"empty keyword ignored", []string{"15d", " "}, "kept for 15d", 1},
		{"all-markup keyword ignored (it would match anything)", []string{"logrotate", "**"}, "kept for 15d", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scores, notes := ScoreAnswer(answerable(tt.keywords...), docsResult(tt.answer))
			got, ok := scores[MetricKeywords]
			if !ok || got != tt.want {
				t.Fatalf("keywords = %v (present %v), want %v; notes %q", got, ok, tt.want, notes)
			}
			if tt.want < 1 && !hasNote(notes, "keywords: missing") {
				t.Errorf("no note names the missing keyword: %q", notes)
			}
		})
	}
}

func TestKeywordsNotApplicable(t *testing.T) {
	withKeyword := unanswerable()
	withKeyword.AnswerKeywords = []string{"x"}
	for name, q := range map[string]Question{"no keywords": answerable(), "unanswerable": withKeyword} {
		t.Run(name, func(t *testing.T) {
			scores, _ := ScoreAnswer(q, docsResult("x [1]"))
			if _, ok := scores[MetricKeywords]; ok {
				t.Errorf("keywords scored: %v", scores)
			}
		})
	}
}

func TestCodePresence(t *testing.T) {
	fenced := "Use this [1]:\n\n```go\nctx, cancel := context.WithTimeout(ctx, time.Second)\n```\n"
	tests := []struct {
		name   string
		q      func(Question) Question
		r      func(agent.Result) agent.Result
		answer string
		want   float64 // -1: not applicable
	}{
		{"kind code, fenced", func(q Question) Question { q.Kind = "code"; return q }, nil, fenced, 1},
		{"kind code, only a code span", func(q Question) Question { q.Kind = "code"; return q }, nil, "Call `context.WithTimeout` [1].", 0},
		{"kind code, indented code does not count", func(q Question) Question { q.Kind = "code"; return q }, nil, "Use:\n\n    x := 1\n\n[1]", 0},
		{"gold is a code file", func(q Question) Question { q.Gold[0].Path = "cmd/main.go"; return q }, nil, "It returns an error [1].", 0},
		{"gold passage holds a fence", nil, func(r agent.Result) agent.Result {
			r.Candidates = []agent.Passage{{Path: "guide/logs.md", Start: 10, End: 20, Text: "Example:\n```yaml\nmax_age: 15d\n```"}}
			return r
		}, "```yaml\nmax_age: 15d\n```\n[1]", 1},
		{"a fence in a passage off gold does not count", nil, func(r agent.Result) agent.Result {
			r.Candidates = []agent.Passage{{Path: "guide/logs.md", Start: 30, End: 40, Text: "```sh\nlore index\n```"}}
			return r
		}, "15d [1]", -1},
		{"prose question", nil, nil, "Logs are kept for 15d [1].", -1},
		{"unanswerable code question", func(Question) Question { q := unanswerable(); q.Kind = "code"; return q }, func(r agent.Result) agent.Result {
			r.Route = agent.RouteNone
			return r
		}, agent.NotInDocs, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := answerable()
			q.Gold = slices.Clone(q.Gold)
			if tt.q != nil {
				q = tt.q(q)
			}
			r := docsResult(tt.answer)
			if tt.r != nil {
				r = tt.r(r)
			}
			scores, notes := ScoreAnswer(q, r)
			got, ok := scores[MetricCode]
			if tt.want < 0 {
				if ok {
					t.Fatalf("code scored %v, want not applicable", got)
				}
				return
			}
			if !ok || got != tt.want {
				t.Fatalf("code = %v (present %v), want %v; notes %q", got, ok, tt.want, notes)
			}
		})
	}
}

func TestCodeValid(t *testing.T) {
	tests := []struct {
		name   string
		answer string
		want   float64 // -1: not applicable
		note   string  // a note containing this, when want < 1
	}{
		{"go file", "```go\npackage main\n\nfunc main() {}\n```", 1, ""},
		{"go statements", "```go\nctx, cancel := context.WithTimeout(ctx, 5*time.Second)\ndefer cancel()\n```", 1, ""},
		{"go func without package", "```go\nfunc f(xs ...int) int {\n\treturn len(xs)\n}\n```", 1, ""},
		{"golang tag, declarations after a comment", "```golang\n// Config is...\ntype Config struct{ N int }\n```", 1, ""},
		{"go with elisions", "```go\nfunc main() {\n\t...\n\tclient.Chat(ctx, req, ...)\n}\n```", 1, ""},
		{"go elided body", "```go\nfunc run() error { ... }\n```", 1, ""},
		{"go that does not parse", "```go\nfunc main() {\n\tx := \n}\n```", 0, "does not parse as Go: 3:1"},
		{"go statements that do not parse", "```go\nx := 1\ny = = 2\n```", 0, "does not parse as Go: 2:"},
		{"go with an expression elided", "```go\nx := ...\n```", 0, "does not parse as Go: at the end"},
		{"fence left open", "Run:\n```sh\nlore index ./docs\n", 0, "never closed"},
		{"empty block", "```\n\n```", 0, "is empty"},
		{"json", "```json\n{\"model\": \"llama3.2\", \"stream\": false}\n```", 1, ""},
		{"ndjson stream", "```json\n{\"done\": false}\n{\"done\": true}\n```", 1, ""},
		{"json trailing comma", "```json\n{\"a\": 1,}\n```", 0, "is not valid JSON: 1:9"},
		{"json with a comment", "```json\n{\n  // the model\n  \"a\": 1\n}\n```", 0, "is not valid JSON"},
		{"jsonc with comment and trailing comma", "```jsonc\n{\n  // the model\n  \"a\": \"http://x\", /* c */\n}\n```", 1, ""},
		{"yaml", "```yaml\nindex:\n  chunk-lines: 24\n---\nmodel: x\n```", 1, ""},
		{"yaml with a tab indent", "```yml\nindex:\n\tchunk-lines: 24\n```", 0, "is not valid YAML"},
		{"other language only needs closing", "```python\ndef f(:\n```", 1, ""},
		{"tilde fence with info", "~~~toml title=x\na = 1\n~~~", 1, ""},
		{"a longer fence holds a shorter one", "````md\n```go\nbroken(\n```\n````", 1, ""},
		{"fence in a list item keeps yaml indentation", "1. Set:\n   ```yaml\n   a:\n     b: 1\n   ```", 1, ""},
		{"one of two blocks bad", "```go\nx := 1\n```\n\n```json\n{,}\n```", 0.5, "block 2 (json, line 5)"},
		{"three backticks in a line of prose", "Run ```lore index``` first [1].", -1, ""},
		{"no blocks", "Logs are kept for 15d [1].", -1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scores, notes := ScoreAnswer(answerable(), docsResult(tt.answer))
			got, ok := scores[MetricCodeValid]
			if tt.want < 0 {
				if ok {
					t.Fatalf("code_valid scored %v, want not applicable", got)
				}
				return
			}
			if !ok || got != tt.want {
				t.Fatalf("code_valid = %v (present %v), want %v; notes %q", got, ok, tt.want, notes)
			}
			if notes := notesOf(notes, MetricCodeValid); !hasNote(notes, tt.note) {
				t.Errorf("notes %q lack %q", notes, tt.note)
			}
		})
	}
}

func TestCitations(t *testing.T) {
	tests := []struct {
		name      string
		answer    string
		citations float64 // -1: not applicable
		gold      float64 // -1: not applicable
		note      string
	}{
		{"right passage", "Logs are kept for 15d [1].", 1, 1, ""},
		{"right file, wrong lines", "Logs are kept for 15d [2].", 1, 0, "cited_gold: [2] guide/logs.md:40-52 is not a gold passage"},
		{"half gold", "15d [1], rotated daily [3].", 1, 0.5, "[3] guide/other.md:1-9"},
		{"missing sources", "15d [0][1][9].", 1.0 / 3, 1, "citations: [9] points at no source (3 given)"},
		{"source zero", "15d [0].", 0, -1, "citations: [0] points at no source"},
		{"repeated markers count once", "15d [1]. Yes [1][1].", 1, 1, ""},
		{"grouped markers", "15d [1, 9].", 0.5, 1, "grouped markers"},
		{"index in code is no citation", "Use it [1]:\n\n```go\nname := os.Args[0]\nx := xs[7]\n```\nor `xs[9]`.", 1, 1, ""},
		{"index in prose is no citation", "Read argv[2] and m[1][9] as the guide says [1].", 1, 1, ""},
		{"a one-line code span of three backticks is no fence", "Run ```lore index``` first [1], then see [2].", 1, 0.5, "cited_gold: [2]"},
		{"no markers", "Logs are kept for 15d.", 0, -1, "citations: the answer cites no source"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scores, notes := ScoreAnswer(answerable(), docsResult(tt.answer))
			check := func(metric string, want float64) {
				t.Helper()
				got, ok := scores[metric]
				if want < 0 {
					if ok {
						t.Errorf("%s scored %v, want not applicable", metric, got)
					}
					return
				}
				if !ok || !near(got, want) {
					t.Errorf("%s = %v (present %v), want %v; notes %q", metric, got, ok, want, notes)
				}
			}
			check(MetricCitations, tt.citations)
			check(MetricCitedGold, tt.gold)
			if !hasNote(notes, tt.note) {
				t.Errorf("notes %q lack %q", notes, tt.note)
			}
		})
	}
}

func TestCitedGoldWeb(t *testing.T) {
	r := agent.Result{Route: agent.RouteWeb, Mode: agent.Online, Answer: "Kept 15d [1].",
		Sources: []agent.Source{{N: 1, URL: "https://example.com/guide/logs.md", Path: "guide/logs.md", Start: 12, End: 18}}}
	scores, _ := ScoreAnswer(answerable(), r)
	if scores[MetricCitations] != 1 || scores[MetricCitedGold] != 0 {
		t.Errorf("web citation: %v, want citations 1, cited_gold 0", scores)
	}
	if _, ok := scores[MetricCitedGold]; !ok {
		t.Error("cited_gold missing for a web citation of an answerable question")
	}
}

func TestCitedGoldUnanswerable(t *testing.T) {
	r := docsResult("Windows 95 is not supported [1].")
	scores, _ := ScoreAnswer(unanswerable(), r)
	if _, ok := scores[MetricCitedGold]; ok {
		t.Errorf("cited_gold scored for a question without gold: %v", scores)
	}
	if scores[MetricCitations] != 1 {
		t.Errorf("citations = %v, want 1", scores[MetricCitations])
	}
}

func TestIsRefusal(t *testing.T) {
	refusals := []string{
		agent.NotInDocs,
		"This is not in the documents.",
		"The provided documents don't mention Windows 95.",
		"The provided documents don’t mention Windows 95 [1].",
		"I couldn't find anything about Windows 95.",
		"I could not find that in your notes.",
		"There is no information about Windows 95 in the sources.",
		"That isn't covered.",
		"There's no mention of Windows 95.",
		"The context does not say which versions of Windows work.",
		"The sources you gave me don't seem to address Windows at all.",
		"Sadly, nothing in your notes touches on Kubernetes.",
		"Your files are silent on Windows 95.",
		"I looked through the passages and found nothing about Windows 95.",
		"**Not covered.** This topic is not addressed in the provided sources.",
		"Windows 95 doesn't appear anywhere in the documents.",
		"I don't know: none of the passages talk about it.",
		"The documentation does not explicitly state a minimum Windows version.",
		"Unfortunately, the provided context doesn't include details about Windows 95 support.",
		"The answer isn't in the documents I was given.",
		"The passages only cover Linux; Windows 95 is not mentioned.",
		"That information is not available in the sources provided.",
		"My sources have nothing on Windows 95.",
		"None of this is documented.",
		"I cannot tell from these documents whether it runs on Windows 95.",
		"Hmm. I'm unable to find Windows 95 in these documents.",
	}
	for _, a := range refusals {
		if !IsRefusal(a) {
			t.Errorf("IsRefusal(%q) = false, want true", a)
		}
	}
	answers := []string{
		"Windows 95 is not supported [2].",
		"No. Windows is not supported; lore runs on Linux and macOS [1].",
		"Damage is not covered by the warranty [1].",
		"It is not covered by the warranty [1].",
		"The docs say the installer does not include a GUI [1].",
		"There is no limit on the number of documents [3].",
		"Logs are kept for 15d [1]. Rotation is daily [2]. The documents do not mention compression.",
		"Set `not_in_the_documents: true` [1].",
		"Is water damage covered? It is not covered [1].",
		"The sources do not agree: [1] says 5 and [2] says 7.",
		"Lore does not index PDF files; only Markdown and text are supported [1].",
		"The context window is not set in the config file by default [2].",
		"The notes do not require any setup [3].",
		"The documents describe it [1], but I can't tell you more.",
		"This is documented in the README [2].",
		"None of this is required [1].",
		"Windows 95 is not mentioned in the changelog as supported, it was dropped in 2.0 [4].",
		"The index is not found in the cache directory until you run `lore index` [1].",
		"",
	}
	for _, a := range answers {
		if IsRefusal(a) {
			t.Errorf("IsRefusal(%q) = true, want false", a)
		}
	}
}

func TestRefusalAndRoute(t *testing.T) {
	tests := []struct {
		name    string
		q       Question
		r       agent.Result
		route   float64
		refusal float64 // -1: not applicable
		note    string
	}{
		{"offline unanswerable, route none", unanswerable(),
			agent.Result{Route: agent.RouteNone, Mode: agent.Offline, Answer: agent.NotInDocs}, 1, 1, ""},
		{"offline unanswerable, docs route, refusal phrased unusually", unanswerable(),
			agent.Result{Route: agent.RouteDocs, Mode: agent.Offline, Sources: threeSources(), Answer: "Your notes are silent on Windows 95."}, 0, 1, "route: docs, want none"},
		{"offline unanswerable, answered anyway", unanswerable(),
			agent.Result{Route: agent.RouteDocs, Mode: agent.Offline, Sources: threeSources(), Answer: "Windows 95 is not supported [1]."}, 0, 0, "refusal: the documents do not answer this"},
		{"online unanswerable, web", unanswerable(),
			agent.Result{Route: agent.RouteWeb, Mode: agent.Online, Answer: "It is [1].", Sources: []agent.Source{{N: 1, URL: "https://example.com"}}}, 1, -1, ""},
		{"online unanswerable, none", unanswerable(),
			agent.Result{Route: agent.RouteNone, Mode: agent.Online, Answer: agent.NotInDocs}, 0, -1, "route: none, want web"},
		{"answerable, docs", answerable(), docsResult("15d [1]."), 1, -1, ""},
		{"answerable, none", answerable(),
			agent.Result{Route: agent.RouteNone, Mode: agent.Offline, Answer: agent.NotInDocs}, 0, -1, "route: none, want docs"},
		{"answerable, docs, but the model refused", answerable(), docsResult("I couldn't find how long logs are kept."), 1, -1, "refusal: the documents answer this, but the model said"},
		{"answerable, turn failed before routing", answerable(), agent.Result{Mode: agent.Offline}, 0, -1, "route: the turn ended before routing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scores, notes := ScoreAnswer(tt.q, tt.r)
			if got, ok := scores[MetricRoute]; !ok || got != tt.route {
				t.Errorf("route = %v (present %v), want %v; notes %q", got, ok, tt.route, notes)
			}
			got, ok := scores[MetricRefusal]
			switch {
			case tt.refusal < 0 && ok:
				t.Errorf("refusal scored %v, want not applicable", got)
			case tt.refusal >= 0 && (!ok || got != tt.refusal):
				t.Errorf("refusal = %v (present %v), want %v; notes %q", got, ok, tt.refusal, notes)
			}
			if !hasNote(notes, tt.note) {
				t.Errorf("notes %q lack %q", notes, tt.note)
			}
		})
	}
}

func TestSourcesOnly(t *testing.T) {
	q := answerable("15d")
	q.Kind = "code"
	r := agent.Result{Route: agent.RouteSourcesOnly, Mode: agent.Offline, Sources: threeSources()}
	scores, notes := ScoreAnswer(q, r)
	if want := map[string]float64{MetricRoute: 0}; !maps.Equal(scores, want) {
		t.Errorf("scores = %v, want %v", scores, want)
	}
	if !hasNote(notes, "sources-only: no model answered") {
		t.Errorf("notes %q", notes)
	}
}

// Every metric ScoreAnswer returns is a listed one, in [0, 1].
func TestScoreAnswerRange(t *testing.T) {
	q := answerable("15d", "daily")
	q.Kind = "code"
	r := docsResult("```go\nx := \n```\n15d [1][2][7], ```")
	scores, _ := ScoreAnswer(q, r)
	if len(scores) != 6 {
		t.Errorf("scores = %v, want all but refusal", scores)
	}
	for m, v := range scores {
		if !slices.Contains(AnswerMetrics, m) || v < 0 || v > 1 {
			t.Errorf("%s = %v", m, v)
		}
	}
}

// hasNote reports whether a note contains sub; sub "" asks for no notes.
func hasNote(notes []string, sub string) bool {
	if sub == "" {
		return len(notes) == 0
	}
	return slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, sub) })
}

// notesOf keeps the notes about metric.
func notesOf(notes []string, metric string) []string {
	return slices.DeleteFunc(slices.Clone(notes), func(n string) bool { return !strings.HasPrefix(n, metric+": ") })
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
