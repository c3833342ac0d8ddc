package eval

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ollama/ollama/api"

	"github.com/lore-cli/lore/agent"
	"github.com/lore-cli/lore/internal/excerpt"
)

// The judge's prompts live in files so that they can be read, diffed and
// shown by --explain exactly as the judge gets them.
//
//go:embed prompts/*.txt
var promptFiles embed.FS

// Prompt is one of the judge's prompts; {{question}}, {{passages}} and
// {{answer}} are filled in for each question.
type Prompt struct {
	Name string // the metric it scores
	Text string
}

// Prompts returns the judge's prompts, in JudgeMetrics order.
func Prompts() []Prompt {
	var out []Prompt
	for _, name := range JudgeMetrics {
		b, err := promptFiles.ReadFile("prompts/" + name + ".txt")
		if err != nil {
			panic(err) // embedded: cannot happen unless a file is renamed
		}
		out = append(out, Prompt{Name: name, Text: string(b)})
	}
	return out
}

func prompt(name string) string {
	for _, p := range Prompts() {
		if p.Name == name {
			return p.Text
		}
	}
	panic("no prompt " + name)
}

// ErrJudge marks a judge that failed: Ollama refused the request or the
// reply was not the JSON asked for. A failed judgement is an error, never
// a silent 0, so that a broken judge cannot pass for a bad answer.
var ErrJudge = errors.New("judge")

// Judge scores answers with a second Ollama model.
type Judge struct {
	Chat   agent.ChatClient
	Model  string
	NumCtx int // the judge's context window in tokens; 0 means 8192
}

// The JSON schemas passed as Ollama's format: the reply is constrained to
// them, and the prompts describe the same shape for models that ignore it.
var (
	faithfulnessSchema = json.RawMessage(`{"type":"object","properties":{"claims":{"type":"array","items":{"type":"object","properties":{"claim":{"type":"string"},"supported":{"type":"boolean"}},"required":["claim","supported"]}}},"required":["claims"]}`)
	relevancySchema    = json.RawMessage(`{"type":"object","properties":{"reason":{"type":"string"},"score":{"type":"integer","minimum":1,"maximum":5}},"required":["reason","score"]}`)
)

// Score returns faithfulness and relevancy for an answer. A turn with
// nothing claimed (route none or sources-only, an empty answer, a
// refusal) is not judged: a refusal is right or wrong by the refusal
// metric, and a judge would rate it as not answering. Scores already made
// are returned with an error.
func (j Judge) Score(ctx context.Context, q Question, r agent.Result) (map[string]float64, []string, error) {
	scores := map[string]float64{}
	switch {
	case r.Route == agent.RouteNone || r.Route == agent.RouteSourcesOnly:
		return scores, []string{"judge: skipped: route " + string(r.Route) + " (nothing claimed)"}, nil
	case strings.TrimSpace(r.Answer) == "":
		return scores, []string{"judge: skipped: no answer"}, nil
	case IsRefusal(r.Answer):
		return scores, []string{"judge: skipped: the answer is a refusal (see refusal)"}, nil
	}
	f, notes, err := j.faithfulness(ctx, q, r)
	if err != nil {
		return scores, notes, err
	}
	if f != nil {
		scores[MetricFaithfulness] = *f
	}
	rel, more, err := j.relevancy(ctx, q, r)
	notes = append(notes, more...)
	if err != nil {
		return scores, notes, err
	}
	scores[MetricRelevancy] = rel
	return scores, notes, nil
}

func (j Judge) numCtx() int {
	if j.NumCtx > 0 {
		return j.NumCtx
	}
	return 8192
}

// replyTokens are kept free in the judge's context for its reply.
const replyTokens = 1024

// faithfulness judges the answer against the passages it cites. An answer
// that cites nothing is judged against every source it was given, so
// that an uncited but grounded answer is not called unfaithful (whether
// it cites is the citations metric's business); it is nil when the judge
// finds no claims at all.
func (j Judge) faithfulness(ctx context.Context, q Question, r agent.Result) (*float64, []string, error) {
	var notes []string
	note := func(format string, args ...any) {
		notes = append(notes, MetricFaithfulness+": "+fmt.Sprintf(format, args...))
	}
	byN := map[int]agent.Source{}
	for _, s := range r.Sources {
		byN[s.N] = s
	}
	var passages []agent.Source
	nums, _ := citedNumbers(r.Answer)
	for _, n := range nums {
		if s, ok := byN[n]; ok {
			passages = append(passages, s)
		}
	}
	if len(passages) == 0 {
		if len(r.Sources) == 0 {
			note("skipped: the answer had no sources")
			return nil, notes, nil
		}
		passages = r.Sources
		note("the answer cites no source: judged against all %d it was given", len(r.Sources))
	}
	tmpl := prompt(MetricFaithfulness)
	room := (j.numCtx()-replyTokens)*4 - len(tmpl) - len(q.Question) - len(r.Answer)
	block, cut := renderPassages(passages, room)
	if cut {
		note("passages cut to fit the judge's %d-token context", j.numCtx())
	}
	text := strings.NewReplacer("{{question}}", q.Question, "{{passages}}", block, "{{answer}}", r.Answer).Replace(tmpl)
	reply, err := j.ask(ctx, text, faithfulnessSchema)
	if err != nil {
		return nil, notes, fmt.Errorf("%w: %s: %w", ErrJudge, MetricFaithfulness, err)
	}
	var out struct {
		Claims *[]struct {
			Claim     string   `json:"claim"`
			Supported *verdict `json:"supported"`
			Verdict   *verdict `json:"verdict"`
		} `json:"claims"`
	}
	if err := decodeReply(reply, &out); err != nil {
		return nil, notes, fmt.Errorf("%w: %s: %w", ErrJudge, MetricFaithfulness, err)
	}
	if out.Claims == nil {
		return nil, notes, fmt.Errorf("%w: %s: the reply has no \"claims\": %s", ErrJudge, MetricFaithfulness, quoteReply(reply))
	}
	claims := *out.Claims
	if len(claims) == 0 {
		note("the judge found no claims in the answer")
		return nil, notes, nil
	}
	supported := 0
	for i, c := range claims {
		v := c.Supported
		if v == nil {
			v = c.Verdict
		}
		if v == nil {
			return nil, notes, fmt.Errorf("%w: %s: claim %d has no verdict in the reply %s", ErrJudge, MetricFaithfulness, i+1, quoteReply(reply))
		}
		if *v {
			supported++
		} else {
			note("not supported: %s", strconv.Quote(clip(c.Claim, 120)))
		}
	}
	f := share(supported, len(claims))
	return &f, notes, nil
}

