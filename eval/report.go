package eval

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
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
	// Top5 describes the first five results; it is beside the metrics,
	// not one of them, as a mean of lines is no 0..1 score.
	Top5 *Top5 `json:"top5,omitempty"`
}

// Top5 is what a reader meets in the first five results: MRR cut at 5
// (a gold passage at rank 6 or below counts 0) and the mean length, in
// lines, of a result (over all the top-5 results of every question).
type Top5 struct {
	MRR       float64 `json:"mrr@5"`
	MeanLines float64 `json:"mean_lines"`
}

// MarshalJSON writes score and verdict as null when no metric ran: a 0
// would read as a failure.
func (s Summary) MarshalJSON() ([]byte, error) {
	type plain Summary
	out := struct {
		plain
		Score   *float64 `json:"score"`
		Verdict *string  `json:"verdict"`
	}{plain: plain(s)}
	if len(s.Metrics) > 0 {
		out.Score, out.Verdict = &s.Score, &s.Verdict
	}
	return json.Marshal(out)
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
	var rr float64
	var ranked, results, lines int
	for _, o := range os {
		if o.Err != "" {
			s.Errors++
		}
		// Both run on the questions hit@5 runs on, as the baseline's do
		// (it has no unanswerable questions to rank).
		if _, ok := o.Scores[MetricHit5]; ok {
			ranked++
			if o.Rank >= 1 && o.Rank <= 5 {
				rr += 1 / float64(o.Rank)
			}
			for _, n := range o.Lines {
				results++
				lines += n
			}
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
		s.Verdict = Verdict(s.Score)
	}
	if ranked > 0 {
		s.Top5 = &Top5{MRR: rr / float64(ranked)}
		if results > 0 {
			s.Top5.MeanLines = float64(lines) / float64(results)
		}
	}
	return s
}

// String is the summary line of the top 5, "" when no question was ranked.
func (t *Top5) String() string {
	if t == nil {
		return ""
	}
	return fmt.Sprintf("top 5: MRR@5 %.3f, mean %.1f lines per result", t.MRR, t.MeanLines)
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
// the verdict. A table wider than width (0: no limit) is cut into blocks
// of columns that fit, each led by the names, so nothing wraps mid-row.
func (r *Report) WriteText(w io.Writer, width int) error {
	main := r.Main()
	cols := r.columns()
	header := func(first string) []string {
		row := []string{first, "N"}
		for _, c := range cols {
			row = append(row, strings.ToUpper(c))
		}
		return append(row, "SCORE", "ERRORS")
	}
	row := func(name string, s Summary) []string {
		row := []string{name, fmt.Sprint(s.N)}
		for _, c := range cols {
			if s.Count[c] > 0 {
				row = append(row, fmt.Sprintf("%.3f", s.Metrics[c]))
			} else {
				row = append(row, "-")
			}
		}
		score := "-"
		if len(s.Metrics) > 0 {
			score = fmt.Sprintf("%.3f", s.Score)
		}
		return append(row, score, fmt.Sprint(s.Errors))
	}
	grid := [][]string{header("KIND")}
	for _, k := range slices.Sorted(maps.Keys(main.ByKind)) {
		grid = append(grid, row(kindName(k), main.ByKind[k]))
	}
	grid = append(grid, row("all", main.Overall))
	if len(r.Setups) > 1 {
		grid = append(grid, nil, header("SETUP"))
		for _, sr := range r.Setups {
			grid = append(grid, row(sr.Setup.String(), sr.Overall))
		}
	}
	b := bufio.NewWriter(w)
	writeGrid(b, grid, width)
	if t := main.Overall.Top5; t != nil {
		fmt.Fprintf(b, "\n%s", Wrap(t.String(), width, ""))
	}
	fmt.Fprintf(b, "\n%s\n", Wrap(r.verdictLine(), width, ""))
	return b.Flush()
}

// writeGrid writes rows of cells in columns two spaces apart, indented by
// two, the first column left-aligned and the others right-aligned; a nil
// row is a blank line. Columns that do not fit in width go to further
// blocks below, each repeating the first column.
func writeGrid(w io.Writer, grid [][]string, width int) {
	var widths []int
	for _, row := range grid {
		for i, cell := range row {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], len(cell))
		}
	}
	if len(widths) == 0 {
		return
	}
	const indent, gap = 2, 2
	for from := 1; ; {
		to, used := from, indent+widths[0]
		for to < len(widths) && (to == from || width <= 0 || used+gap+widths[to] <= width) {
			used += gap + widths[to]
			to++
		}
		for _, row := range grid {
			if row == nil {
				fmt.Fprintln(w)
				continue
			}
			line := strings.Repeat(" ", indent) + fmt.Sprintf("%-*s", widths[0], row[0])
			for i := from; i < to && i < len(row); i++ {
				line += strings.Repeat(" ", gap) + fmt.Sprintf("%*s", widths[i], row[i])
			}
			fmt.Fprintln(w, line)
		}
		if to >= len(widths) {
			return
		}
		fmt.Fprintln(w)
		from = to
	}
}

func kindName(k string) string {
	if k == "" {
		return "(no kind)"
	}
	return k
}

func (r *Report) verdictLine() string {
	main := r.Main().Overall
	done := ""
	if r.Interrupted {
		done = fmt.Sprintf(" (interrupted: %d of %d questions finished)", main.N, r.Total)
	}
	if len(main.Metrics) == 0 {
		return "no metric ran: no global score" + done
	}
	return fmt.Sprintf("global score %.3f (mean of %d metrics): %s%s", main.Score, len(main.Metrics), main.Verdict, done)
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
	if len(main.Overall.Metrics) == 0 {
		fmt.Fprintf(w, "No metric ran over the %d questions: no global score", main.Overall.N)
	} else {
		fmt.Fprintf(w, "**%s**: global score %.3f, the mean of %d metrics over %d questions", main.Overall.Verdict, main.Overall.Score, len(main.Overall.Metrics), main.Overall.N)
	}
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
			score := "–"
			if len(s.Metrics) > 0 {
				score = fmt.Sprintf("%.3f", s.Score)
			}
			fmt.Fprintf(w, " %s | %d |\n", score, s.Errors)
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
