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
// that fits width columns (at least 60 are used): the sweep as a table, both
// score distributions as a histogram with the thresholds drawn across it,
// and the recommendation with its config line, or why there is none.
func (c Calibration) WriteText(w io.Writer, width int) error {
	width = max(width, 60)
	b := bufio.NewWriter(w)
	answerable := len(c.Answerable) + c.Unscored[0]
	unanswerable := len(c.Unanswerable) + c.Unscored[1]
	fmt.Fprintf(b, "Calibration of %s (routing answers from the docs when the best rerank logit is at least it)\n", ConfigKey)
	fmt.Fprintf(b, "%d questions: %d answerable, %d unanswerable", answerable+unanswerable, answerable, unanswerable)
	if n := c.Unscored[0] + c.Unscored[1]; n > 0 && c.Scored {
		fmt.Fprintf(b, "; %d without a rerank score (nothing retrieved: they never answer from the docs)", n)
	}
	fmt.Fprintln(b)

	if !c.Scored {
		c.writeAgreement(b, width)
	} else {
		fmt.Fprintln(b)
		c.writeTable(b)
		fmt.Fprintln(b)
		c.writeHistogram(b, width)
		fmt.Fprintln(b)
		c.writeVerdict(b, width)
	}
	for _, n := range c.Notes {
		fmt.Fprintln(b, wrap("note: "+n, width, "  "))
	}
	return b.Flush()
}

func (c Calibration) writeAgreement(b *bufio.Writer, width int) {
	a := c.Agreement
	fmt.Fprintln(b)
	fmt.Fprintln(b, "No question has a rerank score, so routing ran on retrieval agreement (the best passage")
	fmt.Fprintln(b, "found by both keyword and vector search). It is a yes/no signal with no threshold to set:")
	fmt.Fprintln(b, "there is nothing to calibrate. How it routed this set:")
	fmt.Fprintln(b)
	fmt.Fprintf(b, "  %-20s %18s %15s\n", "", "answered from docs", "left the docs")
	fmt.Fprintf(b, "  %-20s %18d %15d\n", fmt.Sprintf("answerable (%d)", a.RightlyAnswered+a.WronglyLeft), a.RightlyAnswered, a.WronglyLeft)
	fmt.Fprintf(b, "  %-20s %18d %15d\n", fmt.Sprintf("unanswerable (%d)", a.WronglyAnswered+a.RightlyLeft), a.WronglyAnswered, a.RightlyLeft)
	fmt.Fprintln(b)
	fmt.Fprintf(b, "accuracy %.2f, precision %.2f, recall %.2f, F1 %.2f\n", a.Accuracy(), a.Precision(), a.Recall(), a.F1())
	fmt.Fprintln(b, wrap(fmt.Sprintf("%d answerable question(s) wrongly left the docs; %d unanswerable one(s) were wrongly answered from them.",
		a.WronglyLeft, a.WronglyAnswered), width, ""))
	fmt.Fprintln(b, wrap("To get a threshold to tune, install a reranker: "+ModelHint+", then run this again.", width, ""))
}

func (c Calibration) writeTable(b *bufio.Writer) {
	cur, _ := c.CurrentPoint()
	type row struct {
		text string
		p    Point
		mark string
	}
	rows := make([]row, len(c.Points))
	for i, p := range c.Points {
		rows[i] = row{text: p.Text, p: p}
		switch {
		case i == c.Recommended && i == c.Current:
			rows[i].mark = "<- recommended (current " + cur.Text + " routes the same)"
		case i == c.Recommended:
			rows[i].mark = "<- recommended"
		case i == c.Current:
			rows[i].text, rows[i].mark = cur.Text, "<- current"
		}
	}
	tw := len("threshold")
	for _, r := range rows {
		tw = max(tw, len(r.text))
	}
	fmt.Fprintf(b, "%*s  %10s  %12s  %9s  %6s  %4s\n", tw, "threshold", "answerable", "unanswerable", "precision", "recall", "F1")
	fmt.Fprintf(b, "%*s  %10s  %12s\n", tw, "", "sent away", "answered")
	last := -1
	for _, i := range shownRows(len(rows), c.Recommended, c.Current) {
		if last >= 0 && i > last+1 {
			fmt.Fprintf(b, "%*s\n", tw, "...")
		}
		last = i
		r := rows[i]
		prec := "-"
		if r.p.RightlyAnswered+r.p.WronglyAnswered > 0 {
			prec = fmt.Sprintf("%.2f", r.p.Precision())
		}
		line := fmt.Sprintf("%*s  %10d  %12d  %9s  %6.2f  %4.2f  %s", tw, r.text, r.p.WronglyLeft, r.p.WronglyAnswered, prec, r.p.Recall(), r.p.F1, r.mark)
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
	labels := make([]string, h.n)
	lw := len("score")
	for j := range labels {
		labels[j] = fmt.Sprintf("%s .. %s", fmtScore(h.edge(j)), fmtScore(h.edge(j+1)))
		lw = max(lw, len(labels[j]))
	}
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
	fmt.Fprintf(b, "Best rerank score per question, %s per row (# answerable, o unanswerable):\n", fmtScore(h.width))
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
		fmt.Fprintln(b, wrap(fmt.Sprintf("No recommendation: %v.", c.Problem), width, "  "))
		fmt.Fprintln(b, wrap(fmt.Sprintf("Now, at %s: %d answerable question(s) leave the docs, %d unanswerable one(s) are answered from them (F1 %.2f).",
			cur.Text, cur.WronglyLeft, cur.WronglyAnswered, cur.F1), width, "  "))
		return
	}
	fmt.Fprintf(b, "Recommended: %s (best F1 %.2f; the current %s has %.2f)\n", rec.Text, rec.F1, cur.Text, cur.F1)
	fmt.Fprintf(b, "  answerable questions sent away from the docs:  %d of %d (now %d)\n",
		rec.WronglyLeft, rec.RightlyAnswered+rec.WronglyLeft, cur.WronglyLeft)
	fmt.Fprintf(b, "  unanswerable questions answered from the docs: %d of %d (now %d)\n",
		rec.WronglyAnswered, rec.WronglyAnswered+rec.RightlyLeft, cur.WronglyAnswered)
	fmt.Fprintf(b, "Config line:\n  %s\n", c.ConfigLine())
}

// wrap breaks s into lines of at most width columns, indenting the
// continuation lines.
func wrap(s string, width int, indent string) string {
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
