package eval

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
)

// Verdicts, by global score.
const (
	Excellent    = "EXCELLENT"    // ≥ 0.80
	Acceptable   = "ACCEPTABLE"   // ≥ 0.60
	Insufficient = "INSUFFICIENT" // below
)

// Verdict names a global score.
func Verdict(score float64) string {
	switch {
	case score >= 0.80:
		return Excellent
	case score >= 0.60:
		return Acceptable
	}
	return Insufficient
}

// Report is a whole run.
type Report struct {
	K       int  `json:"k"`
	Answers bool `json:"answers"`
	Judged  bool `json:"judged"`
	// Total is the number of questions in the set; a run cut short by
	// Ctrl+C holds fewer outcomes and says Interrupted.
	Total       int           `json:"total"`
	Interrupted bool          `json:"interrupted,omitempty"`
	Setups      []SetupReport `json:"setups"`
}

// Main is the report of the setup that decides the verdict.
func (r *Report) Main() *SetupReport { return &r.Setups[0] }

// SetupReport is one setup's outcomes and their means.
type SetupReport struct {
	Setup     Setup              `json:"setup"`
	Overall   Summary            `json:"overall"`
	ByKind    map[string]Summary `json:"by_kind"`
	Questions []Outcome          `json:"questions"`
}

// Summary is the mean of each metric over the questions it ran on, and the
// global score: the mean of those means.
type Summary struct {
	N       int                `json:"n"`
	Errors  int                `json:"errors"`
	Metrics map[string]float64 `json:"metrics"`
	Count   map[string]int     `json:"count"` // questions each metric ran on
	Score   float64            `json:"score"`
	Verdict string             `json:"verdict"`
}

func (sr *SetupReport) summarise() {
	sr.ByKind = map[string]Summary{}
	byKind := map[string][]Outcome{}
	for _, o := range sr.Questions {
		byKind[o.Kind] = append(byKind[o.Kind], o)
	}
	sr.Overall = Summarise(sr.Questions)
	for k, os := range byKind {
		sr.ByKind[k] = Summarise(os)
	}
}

// Summarise averages outcomes: each metric over the questions it ran on.
func Summarise(os []Outcome) Summary {
	s := Summary{N: len(os), Metrics: map[string]float64{}, Count: map[string]int{}}
	for _, o := range os {
		if o.Err != "" {
			s.Errors++
		}
		for m, v := range o.Scores {
			s.Metrics[m] += v
			s.Count[m]++
		}
	}
	for m := range s.Metrics {
		s.Metrics[m] /= float64(s.Count[m])
		s.Score += s.Metrics[m]
	}
	if len(s.Metrics) > 0 {
		s.Score /= float64(len(s.Metrics))
	}
	s.Verdict = Verdict(s.Score)
	return s
}

// metricOrder is the order of columns: retrieval, then answers, then the
// judge; a metric not listed (a future one) goes last, by name.
var metricOrder = []string{MetricHit1, MetricHit5, MetricHit10, "recall@", MetricMRR, MetricNDCG10}

func orderMetrics(ms map[string]float64, extra []string) []string {
	rank := func(m string) int {
		for i, p := range append(metricOrder, extra...) {
			if m == p || (strings.HasSuffix(p, "@") && strings.HasPrefix(m, p)) {
				return i
			}
		}
		return len(metricOrder) + len(extra)
	}
	names := make([]string, 0, len(ms))
	for m := range ms {
		names = append(names, m)
	}
	sort.Slice(names, func(i, j int) bool {
		if ri, rj := rank(names[i]), rank(names[j]); ri != rj {
			return ri < rj
		}
		return names[i] < names[j]
	})
	return names
}

// columns are the metrics any setup has, in table order.
func (r *Report) columns() []string {
	all := map[string]float64{}
	for _, sr := range r.Setups {
		for m := range sr.Overall.Metrics {
			all[m] = 0
		}
	}
	return orderMetrics(all, slices.Concat(AnswerMetrics, JudgeMetrics))
}

