package eval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/scanner"
	"go/token"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/lore-cli/lore/agent"
	"github.com/lore-cli/lore/index/ingest"
	"github.com/lore-cli/lore/internal/mdcode"
)

// Metric names, as they appear in tables and JSON. Every score is in [0, 1].
const (
	MetricKeywords     = "keywords"     // share of answer_keywords in the answer
	MetricCode         = "code"         // a code block when the question calls for code
	MetricCodeValid    = "code_valid"   // share of the answer's code blocks that parse
	MetricCitations    = "citations"    // share of [n] markers that point at a source
	MetricCitedGold    = "cited_gold"   // share of cited sources that overlap gold
	MetricRefusal      = "refusal"      // an unanswerable question was refused
	MetricRoute        = "route"        // the turn took the expected route
	MetricFaithfulness = "faithfulness" // judge: share of claims the cited passages support
	MetricRelevancy    = "relevancy"    // judge: how directly the answer addresses the question
)

// AnswerMetrics are the metrics ScoreAnswer may return, in table order.
var AnswerMetrics = []string{MetricRoute, MetricRefusal, MetricKeywords, MetricCode, MetricCodeValid, MetricCitations, MetricCitedGold}

// JudgeMetrics are the metrics Judge.Score may return, in table order.
var JudgeMetrics = []string{MetricFaithfulness, MetricRelevancy}

// ScoreAnswer scores one finished turn against its question. It returns
// only the metrics that apply to the question (a metric that does not
// apply is absent, not 0, so that means are taken over the questions it
// concerns), and short notes saying what went wrong, for --verbose.
func ScoreAnswer(q Question, r agent.Result) (map[string]float64, []string) {
	s := &scorer{scores: map[string]float64{}}
	s.route(q, r)
	if r.Route == agent.RouteSourcesOnly {
		// No model answered: there is no answer to score, and scoring the
		// empty one would blame the answer for an Ollama that was down.
		return s.scores, s.notes
	}
	s.refusal(q, r)
	s.keywords(q, r.Answer)
	blocks := mdcode.Blocks(r.Answer)
	s.code(q, r, blocks)
	s.codeValid(blocks)
	s.citations(q, r)
	return s.scores, s.notes
}

type scorer struct {
	scores map[string]float64
	notes  []string
}

func (s *scorer) note(metric, format string, args ...any) {
	s.notes = append(s.notes, metric+": "+fmt.Sprintf(format, args...))
}

func share(n, total int) float64 { return float64(n) / float64(total) }

func boolScore(ok bool) float64 {
	if ok {
		return 1
	}
	return 0
}

// ExpectedRoute is the route a question should take: the documents for
// an answerable question; for an unanswerable one, the web when online
// (that is what online mode is for) and none offline.
func ExpectedRoute(q Question, mode agent.Mode) agent.Route {
	switch {
	case q.IsAnswerable():
		return agent.RouteDocs
	case mode == agent.Online:
		return agent.RouteWeb
	}
	return agent.RouteNone
}

// route counts sources-only as wrong rather than skipping it: answer eval
// needs a model, so a turn without one is a failure of the run that a
// skipped metric would hide.
func (s *scorer) route(q Question, r agent.Result) {
	want := ExpectedRoute(q, r.Mode)
	ok := r.Route == want
	s.scores[MetricRoute] = boolScore(ok)
	switch {
	case ok:
	case r.Route == "":
		s.note(MetricRoute, "the turn ended before routing, want %s", want)
	case r.Route == agent.RouteSourcesOnly:
		s.note(MetricRoute, "sources-only: no model answered (is Ollama up?), want %s; answer metrics skipped", want)
	default:
		s.note(MetricRoute, "%s, want %s (%s)", r.Route, want, r.RoutedOnSignal)
	}
}

// refusal is scored on unanswerable questions offline only: online the
// right move is the web, which the route metric scores, and an answer from
// a web page is not a failure to refuse. A refused answerable question is
// a note, not a score: route (none instead of docs) and keywords already
// count it, and a second metric would count it twice.
func (s *scorer) refusal(q Question, r agent.Result) {
	refused := r.Route == agent.RouteNone || IsRefusal(r.Answer)
	if q.IsAnswerable() {
		if refused && r.Route != agent.RouteNone {
			s.note(MetricRefusal, "the documents answer this, but the model said they do not")
		}
		return
	}
	if r.Mode == agent.Online {
		return
	}
	s.scores[MetricRefusal] = boolScore(refused)
	if !refused {
		s.note(MetricRefusal, "the documents do not answer this, and the answer does not say so")
	}
}