// relevancy maps the judge's 1-5 rating onto [0, 1]. A five-point scale
// is what small models rate consistently; a bare 0-1 number drifts.
func (j Judge) relevancy(ctx context.Context, q Question, r agent.Result) (float64, []string, error) {
	text := strings.NewReplacer("{{question}}", q.Question, "{{answer}}", r.Answer).Replace(prompt(MetricRelevancy))
	reply, err := j.ask(ctx, text, relevancySchema)
	if err != nil {
		return 0, nil, fmt.Errorf("%w: %s: %w", ErrJudge, MetricRelevancy, err)
	}
	var out struct {
		Reason string          `json:"reason"`
		Score  json.RawMessage `json:"score"`
	}
	if err := decodeReply(reply, &out); err != nil {
		return 0, nil, fmt.Errorf("%w: %s: %w", ErrJudge, MetricRelevancy, err)
	}
	score, err := strconv.ParseFloat(strings.Trim(string(out.Score), `" `), 64)
	if err != nil || !(score >= 1 && score <= 5) { // NaN fails both
		return 0, nil, fmt.Errorf("%w: %s: the reply has no score from 1 to 5: %s", ErrJudge, MetricRelevancy, quoteReply(reply))
	}
	var notes []string
	if score < 5 {
		notes = append(notes, fmt.Sprintf("%s: %g/5: %s", MetricRelevancy, score, clip(out.Reason, 160)))
	}
	return (score - 1) / 4, notes, nil
}

// ask sends one prompt and returns the whole reply: not streamed,
// temperature 0 so that a rerun judges alike, the reply held to schema.
func (j Judge) ask(ctx context.Context, text string, schema json.RawMessage) (string, error) {
	stream := false
	req := &api.ChatRequest{
		Model:    j.Model,
		Messages: []api.Message{{Role: "user", Content: text}},
		Stream:   &stream,
		Format:   schema,
		Options:  map[string]any{"temperature": 0, "num_ctx": j.numCtx()},
	}
	var b strings.Builder
	err := j.Chat.Chat(ctx, req, func(resp api.ChatResponse) error {
		b.WriteString(resp.Message.Content)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("model %s: %w", j.Model, err)
	}
	return b.String(), nil
}

// renderPassages numbers the passages as the answering model saw them,
// within room characters; cut reports that some text was left out.
func renderPassages(passages []agent.Source, room int) (block string, cut bool) {
	room = max(room, 1000)
	var b strings.Builder
	for _, p := range passages {
		entry := fmt.Sprintf("[%d] %s\n%s\n\n", p.N, p.Label(), p.Text)
		if b.Len()+len(entry) > room {
			left := room - b.Len()
			if left > 200 {
				b.WriteString(entry[:excerpt.Cut(entry, left)] + "…\n\n")
			}
			return strings.TrimSpace(b.String()), true
		}
		b.WriteString(entry)
	}
	return strings.TrimSpace(b.String()), false
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	return s[:excerpt.Cut(s, n)] + "…"
}

func quoteReply(reply string) string { return strconv.Quote(clip(reply, 200)) }

// decodeReply reads the first JSON object of a reply. Models asked for
// JSON still wrap it in a code fence or add a sentence before or after,
// so the object is looked for rather than the whole reply parsed.
func decodeReply(reply string, v any) error {
	var first error
	for i, tries := 0, 0; tries < 10; tries++ {
		start := strings.IndexByte(reply[i:], '{')
		if start < 0 {
			break
		}
		i += start
		var raw json.RawMessage
		err := json.NewDecoder(strings.NewReader(reply[i:])).Decode(&raw)
		if err == nil {
			if err := json.Unmarshal(raw, v); err != nil {
				return fmt.Errorf("the reply is not the JSON asked for (%v): %s", err, quoteReply(reply))
			}
			return nil
		}
		if first == nil {
			first = err
		}
		i++
	}
	if first == nil {
		return fmt.Errorf("the reply is not the JSON asked for: %s", quoteReply(reply))
	}
	return fmt.Errorf("the reply is not the JSON asked for (%v): %s", first, quoteReply(reply))
}

// verdict is a claim's verdict: a boolean as the schema asks, or the word
// a model writes instead of one. A partly supported claim is not
// supported: some of it is not in the passages.
type verdict bool

func (v *verdict) UnmarshalJSON(b []byte) error {
	var x any
	if err := json.Unmarshal(b, &x); err != nil {
		return err
	}
	switch x := x.(type) {
	case bool:
		*v = verdict(x)
		return nil
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true", "yes", "supported":
			*v = true
			return nil
		case "false", "no", "unsupported", "not supported", "partial", "partially", "partially supported":
			*v = false
			return nil
		}
	}
	return fmt.Errorf("%s is not a verdict (true or false)", b)
}
