// Package eval measures lore on a question set: retrieval metrics from the
// one search path every turn uses, answer metrics from the one agent every
// front end runs, optional judge metrics from a second Ollama model, and the
// calibration of the threshold that sends a question to the web. It imports
// the agent's types and nothing of the engine: cmd/lore hands it an Engine.
package eval

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Gold is where an answer lies: lines [Lines[0], Lines[1]] (1-based,
// inclusive) of Path, relative to the indexed folder.
type Gold struct {
	Path    string `json:"path"`
	Section string `json:"section,omitempty"`
	Lines   [2]int `json:"lines"`
}

// Question is one line of a question set (docs/eval.md).
type Question struct {
	ID             string   `json:"id"`
	Question       string   `json:"question"`
	Gold           []Gold   `json:"gold"`
	AnswerKeywords []string `json:"answer_keywords"`
	Kind           string   `json:"kind"`
	// Answerable is false for a question the documents cannot answer;
	// missing means true.
	Answerable *bool `json:"answerable,omitempty"`

	Line    int      `json:"-"` // in the file it was read from
	Unknown []string `json:"-"` // fields of the line the format does not have
}

// fields are the names a question line may use: Question's JSON names.
var fields = func() map[string]bool {
	m := map[string]bool{}
	for f := range reflect.TypeFor[Question]().Fields() {
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
			m[name] = true
		}
	}
	return m
}()

// IsAnswerable reports whether the documents are meant to answer q.
func (q Question) IsAnswerable() bool { return q.Answerable == nil || *q.Answerable }

// Overlaps reports whether lines start..end of path overlap a gold range.
func (q Question) Overlaps(path string, start, end int) bool {
	for _, g := range q.Gold {
		if g.Path == path && start <= g.Lines[1] && end >= g.Lines[0] {
			return true
		}
	}
	return false
}

// ErrDataset marks a question set that cannot be read as one.
var ErrDataset = errors.New("question set")

// ReadFile reads a question set; see Read.
func ReadFile(path string) ([]Question, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrDataset, err)
	}
	defer f.Close()
	return Read(f, path)
}

// Read parses JSONL, one question a line; blank lines are skipped. A line
// that is not a question stops the read with its file and line number.
func Read(r io.Reader, name string) ([]Question, error) {
	var qs []Question
	seen := map[string]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		var q Question
		dec := json.NewDecoder(strings.NewReader(text))
		if err := dec.Decode(&q); err != nil {
			return nil, fmt.Errorf("%w %s:%d: not a JSON question: %w (format: docs/eval.md)", ErrDataset, name, line, err)
		}
		var names map[string]json.RawMessage
		if json.Unmarshal([]byte(text), &names) == nil {
			for k := range names {
				if !fields[k] {
					q.Unknown = append(q.Unknown, k)
				}
			}
			slices.Sort(q.Unknown)
		}
		q.Line = line
		if err := q.check(); err != nil {
			return nil, fmt.Errorf("%w %s:%d: %w (format: docs/eval.md)", ErrDataset, name, line, err)
		}
		if q.ID == "" {
			q.ID = fmt.Sprintf("line-%d", line)
		}
		if prev, dup := seen[q.ID]; dup {
			return nil, fmt.Errorf("%w %s:%d: id %q is already used on line %d", ErrDataset, name, line, q.ID, prev)
		}
		seen[q.ID] = line
		qs = append(qs, q)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrDataset, name, err)
	}
	if len(qs) == 0 {
		return nil, fmt.Errorf("%w %s: no questions in it (format: docs/eval.md)", ErrDataset, name)
	}
	return qs, nil
}

func (q Question) check() error {
	if strings.TrimSpace(q.Question) == "" {
		return errors.New(`"question" is missing or empty`)
	}
	if q.IsAnswerable() && len(q.Gold) == 0 {
		return errors.New(`an answerable question needs "gold" locations (or "answerable": false)`)
	}
	for _, g := range q.Gold {
		if g.Path == "" {
			return errors.New(`a gold location has no "path"`)
		}
		if g.Lines[0] < 1 || g.Lines[1] < g.Lines[0] {
			return fmt.Errorf(`gold %s: "lines" must be [first, last], 1-based, first <= last`, g.Path)
		}
	}
	return nil
}

// UnknownFields names, a line each, the fields of qs that are not part of
// the format: they are ignored, and a typo such as "answer_keyword" would
// otherwise quietly score nothing.
func UnknownFields(qs []Question, name string) []string {
	lines := map[string][]string{}
	var order []string
	for _, q := range qs {
		for _, k := range q.Unknown {
			if lines[k] == nil {
				order = append(order, k)
			}
			lines[k] = append(lines[k], strconv.Itoa(q.Line))
		}
	}
	var out []string
	for _, k := range order {
		at := lines[k]
		where := "line " + at[0]
		if len(at) > 1 {
			where = "lines " + strings.Join(at[:min(len(at), 5)], ", ")
			if len(at) > 5 {
				where += fmt.Sprintf(" and %d more", len(at)-5)
			}
		}
		out = append(out, fmt.Sprintf("%s: field %q (%s) is not part of the format and is ignored (docs/eval.md)", name, k, where))
	}
	return out
}

// UnknownGold are the gold paths of qs that known does not hold, each
// once, in the order they first appear: paths relative to another folder
// than the one indexed score 0 on every question, so a run names them.
func UnknownGold(qs []Question, known func(path string) bool) []string {
	seen := map[string]bool{}
	var out []string
	for _, q := range qs {
		for _, g := range q.Gold {
			if !seen[g.Path] && !known(g.Path) {
				out = append(out, g.Path)
			}
			seen[g.Path] = true
		}
	}
	return out
}
