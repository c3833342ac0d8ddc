package eval

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// ConfigKey is the setting calibration tunes.
const ConfigKey = "web-fallback-threshold"

// Why calibration recommends nothing (Calibration.Problem wraps one).
var (
	// ErrNoScores: no question has a rerank score, so routing ran on
	// retrieval agreement, a yes/no signal with no threshold to set.
	ErrNoScores = errors.New("no rerank scores")
	// ErrNoUnanswerable: without unanswerable questions every threshold
	// below the answerable scores looks perfect.
	ErrNoUnanswerable = errors.New("no unanswerable questions")
	// ErrNoAnswerable: without answerable questions F1 is 0 everywhere.
	ErrNoAnswerable = errors.New("no answerable questions")
	// ErrNoSignal: no answerable question has a score (nothing was
	// retrieved for any), so no threshold answers one from the docs.
	ErrNoSignal = errors.New("no answerable question has a rerank score")
)

// Sample is one question's routing signals from an eval run.
type Sample struct {
	ID         string
	Answerable bool
	// Best is the best rerank logit; nil when there is none: nothing was
	// retrieved, or no reranker ran. A question without one never
	// answers from the docs, whatever the threshold.
	Best *float64
	// Agree is the retrieval-agreement signal that routes a question
	// when there is no reranker (agent.route).
	Agree bool
}

// Counts is a confusion matrix where the positive class is "answered from
// the documents": answerable questions should be, unanswerable ones not.
type Counts struct {
	RightlyAnswered int `json:"rightly_answered"` // answerable, answered from the docs (TP)
	WronglyLeft     int `json:"wrongly_left"`     // answerable, sent to the web or "not in the docs" (FN)
	WronglyAnswered int `json:"wrongly_answered"` // unanswerable, answered from the docs (FP)
	RightlyLeft     int `json:"rightly_left"`     // unanswerable, sent away (TN)
}

func (c *Counts) add(answerable, fromDocs bool) {
	switch {
	case answerable && fromDocs:
		c.RightlyAnswered++
	case answerable:
		c.WronglyLeft++
	case fromDocs:
		c.WronglyAnswered++
	default:
		c.RightlyLeft++
	}
}

// Precision is the share of questions answered from the docs that should
// have been (0 when none was).
func (c Counts) Precision() float64 {
	return ratio(c.RightlyAnswered, c.RightlyAnswered+c.WronglyAnswered)
}

// Recall is the share of answerable questions answered from the docs.
func (c Counts) Recall() float64 { return ratio(c.RightlyAnswered, c.RightlyAnswered+c.WronglyLeft) }

// F1 is the harmonic mean of precision and recall, computed from the counts
// so that equal F1s compare equal: 2TP / (2TP + FP + FN).
func (c Counts) F1() float64 {
	return ratio(2*c.RightlyAnswered, 2*c.RightlyAnswered+c.WronglyAnswered+c.WronglyLeft)
}