// keywords looks for each keyword as a whole word or phrase, after
// markdown emphasis and code spans are taken off, case-insensitively.
// Two kinds of formatting are forgiven because they change nothing a
// reader would call a fact: a space between a number and its unit (15d,
// 15 d) and thousands separators (8192, 8,192). Nothing looser (stems,
// synonyms, other units): a keyword is a fact, and "15 days" is not
// "15d" to a parser reading the config the answer describes.
func (s *scorer) keywords(q Question, answer string) {
	var keywords []string
	for _, k := range q.AnswerKeywords {
		// A keyword that is all markup ("`", "**") would match anything.
		if strings.TrimSpace(normalizeText(k)) != "" {
			keywords = append(keywords, k)
		}
	}
	if !q.IsAnswerable() || len(keywords) == 0 {
		return
	}
	text := normalizeText(answer)
	var missing []string
	for _, k := range keywords {
		if !keywordRe(k).MatchString(text) {
			missing = append(missing, strconv.Quote(k))
		}
	}
	s.scores[MetricKeywords] = share(len(keywords)-len(missing), len(keywords))
	if len(missing) > 0 {
		s.note(MetricKeywords, "missing %s", strings.Join(missing, ", "))
	}
}

var (
	markup      = strings.NewReplacer("`", "", "*", "", "\u00a0", " ", "\u202f", " ", "\u2009", " ")
	thousandsRe = regexp.MustCompile(`(\d),(\d{3})`)
	spacesRe    = regexp.MustCompile(`\s+`)
)

// normalizeText is applied to answers and keywords alike.
func normalizeText(s string) string {
	s = strings.ToLower(markup.Replace(s))
	// Twice: the matches of "1,234,567" overlap.
	s = thousandsRe.ReplaceAllString(s, "$1$2")
	s = thousandsRe.ReplaceAllString(s, "$1$2")
	return spacesRe.ReplaceAllString(s, " ")
}

func isWordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// keywordRe matches a keyword with word boundaries at its ends (where it
// starts or ends with a word character), any run of white space where it
// has one, and an optional space between a digit and a letter.
func keywordRe(k string) *regexp.Regexp {
	k = strings.TrimSpace(normalizeText(k))
	var b strings.Builder
	runes := []rune(k)
	if len(runes) > 0 && isWordRune(runes[0]) {
		b.WriteString(`(?:^|[^\p{L}\p{N}_])`)
	}
	for i, r := range runes {
		afterDigit := i > 0 && unicode.IsDigit(runes[i-1])
		switch {
		case r == ' ' && afterDigit && i+1 < len(runes) && unicode.IsLetter(runes[i+1]):
			b.WriteString(`\s?`) // "15 d" in the keyword
		case r == ' ':
			b.WriteString(`\s+`)
		case afterDigit && unicode.IsLetter(r):
			b.WriteString(`\s?` + regexp.QuoteMeta(string(r))) // "15d" in the keyword
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	if len(runes) > 0 && isWordRune(runes[len(runes)-1]) {
		b.WriteString(`(?:$|[^\p{L}\p{N}_])`)
	}
	return regexp.MustCompile(b.String())
}

// ExpectsCode reports whether an answer to q should show code: the
// question is of kind "code", a gold file is source code, or a retrieved
// passage overlapping gold holds a fenced block (the answer lies in code).
func ExpectsCode(q Question, r agent.Result) bool {
	if !q.IsAnswerable() {
		return false
	}
	if q.Kind == "code" {
		return true
	}
	for _, g := range q.Gold {
		// A gold passage in code or a structured file (YAML, JSON, TOML),
		// as the index tells them, is code: the answer should show some.
		if k := ingest.FileKind(g.Path); k == "code" || k == "structured" {
			return true
		}
	}
	hasFence := func(path string, start, end int, text string) bool {
		return q.Overlaps(path, start, end) && len(mdcode.Blocks(text)) > 0
	}
	for _, p := range r.Candidates {
		if hasFence(p.Path, p.Start, p.End, p.Text) {
			return true
		}
	}
	for _, src := range r.Sources {
		if src.URL == "" && hasFence(src.Path, src.Start, src.End, src.Text) {
			return true
		}
	}
	return false
}

// code counts fenced blocks only: the system prompt asks for them, and an
// indented block cannot be told from a list item's continuation lines
// without a full markdown parser; an inline code span names code rather
// than showing it.
func (s *scorer) code(q Question, r agent.Result, blocks []mdcode.Block) {
	if !ExpectsCode(q, r) {
		return
	}
	s.scores[MetricCode] = boolScore(len(blocks) > 0)
	if len(blocks) == 0 {
		s.note(MetricCode, "the answer lies in code, but the answer has no code block")
	}
}

func (s *scorer) codeValid(blocks []mdcode.Block) {
	if len(blocks) == 0 {
		return
	}
	valid := 0
	for i, b := range blocks {
		if err := checkBlock(b); err != nil {
			s.note(MetricCodeValid, "block %d (%s, line %d) %v", i+1, langName(b.Lang), b.Line, err)
			continue
		}
		valid++
	}
	s.scores[MetricCodeValid] = share(valid, len(blocks))
}

func langName(lang string) string {
	if lang == "" {
		return "no language"
	}
	return lang
}

// checkBlock says why a block is not valid code, or nil. Languages lore
// can parse with the standard library or go.mod's YAML are parsed; any
// other block only has to be closed and not empty, since a fence left
// open swallows the rest of the answer when rendered.
func checkBlock(b mdcode.Block) error {
	if !b.Closed {
		return errors.New("is never closed")
	}
	if strings.TrimSpace(b.Text) == "" {
		return errors.New("is empty")
	}
	switch b.Lang {
	case "go", "golang":
		return checkGo(b.Text)
	case "json":
		return checkJSON(b.Text)
	case "jsonc", "json5":
		return checkJSON(stripJSONC(b.Text))
	case "yaml", "yml":
		return checkYAML(b.Text)
	}
	return nil
}

// elisionRe finds a "..." standing for left-out code: alone or between
// brackets, commas and spaces, never the variadic "xs..." or "...T" of Go
// itself, nor the "[...]" of an array literal.
var elisionRe = regexp.MustCompile(`(^|[\s{(,])(?:\.\.\.|…)([\s})\],]|$)`)

// checkGo parses Go the way answers show it: a whole file, else
// declarations without a package clause, else statements (the body of a
// function). Answers elide with "..." (or "// ..."), so an elision where
// a statement, an argument list or a block body would be is taken as a
// comment; an elision standing for an expression ("x := ...") is not
// valid, as it would not compile once filled in either.
func checkGo(src string) error {
	src = elideGo(src)
	fset := token.NewFileSet()
	first := firstGoWord(src)
	lines := strings.Count(src, "\n") + 1
	if first == "package" {
		_, err := parser.ParseFile(fset, "", src, 0)
		return goErr(err, 0, lines)
	}
	_, declErr := parser.ParseFile(fset, "", "package p\n"+src, 0)
	if declErr == nil {
		return nil
	}
	_, stmtErr := parser.ParseFile(fset, "", "package p\nfunc _() {\n"+src+"\n}", 0)
	if stmtErr == nil {
		return nil
	}
	switch first {
	case "func", "type", "var", "const", "import":
		return goErr(declErr, 1, lines)
	}
	return goErr(stmtErr, 2, lines)
}

func elideGo(src string) string {
	lines := strings.Split(src, "\n")
	for i, l := range lines {
		// Twice: adjacent matches share their delimiter, as in "(..., ...)".
		l = elisionRe.ReplaceAllString(l, "$1/*…*/$2")
		lines[i] = elisionRe.ReplaceAllString(l, "$1/*…*/$2")
	}
	return strings.Join(lines, "\n")
}

// firstGoWord is the first word of src after comments and blank lines.
func firstGoWord(src string) string {
	var s scanner.Scanner
	fset := token.NewFileSet()
	s.Init(fset.AddFile("", -1, len(src)), []byte(src), nil, 0)
	_, tok, lit := s.Scan()
	if tok.IsKeyword() {
		return tok.String()
	}
	return lit
}

// goErr reports the first parse error with the line numbers of the block
// (the wrapper added offset lines before it, and a closing one after).
func goErr(err error, offset, lines int) error {
	if err == nil {
		return nil
	}
	var list scanner.ErrorList
	if errors.As(err, &list) && len(list) > 0 {
		e := list[0]
		if line := e.Pos.Line - offset; line <= lines {
			return fmt.Errorf("does not parse as Go: %d:%d: %s", line, e.Pos.Column, e.Msg)
		}
		return fmt.Errorf("does not parse as Go: at the end: %s", e.Msg)
	}
	return fmt.Errorf("does not parse as Go: %w", err)
}

// checkJSON accepts one JSON value or a stream of them: answers show the
// NDJSON that Ollama's API streams in json fences. Comments and trailing
// commas are errors in a json fence (a .json file or an API would reject
// them); only a jsonc or json5 fence may have them.
func checkJSON(src string) error {
	dec := json.NewDecoder(strings.NewReader(src))
	for n := 0; ; n++ {
		var v json.RawMessage
		err := dec.Decode(&v)
		if err == io.EOF && n > 0 {
			return nil
		}
		var syntax *json.SyntaxError
		switch {
		case err == io.EOF:
			return errors.New("is not valid JSON: no value")
		case errors.As(err, &syntax):
			line, col := lineCol(src, int(syntax.Offset))
			return fmt.Errorf("is not valid JSON: %d:%d: %s", line, col, syntax)
		case err != nil:
			return fmt.Errorf("is not valid JSON: %w", err)
		}
	}
}

// lineCol turns a byte offset (just past the error, as encoding/json
// gives it) into a 1-based line and column.
func lineCol(src string, off int) (line, col int) {
	off = max(0, min(off, len(src))-1)
	before := src[:off]
	line = strings.Count(before, "\n") + 1
	return line, off - strings.LastIndex(before, "\n")
}

var trailingCommaRe = regexp.MustCompile(`,(\s*[}\]])`)

// stripJSONC removes // and /* */ comments outside strings, then commas
// before a closing bracket.
func stripJSONC(src string) string {
	var b bytes.Buffer
	inString := false
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case inString:
			b.WriteByte(c)
			if c == '\\' && i+1 < len(src) {
				i++
				b.WriteByte(src[i])
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
			b.WriteByte(c)
		case strings.HasPrefix(src[i:], "//"):
			for i < len(src) && src[i] != '\n' {
				i++
			}
			b.WriteByte('\n')
		case strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return src // unclosed comment: let the parser say so
			}
			i += end + 3
		default:
			b.WriteByte(c)
		}
	}
	return trailingCommaRe.ReplaceAllString(b.String(), "$1")
}

