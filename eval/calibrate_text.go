package eval

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// tableRows is how many sweep rows the text table shows at most; the rest
// are elided, never the current or the recommended threshold's.
const tableRows = 15

// histRows is about how many rows the text histogram has.
const histRows = 16

// WriteText writes the calibration for a terminal or a file, in plain text
// that fits width columns (at least 72 are used): the sweep as a table, both
// score distributions as a histogram with the thresholds drawn across it,
// and the recommendation with its config line, or why there is none.
func (c Calibration) WriteText(w io.Writer, width int) error {
	width = max(width, 72)
	b := bufio.NewWriter(w)
	answerable := len(c.Answerable) + c.Unscored[0]
	unanswerable := len(c.Unanswerable) + c.Unscored[1]
	head := fmt.Sprintf("Calibration of %s: a question answers from the docs when its best rerank logit is at least the threshold.", ConfigKey)
	fmt.Fprintln(b, Wrap(head, width, ""))
	head = fmt.Sprintf("%d questions: %d answerable, %d unanswerable", answerable+unanswerable, answerable, unanswerable)
	if n := c.Unscored[0] + c.Unscored[1]; n > 0 && c.Scored {
		head += fmt.Sprintf("; %d without a rerank score (nothing retrieved, so never answered from the docs)", n)
	}
	fmt.Fprintln(b, Wrap(head+".", width, ""))
	if !c.Scored {
		c.writeAgreement(b, width)
	} else {
		fmt.Fprintln(b)
		c.writeTable(b, width)
		fmt.Fprintln(b)
		c.writeHistogram(b, width)
		fmt.Fprintln(b)
		c.writeVerdict(b, width)
	}
	for _, n := range c.Notes {
		fmt.Fprintln(b, Wrap("note: "+n, width, "  "))
	}
	return b.Flush()
}

func (c Calibration) writeAgreement(b *bufio.Writer, width int) {
	a := c.Agreement
	fmt.Fprintln(b)
	fmt.Fprintln(b, Wrap("No question has a rerank score, so routing ran on retrieval agreement (the best passage "+
		"in the top 3 of both keyword and vector search; keyword-only, with the question's words, and any name it gives, in the index and a top passage). "+
		"It is a yes/no signal with no threshold to set: "+
		"there is nothing to calibrate. How it routed this set:", width, ""))
	fmt.Fprintln(b)
	fmt.Fprintf(b, "  %-20s %18s %15s\n", "", "answered from docs", "left the docs")
	fmt.Fprintf(b, "  %-20s %18d %15d\n", fmt.Sprintf("answerable (%d)", a.RightlyAnswered+a.WronglyLeft), a.RightlyAnswered, a.WronglyLeft)
	fmt.Fprintf(b, "  %-20s %18d %15d\n", fmt.Sprintf("unanswerable (%d)", a.WronglyAnswered+a.RightlyLeft), a.WronglyAnswered, a.RightlyLeft)
	fmt.Fprintln(b)
	fmt.Fprintf(b, "accuracy %.2f, precision %.2f, recall %.2f, F1 %.2f\n", a.Accuracy(), a.Precision(), a.Recall(), a.F1())
	fmt.Fprintln(b, Wrap(fmt.Sprintf("Wrongly routed: %s sent away from the docs, %s answered from them.",
		questions(a.WronglyLeft, "answerable question"), questions(a.WronglyAnswered, "unanswerable question")), width, ""))
	fmt.Fprintln(b, Wrap("To get a threshold to tune, install a reranker: "+c.hint+", then run this again.", width, ""))
}

func (c Calibration) writeTable(b *bufio.Writer, width int) {
	cur, _ := c.CurrentPoint()
	tw := len("threshold")
	for _, p := range c.Points {
		tw = max(tw, len(p.Text))
	}
	tw = max(tw, len(cur.Text))
	const cols = 2 + 9 + 2 + 8 + 2 + 9 + 2 + 6 + 2 + 4 // after the threshold
	rec, curMark, both := "<- recommended", "<- current", "<- recommended, current"
	if tw+cols+2+len(both) > width {
		rec, curMark, both = "<- rec", "<- cur", "<- rec, cur"
	}
	fmt.Fprintln(b, Wrap("sent away: answerable questions that would leave the docs; answered: unanswerable ones that would be answered from them.", width, ""))
	fmt.Fprintf(b, "%*s  %9s  %8s  %9s  %6s  %4s\n", tw, "threshold", "sent away", "answered", "precision", "recall", "F1")
	last := -1
	for _, i := range shownRows(len(c.Points), c.Recommended, c.Current) {
		if last >= 0 && i > last+1 {
			fmt.Fprintf(b, "%*s\n", tw, "...")
		}
		last = i
		p, mark := c.Points[i], ""
		switch {
		case i == c.Recommended && i == c.Current:
			mark = both
		case i == c.Recommended:
			mark = rec
		case i == c.Current:
			p, mark = cur, curMark
		}
		prec := "-"
		if p.RightlyAnswered+p.WronglyAnswered > 0 {
			prec = fmt.Sprintf("%.2f", p.Precision())
		}
		line := fmt.Sprintf("%*s  %9d  %8d  %9s  %6.2f  %4.2f  %s", tw, p.Text, p.WronglyLeft, p.WronglyAnswered, prec, p.Recall(), p.F1, mark)
		fmt.Fprintln(b, strings.TrimRight(line, " "))
	}
}