// WriteText writes the report as tables: per kind for the main setup, the
// setups side by side when there are several, then the global score and
// the verdict.
func (r *Report) WriteText(w io.Writer) error {
	main := r.Main()
	cols := r.columns()
	kinds := slices.Sorted(maps.Keys(main.ByKind))
	names := []string{"KIND", "all", "SETUP"}
	for _, k := range kinds {
		names = append(names, kindName(k))
	}
	for _, sr := range r.Setups {
		names = append(names, sr.Setup.String())
	}
	// Names left, numbers right: tabwriter aligns every column one way,
	// so the name column is padded here.
	nameWidth := 0
	for _, n := range names {
		nameWidth = max(nameWidth, len(n))
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	header := func(first string) {
		fmt.Fprintf(tw, "%-*s\tN\t", nameWidth, first)
		for _, c := range cols {
			fmt.Fprintf(tw, "%s\t", strings.ToUpper(c))
		}
		fmt.Fprint(tw, "SCORE\tERRORS\t\n")
	}
	row := func(name string, s Summary) {
		fmt.Fprintf(tw, "%-*s\t%d\t", nameWidth, name, s.N)
		for _, c := range cols {
			if s.Count[c] > 0 {
				fmt.Fprintf(tw, "%.3f\t", s.Metrics[c])
			} else {
				fmt.Fprint(tw, "-\t")
			}
		}
		if len(s.Metrics) > 0 {
			fmt.Fprintf(tw, "%.3f\t%d\t\n", s.Score, s.Errors)
		} else {
			fmt.Fprintf(tw, "-\t%d\t\n", s.Errors)
		}
	}
	header("KIND")
	for _, k := range kinds {
		row(kindName(k), main.ByKind[k])
	}
	row("all", main.Overall)
	if len(r.Setups) > 1 {
		fmt.Fprint(tw, "\t\n")
		header("SETUP")
		for _, sr := range r.Setups {
			row(sr.Setup.String(), sr.Overall)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return r.writeVerdict(w)
}

func kindName(k string) string {
	if k == "" {
		return "(no kind)"
	}
	return k
}

func (r *Report) writeVerdict(w io.Writer) error {
	main := r.Main().Overall
	done := ""
	if r.Interrupted {
		done = fmt.Sprintf(" (interrupted: %d of %d questions finished)", main.N, r.Total)
	}
	_, err := fmt.Fprintf(w, "\nglobal score %.3f (mean of %d metrics): %s%s\n", main.Score, len(main.Metrics), main.Verdict, done)
	return err
}

// WriteVerbose writes each question of the main setup: its rank, scores
// and notes.
func (r *Report) WriteVerbose(w io.Writer) error {
	cols := r.columns()
	for _, o := range r.Main().Questions {
		status := "miss"
		switch {
		case o.Err != "":
			status = "error"
		case !o.Answerable:
			status = "unanswerable"
		case o.Rank > 0:
			status = fmt.Sprintf("hit at %d", o.Rank)
		}
		fmt.Fprintf(w, "%s  %s  [%s]\n  %s\n", o.ID, status, o.Kind, o.Question)
		var parts []string
		for _, c := range cols {
			if v, ok := o.Scores[c]; ok {
				parts = append(parts, fmt.Sprintf("%s %.2f", c, v))
			}
		}
		if o.Best != nil {
			parts = append(parts, fmt.Sprintf("best rerank %.2f", *o.Best))
		}
		if o.Route != "" {
			parts = append(parts, "route "+o.Route)
		}
		if len(parts) > 0 {
			fmt.Fprintf(w, "  %s\n", strings.Join(parts, "  "))
		}
		for _, s := range o.Top {
			fmt.Fprintf(w, "  → %s:%d-%d\n", s.Path, s.Start, s.End)
		}
		if o.Err != "" {
			fmt.Fprintf(w, "  error: %s\n", o.Err)
		}
		for _, n := range o.Notes {
			fmt.Fprintf(w, "  %s\n", n)
		}
		if _, err := fmt.Fprintln(w); err != nil {
			return err
		}
	}
	return nil
}

// WriteMarkdown writes the report as a Markdown page to commit beside the
// question set.
func (r *Report) WriteMarkdown(w io.Writer, title string) error {
	cols := r.columns()
	main := r.Main()
	fmt.Fprintf(w, "# %s\n\n", title)
	fmt.Fprintf(w, "**%s**: global score %.3f, the mean of %d metrics over %d questions", main.Overall.Verdict, main.Overall.Score, len(main.Overall.Metrics), main.Overall.N)
	if r.Interrupted {
		fmt.Fprintf(w, " (interrupted: %d of %d finished)", main.Overall.N, r.Total)
	}
	fmt.Fprint(w, ".\n\n")
	table := func(first string, names []string, sums []Summary) {
		fmt.Fprintf(w, "| %s | N |", first)
		for _, c := range cols {
			fmt.Fprintf(w, " %s |", c)
		}
		fmt.Fprint(w, " score | errors |\n|---|---:|")
		for range cols {
			fmt.Fprint(w, "---:|")
		}
		fmt.Fprint(w, "---:|---:|\n")
		for i, s := range sums {
			fmt.Fprintf(w, "| %s | %d |", names[i], s.N)
			for _, c := range cols {
				if s.Count[c] > 0 {
					fmt.Fprintf(w, " %.3f |", s.Metrics[c])
				} else {
					fmt.Fprint(w, " – |")
				}
			}
			fmt.Fprintf(w, " %.3f | %d |\n", s.Score, s.Errors)
		}
		fmt.Fprintln(w)
	}
	var names []string
	var sums []Summary
	for _, k := range slices.Sorted(maps.Keys(main.ByKind)) {
		names, sums = append(names, kindName(k)), append(sums, main.ByKind[k])
	}
	table("kind", append(names, "**all**"), append(sums, main.Overall))
	if len(r.Setups) > 1 {
		names, sums = nil, nil
		for _, sr := range r.Setups {
			names, sums = append(names, sr.Setup.String()), append(sums, sr.Overall)
		}
		table("setup", names, sums)
	}
	fmt.Fprint(w, "## Questions\n\n| id | kind | rank | notes |\n|---|---|---:|---|\n")
	for _, o := range main.Questions {
		notes := strings.Join(o.Notes, "; ")
		if o.Err != "" {
			notes = "error: " + o.Err
		}
		rank := "–"
		if o.Answerable {
			rank = fmt.Sprint(o.Rank)
		}
		_, err := fmt.Fprintf(w, "| %s | %s | %s | %s |\n", mdCell(o.ID), mdCell(o.Kind), rank, mdCell(notes))
		if err != nil {
			return err
		}
	}
	return nil
}

// mdCell keeps text inside its table cell.
func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}