// Accuracy is the share of questions routed the right way.
func (c Counts) Accuracy() float64 {
	right := c.RightlyAnswered + c.RightlyLeft
	return ratio(right, right+c.WronglyAnswered+c.WronglyLeft)
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// Point is one threshold of the sweep. Every threshold in (lower, upper],
// between two adjacent distinct scores, routes every question the same way;
// Threshold is the one shown for it.
type Point struct {
	Threshold float64 `json:"threshold"`
	// Text is Threshold as it goes in the config file: two decimals,
	// more only when needed to stay between the scores either side.
	Text string `json:"text"`
	Counts
	F1 float64 `json:"f1"`

	lower, upper float64 // -Inf and +Inf at the ends
}

func (p Point) contains(t float64) bool { return t > p.lower && t <= p.upper }

// Calibration is the sweep of web-fallback-threshold over a question set and
// its recommendation.
type Calibration struct {
	// Scored is false when no question had a rerank score: then routing
	// ran on retrieval agreement and only Agreement is filled in.
	Scored bool `json:"scored"`
	// Points is the sweep in ascending order: below every score, between
	// each two adjacent distinct scores, above every score.
	Points []Point `json:"points,omitempty"`
	// Recommended indexes Points (its Threshold is the recommendation),
	// -1 when there is none; Current indexes the point that routes like
	// the configured threshold (-1 without scores).
	Recommended int `json:"recommended"`
	Current     int `json:"current"`
	// CurrentThreshold is the configured threshold, and CurrentCounts how
	// it routes the questions.
	CurrentThreshold float64 `json:"current_threshold"`
	// Value is the recommended threshold as config text; empty when
	// nothing is recommended, and then Problem says why.
	Value   string   `json:"value,omitempty"`
	Problem error    `json:"-"`
	Notes   []string `json:"notes,omitempty"`
	// Answerable and Unanswerable are the best scores of each class,
	// ascending; Unscored counts the questions without one.
	Answerable   []float64 `json:"answerable"`
	Unanswerable []float64 `json:"unanswerable"`
	Unscored     [2]int    `json:"unscored"` // [answerable, unanswerable]
	// Agreement is how retrieval agreement routed the questions; it is
	// what routing used when Scored is false.
	Agreement Counts `json:"agreement"`

	hint string // how to get a reranker (Calibrate's hint)
}

// CurrentPoint is how the configured threshold routes the questions, with
// Threshold set to it (ok is false without scores).
func (c Calibration) CurrentPoint() (Point, bool) {
	if c.Current < 0 {
		return Point{}, false
	}
	p := c.Points[c.Current]
	p.Threshold, p.Text = c.CurrentThreshold, fmtExact(c.CurrentThreshold)
	return p, true
}

// RecommendedPoint is the recommendation (ok is false when there is none).
func (c Calibration) RecommendedPoint() (Point, bool) {
	if c.Recommended < 0 {
		return Point{}, false
	}
	return c.Points[c.Recommended], true
}

// ConfigLine is the line to put in the config file, "" when nothing is
// recommended.
func (c Calibration) ConfigLine() string {
	if c.Value == "" {
		return ""
	}
	return ConfigKey + ": " + c.Value
}

// fewPerClass is the class size under which a recommendation carries a
// warning: a handful of questions moves the threshold a long way.
const fewPerClass = 10

// Calibrate sweeps the threshold over the samples' best rerank scores and
// recommends the one with the best F1 ("answered from the docs" is the
// positive class), given the threshold configured now.
//
// Ties: F1 is often best over a run of adjacent points (a plateau), and
// sometimes over several runs. Every threshold in a plateau routes the set
// equally well, so the recommendation is the middle of the widest plateau
// in score units: the threshold with the widest margin to the nearest
// score that would change a decision, the one least likely to flip on
// questions like these. Equally wide plateaus go to the one nearer the
// current threshold (the smaller change), then to the lower one.
//
// Nothing is recommended (Problem says why, Value is empty) when the set
// cannot show a threshold: without unanswerable questions F1 is best for
// any threshold below every answerable score, so it would recommend turning
// the web fallback off on the evidence of a set that never tried it; that
// is an artefact of the set, not a finding, and is reported as such
// (ErrNoUnanswerable) with the current threshold's misses still shown.
// Without answerable questions (ErrNoAnswerable), or none with a score
// (ErrNoSignal), F1 is 0 everywhere. Without any score (ErrNoScores),
// routing ran on retrieval agreement, a yes/no signal with nothing to
// tune: its confusion counts are in Agreement.
//
// The error is for input that is not a question set's: no samples, or a
// score that is not a finite number.
//
// hint says how to get a reranker, the one thing that makes routing
// tunable: the caller's, which knows the backend lore reranks on here
// (app.ModelHint: the pure-Go backend is told of a smaller model).
func Calibrate(samples []Sample, current float64, hint string) (Calibration, error) {
	c := Calibration{Recommended: -1, Current: -1, CurrentThreshold: current, hint: hint}
	if len(samples) == 0 {
		return c, errors.New("calibrate: no questions")
	}
	if math.IsNaN(current) || math.IsInf(current, 0) {
		return c, fmt.Errorf("calibrate: current threshold %v is not a number", current)
	}
	var answerable, unanswerable int
	for _, s := range samples {
		c.Agreement.add(s.Answerable, s.Agree)
		class := 0
		if s.Answerable {
			answerable++
		} else {
			unanswerable++
			class = 1
		}
		switch {
		case s.Best == nil:
			c.Unscored[class]++
		case math.IsNaN(*s.Best) || math.IsInf(*s.Best, 0):
			return c, fmt.Errorf("calibrate: question %s: rerank score %v is not a number", s.ID, *s.Best)
		case s.Answerable:
			c.Answerable = append(c.Answerable, *s.Best)
		default:
			c.Unanswerable = append(c.Unanswerable, *s.Best)
		}
	}
	slices.Sort(c.Answerable)
	slices.Sort(c.Unanswerable)

	scores := slices.Concat(c.Answerable, c.Unanswerable)
	if len(scores) == 0 {
		c.Problem = fmt.Errorf("%w: no question has one (no reranker ran, or nothing was retrieved); "+
			"routing used retrieval agreement, a yes/no signal with no threshold to set: there is nothing to tune; "+
			"to calibrate, install a reranker: %s", ErrNoScores, hint)
		c.noteClasses(answerable, unanswerable)
		return c, nil
	}
	c.Scored = true
	c.sweep(scores)
	for i, p := range c.Points {
		if p.contains(current) {
			c.Current = i
		}
	}

	switch {
	case unanswerable == 0:
		c.Problem = fmt.Errorf("%w: F1 is best for any threshold below every answerable score, "+
			"which would turn the web fallback off on the word of a set that never tests it; "+
			`add questions the documents do not answer ("answerable": false, docs/eval.md), about as many as answerable ones`, ErrNoUnanswerable)
		return c, nil
	case answerable == 0:
		c.Problem = fmt.Errorf("%w: F1 is 0 at every threshold; add questions the documents answer, with their gold locations", ErrNoAnswerable)
		return c, nil
	case len(c.Answerable) == 0:
		c.Problem = fmt.Errorf("%w: nothing was retrieved for any of them, so every threshold sends them all away; check the index (lore index status)", ErrNoSignal)
		return c, nil
	}
	c.recommend(current)
	c.noteClasses(answerable, unanswerable)
	return c, nil
}

// sweep fills Points: one per interval between adjacent distinct scores.
func (c *Calibration) sweep(scores []float64) {
	slices.Sort(scores)
	distinct := slices.Compact(scores)
	lo, hi := ends(distinct)
	for i := 0; i <= len(distinct); i++ {
		p := Point{lower: math.Inf(-1), upper: math.Inf(1)}
		if i > 0 {
			p.lower = distinct[i-1]
		}
		if i < len(distinct) {
			p.upper = distinct[i]
		}
		switch {
		case i == 0:
			p.Threshold = lo
		case i == len(distinct):
			p.Threshold = hi
		default:
			p.Threshold = p.lower + (p.upper-p.lower)/2
		}
		p.Text, p.Threshold = formatWithin(p.Threshold, p.lower, p.upper)
		p.Counts = c.countAt(p.Threshold)
		p.F1 = p.Counts.F1()
		c.Points = append(c.Points, p)
	}
}

// countAt routes the questions at threshold t: a score at least t answers
// from the docs, a question without one never does.
func (c *Calibration) countAt(t float64) Counts {
	a, _ := slices.BinarySearch(c.Answerable, t) // how many are below t
	u, _ := slices.BinarySearch(c.Unanswerable, t)
	return Counts{
		RightlyAnswered: len(c.Answerable) - a,
		WronglyLeft:     a + c.Unscored[0],
		WronglyAnswered: len(c.Unanswerable) - u,
		RightlyLeft:     u + c.Unscored[1],
	}
}

// ends are the thresholds shown below and above every score: whole numbers
// at least half a logit away.
func ends(distinct []float64) (lo, hi float64) {
	return math.Floor(distinct[0] - 0.5), math.Ceil(distinct[len(distinct)-1] + 0.5)
}

// recommend picks the middle of the widest best-F1 plateau (see Calibrate).
func (c *Calibration) recommend(current float64) {
	best := 0.0
	for _, p := range c.Points {
		best = max(best, p.F1)
	}
	lo, hi := c.Points[0].Threshold, c.Points[len(c.Points)-1].Threshold
	finite := func(x float64) float64 { return min(max(x, lo), hi) }
	type plateau struct {
		first, last  int
		lower, upper float64 // the scores either side, or the ends
		mid          float64
	}
	var pick *plateau
	for i := 0; i < len(c.Points); i++ {
		if c.Points[i].F1 != best {
			continue
		}
		pl := plateau{first: i}
		for i+1 < len(c.Points) && c.Points[i+1].F1 == best {
			i++
		}
		pl.last = i
		pl.lower, pl.upper = finite(c.Points[pl.first].lower), finite(c.Points[pl.last].upper)
		pl.mid = pl.lower + (pl.upper-pl.lower)/2
		better := pick == nil
		if !better {
			w, pw := pl.upper-pl.lower, pick.upper-pick.lower
			d, pd := math.Abs(pl.mid-current), math.Abs(pick.mid-current)
			better = w > pw || (w == pw && d < pd)
		}
		if better {
			pick = &pl
		}
	}
	text, t := formatWithin(pick.mid, c.Points[pick.first].lower, c.Points[pick.last].upper)
	for i := pick.first; i <= pick.last; i++ {
		if c.Points[i].contains(t) {
			c.Recommended = i
			c.Points[i].Threshold, c.Points[i].Text = t, text
		}
	}
	c.Value = text

	r := c.Points[c.Recommended]
	switch {
	case c.Recommended == 0:
		c.Notes = append(c.Notes, "at this threshold every question with a score answers from the docs: "+
			"the unanswerable questions score as high as the answerable ones, so the rerank score does not tell them apart here")
	case r.WronglyLeft+r.WronglyAnswered > 0:
		var errs []string
		if r.WronglyLeft > 0 {
			errs = append(errs, "sends "+questions(r.WronglyLeft, "answerable question")+" away from the docs")
		}
		if r.WronglyAnswered > 0 {
			errs = append(errs, "answers "+questions(r.WronglyAnswered, "unanswerable one")+" from them")
		}
		c.Notes = append(c.Notes, "no threshold routes every question right; this one still "+strings.Join(errs, " and "))
	}
	if c.Current == c.Recommended {
		c.Notes = append(c.Notes, fmt.Sprintf("the current threshold %s already routes every question the same way", fmtScore(current)))
	}
}

// noteClasses warns when a class is too small to trust the numbers.
func (c *Calibration) noteClasses(answerable, unanswerable int) {
	for _, n := range []struct {
		count int
		what  string
	}{{answerable, "answerable"}, {unanswerable, "unanswerable"}} {
		if n.count > 0 && n.count < fewPerClass {
			c.Notes = append(c.Notes, fmt.Sprintf("only %s: one more or less can move the result; %d or more of each class make it steadier",
				questions(n.count, n.what+" question"), fewPerClass))
		}
	}
	if c.Scored && c.Unscored[0]+c.Unscored[1] > 0 {
		c.Notes = append(c.Notes, "nothing was retrieved for "+questions(c.Unscored[0]+c.Unscored[1], "question")+": no threshold answers from the docs there")
	}
}

// formatWithin rounds t to two decimals, or to as many more as it takes to
// stay strictly between lower and upper, both as float64 and as the float32
// the agent compares (agent.Config.Threshold). It returns the text and the
// value it reads back as. Should no rounding fit (lower and upper are
// adjacent floats), upper itself is used: a threshold equal to a score
// routes that score to the docs, as the interval (lower, upper] means.
func formatWithin(t, lower, upper float64) (string, float64) {
	ok := func(v float64) bool {
		return v > lower && v < upper && float32(v) > float32(lower) && float32(v) <= float32(upper)
	}
	for prec := 2; prec <= 12; prec++ {
		s := strconv.FormatFloat(t, 'f', prec, 64)
		v, _ := strconv.ParseFloat(s, 64)
		if ok(v) {
			if v == 0 {
				s, v = strconv.FormatFloat(0, 'f', prec, 64), 0 // no "-0.00"
			}
			return s, v
		}
	}
	return strconv.FormatFloat(upper, 'g', -1, 64), upper
}

// questions is "1 thing" or "n things".
func questions(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.Itoa(n) + " " + thing + "s"
}

// fmtScore shows a score or threshold with two decimals.
func fmtScore(x float64) string {
	s := strconv.FormatFloat(x, 'f', 2, 64)
	if s == "-0.00" {
		return "0.00"
	}
	return s
}

// fmtExact shows x with two decimals when that is exact, else in full.
func fmtExact(x float64) string {
	s := fmtScore(x)
	if v, _ := strconv.ParseFloat(s, 64); v == x {
		return s
	}
	return strconv.FormatFloat(x, 'f', -1, 64)
}