// checkYAML parses every document of the block.
func checkYAML(src string) error {
	dec := yaml.NewDecoder(strings.NewReader(src))
	for {
		var v any
		err := dec.Decode(&v)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("is not valid YAML: %s", strings.TrimPrefix(err.Error(), "yaml: "))
		}
	}
}

// citeRe is agent.Citations' [n] plus the grouped [n, m] some models
// write: a grouped marker is a citation too (and may be a wrong one), even
// though lore does not link it.
var citeRe = regexp.MustCompile(`\[(\d{1,3}(?:\s*[,;]\s*\d{1,3})*)\]`)

// citedNumbers lists the distinct source numbers an answer cites, in
// order of first use, read as agent.Citations reads them (not in code, not
// an index), and whether any marker was grouped.
func citedNumbers(answer string) (nums []int, grouped bool) {
	prose := mdcode.Prose(answer)
	seen := map[int]bool{}
	for _, m := range citeRe.FindAllStringSubmatchIndex(prose, -1) {
		if agent.IsIndex(prose[:m[0]]) {
			continue
		}
		parts := strings.FieldsFunc(prose[m[2]:m[3]], func(r rune) bool { return r == ',' || r == ';' || r == ' ' })
		grouped = grouped || len(parts) > 1
		for _, p := range parts {
			n, _ := strconv.Atoi(p)
			if !seen[n] {
				seen[n] = true
				nums = append(nums, n)
			}
		}
	}
	return nums, grouped
}

// citations scores the answer's markers. Markers inside code are not
// citations. cited_gold asks whether the cited sources are the right
// ones: a source counts when its path matches a gold path and its lines
// overlap the gold lines, so citing the right file at the wrong place is
// a miss; a web page is never gold.
func (s *scorer) citations(q Question, r agent.Result) {
	nums, grouped := citedNumbers(r.Answer)
	if len(nums) == 0 {
		// An answer that claims something and cites nothing is not
		// grounded as lore promises: it scores 0, or a model that never
		// cites would beat one that cites 9 of 10 right.
		if (r.Route == agent.RouteDocs || r.Route == agent.RouteWeb) && strings.TrimSpace(r.Answer) != "" && !IsRefusal(r.Answer) {
			s.scores[MetricCitations] = 0
			s.note(MetricCitations, "the answer cites no source")
		}
		return
	}
	byN := map[int]agent.Source{}
	for _, src := range r.Sources {
		byN[src.N] = src
	}
	var cited []agent.Source
	for _, n := range nums {
		src, ok := byN[n]
		if !ok {
			s.note(MetricCitations, "[%d] points at no source (%d given)", n, len(r.Sources))
			continue
		}
		cited = append(cited, src)
	}
	s.scores[MetricCitations] = share(len(cited), len(nums))
	if grouped {
		s.note(MetricCitations, "grouped markers like [1, 2] are not linked by lore; the prompt asks for [1][2]")
	}
	if !q.IsAnswerable() || len(q.Gold) == 0 || len(cited) == 0 {
		return
	}
	gold := 0
	for _, src := range cited {
		if src.URL == "" && q.Overlaps(src.Path, src.Start, src.End) {
			gold++
			continue
		}
		s.note(MetricCitedGold, "[%d] %s is not a gold passage", src.N, src.Label())
	}
	s.scores[MetricCitedGold] = share(gold, len(cited))
}