// shownRows picks at most tableRows of n rows: both ends, the neighbourhood
// of the recommended row, the current row, and evenly spread others.
func shownRows(n, rec, cur int) []int {
	if n <= tableRows {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	keep := map[int]bool{0: true, n - 1: true}
	if cur >= 0 {
		keep[cur] = true
	}
	if rec >= 0 {
		for i := max(rec-2, 0); i <= min(rec+2, n-1); i++ {
			keep[i] = true
		}
	}
	// Fill up with ever finer even spreads until the rows are all taken.
	for m := 3; len(keep) < tableRows && m <= n; m++ {
		for k := 0; k < m && len(keep) < tableRows; k++ {
			keep[k*(n-1)/(m-1)] = true
		}
	}
	out := make([]int, 0, len(keep))
	for i := range keep {
		out = append(out, i)
	}
	slices.Sort(out)
	return out
}

func (c Calibration) writeHistogram(b *bufio.Writer, width int) {
	h := c.histogram(histRows)
	ew := 0
	for e := range h.n + 1 {
		ew = max(ew, len(fmtScore(h.edge(e))))
	}
	labels := make([]string, h.n)
	for j := range labels {
		labels[j] = fmt.Sprintf("%*s .. %*s", ew, fmtScore(h.edge(j)), ew, fmtScore(h.edge(j+1)))
	}
	lw := max(len("no score"), 2*ew+4)
	most := 1
	for _, cs := range h.counts {
		for _, n := range cs {
			most = max(most, n)
		}
	}
	nw := len(fmt.Sprint(most))
	// label | bar count | bar count
	bar := max((width-lw-2*(nw+4))/2, 5)
	col := func(glyph byte, n int) string {
		l := 0
		if n > 0 {
			l = max(1, int(math.Round(float64(n)*float64(bar)/float64(most))))
		}
		return fmt.Sprintf("%-*s %*d", bar, strings.Repeat(string(glyph), l), nw, n)
	}
	fmt.Fprintf(b, "Best rerank scores, %s per row: # answerable, o unanswerable\n", fmtScore(h.width))
	fmt.Fprintf(b, "%*s  %-*s  %s\n", lw, "score", bar+nw+1, "answerable", "unanswerable")
	rule := func(e int) {
		for _, m := range h.marks {
			if m.edge != e {
				continue
			}
			text := fmt.Sprintf(" %s ", m.label)
			pad := max(width-len(text)-lw-2, 2)
			fmt.Fprintln(b, strings.Repeat("-", lw+2)+text+strings.Repeat("-", pad))
		}
	}
	rule(h.n)
	for j := h.n - 1; j >= 0; j-- {
		line := fmt.Sprintf("%*s  %s  %s", lw, labels[j], col('#', h.counts[0][j]), col('o', h.counts[1][j]))
		fmt.Fprintln(b, strings.TrimRight(line, " "))
		rule(j)
	}
	if c.Unscored[0]+c.Unscored[1] > 0 {
		line := fmt.Sprintf("%*s  %s  %s", lw, "no score", col('#', c.Unscored[0]), col('o', c.Unscored[1]))
		fmt.Fprintln(b, strings.TrimRight(line, " "))
	}
}

func (c Calibration) writeVerdict(b *bufio.Writer, width int) {
	cur, _ := c.CurrentPoint()
	rec, ok := c.RecommendedPoint()
	if !ok {
		fmt.Fprintln(b, Wrap(fmt.Sprintf("No recommendation: %v.", c.Problem), width, "  "))
		fmt.Fprintln(b, Wrap(fmt.Sprintf("At the current %s: %s sent away from the docs, %s answered from them (F1 %.2f).",
			cur.Text, questions(cur.WronglyLeft, "answerable question"), questions(cur.WronglyAnswered, "unanswerable question"), cur.F1), width, "  "))
		return
	}
	fmt.Fprintf(b, "Recommended: %s (best F1 %.2f; the current %s has %.2f)\n", rec.Text, rec.F1, cur.Text, cur.F1)
	fmt.Fprintf(b, "  answerable questions sent away from the docs:  %d of %d (now %d)\n",
		rec.WronglyLeft, rec.RightlyAnswered+rec.WronglyLeft, cur.WronglyLeft)
	fmt.Fprintf(b, "  unanswerable questions answered from the docs: %d of %d (now %d)\n",
		rec.WronglyAnswered, rec.WronglyAnswered+rec.RightlyLeft, cur.WronglyAnswered)
	fmt.Fprintf(b, "Config line:\n  %s\n", c.ConfigLine())
}

// Wrap breaks s into lines of at most width columns, indenting the
// continuation lines; width 0 leaves s as it is (a pipe, a file).
func Wrap(s string, width int, indent string) string {
	if width <= 0 {
		return s
	}
	var out strings.Builder
	line := 0
	for i, word := range strings.Fields(s) {
		if i > 0 && line+1+len(word) > width {
			out.WriteString("\n" + indent)
			line = len(indent)
		} else if i > 0 {
			out.WriteByte(' ')
			line++
		}
		out.WriteString(word)
		line += len(word)
	}
	return out.String()
}
