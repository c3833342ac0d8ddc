package eval

import (
	"bytes"
	"errors"
	"fmt"
	"image/png"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/lore-cli/lore/rerank"
)

// set builds samples from answerable and unanswerable scores.
func set(answerable, unanswerable []float64) []Sample {
	var ss []Sample
	for i, s := range answerable {
		ss = append(ss, Sample{ID: fmt.Sprintf("a%d", i), Answerable: true, Best: &s})
	}
	for i, s := range unanswerable {
		ss = append(ss, Sample{ID: fmt.Sprintf("u%d", i), Best: &s})
	}
	return ss
}

// normal draws n scores from N(mean, sd) with a fixed seed.
func normal(seed uint64, n int, mean, sd float64) []float64 {
	r := rand.New(rand.NewPCG(seed, 7))
	out := make([]float64, n)
	for i := range out {
		out[i] = mean + sd*r.NormFloat64()
	}
	return out
}

// route counts how the agent routes ss at threshold t: it compares float32s
// (agent.run.route), and a question without a score never answers from the
// docs.
func route(ss []Sample, t float64) Counts {
	var c Counts
	for _, s := range ss {
		c.add(s.Answerable, s.Best != nil && float32(*s.Best) >= float32(t))
	}
	return c
}

func calibrate(t *testing.T, ss []Sample, current float64) Calibration {
	t.Helper()
	c, err := Calibrate(ss, current, "get one with `lore models pull "+rerank.DefaultHugotModel+"` (online) or `lore models import DIR`")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCalibrateByHand(t *testing.T) {
	// Distinct scores -1, 0.5, 0.8, 1, 2 cut the line in six; F1 = 2TP/(2TP+FP+FN):
	//   t <= -1      TP 3 FP 2 FN 0  6/8
	//   (-1, 0.5]    TP 3 FP 1 FN 0  6/7   best: middle of (-1, 0.5) is -0.25
	//   (0.5, 0.8]   TP 2 FP 1 FN 1  4/6
	//   (0.8, 1]     TP 2 FP 0 FN 1  4/5
	//   (1, 2]       TP 1 FP 0 FN 2  2/4
	//   t > 2        TP 0            0
	ss := set([]float64{2, 1, 0.5}, []float64{-1, 0.8})
	c := calibrate(t, ss, 0)
	wantF1 := []float64{6. / 8, 6. / 7, 4. / 6, 4. / 5, 2. / 4, 0}
	var gotF1 []float64
	for _, p := range c.Points {
		gotF1 = append(gotF1, p.F1)
	}
	if !slices.Equal(gotF1, wantF1) {
		t.Fatalf("F1 per point %v, want %v", gotF1, wantF1)
	}
	if c.Problem != nil || c.Value != "-0.25" || c.Recommended != 1 {
		t.Fatalf("recommended %q (point %d, problem %v), want -0.25 (point 1)", c.Value, c.Recommended, c.Problem)
	}
	rec, _ := c.RecommendedPoint()
	if want := (Counts{RightlyAnswered: 3, WronglyAnswered: 1, RightlyLeft: 1}); rec.Counts != want {
		t.Errorf("counts at -0.25: %+v, want %+v", rec.Counts, want)
	}
	if c.ConfigLine() != "web-fallback-threshold: -0.25" {
		t.Errorf("config line %q", c.ConfigLine())
	}
	// The current 0 routes like -0.25, and the report says so.
	if cur, _ := c.CurrentPoint(); c.Current != 1 || cur.Threshold != 0 || cur.Text != "0.00" {
		t.Errorf("current point %d %+v, want point 1 at 0.00", c.Current, cur)
	}
	if !slices.ContainsFunc(c.Notes, func(n string) bool { return strings.Contains(n, "already routes") }) {
		t.Errorf("no note that the current threshold routes the same: %q", c.Notes)
	}
	// At 1.5 the current threshold routes like (1, 2].
	if c := calibrate(t, ss, 1.5); c.Current != 4 {
		t.Errorf("current 1.5 is point %d, want 4", c.Current)
	}
	// A threshold equal to a score answers that question from the docs.
	if c := calibrate(t, ss, 0.5); c.Current != 1 {
		t.Errorf("current 0.5 is point %d, want 1 (a score at the threshold answers)", c.Current)
	}
}

func TestCalibrateTies(t *testing.T) {
	tests := []struct {
		name                     string
		answerable, unanswerable []float64
		current                  float64
		want                     string
	}{
		// F1 2/3 on (1,2] and on (7,11]: the wider plateau wins, even
		// when the current threshold sits in the narrow one.
		{"widest plateau", []float64{2, 11}, []float64{1, 3, 7}, 1.5, "9.00"},
		// F1 2/3 on (0,2] and (9,11], equally wide: the one nearer the
		// current threshold, and the lower one when both are as near.
		{"equal width, near current low", []float64{2, 11}, []float64{0, 6, 9}, 0, "1.00"},
		{"equal width, near current high", []float64{2, 11}, []float64{0, 6, 9}, 10, "10.00"},
		{"equal width, equally near", []float64{2, 11}, []float64{0, 6, 9}, 5.5, "1.00"},
		// F1 2/3 on (1,2] and on (2,5]: one plateau (1,5), its middle 3.
		{"middle of a plateau of two points", []float64{2, 5}, []float64{1, 2, 2}, 0, "3.00"},
		// All scores equal: answering everything (F1 6/8) beats nothing
		// (0); the threshold goes halfway to the end below.
		{"all scores equal", []float64{1, 1, 1}, []float64{1, 1}, 0, "0.50"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ss := set(tt.answerable, tt.unanswerable)
			c := calibrate(t, ss, tt.current)
			if c.Value != tt.want {
				t.Fatalf("recommended %q, want %s (problem %v)", c.Value, tt.want, c.Problem)
			}
			rec, _ := c.RecommendedPoint()
			if rec.Threshold != mustFloat(t, tt.want) || route(ss, rec.Threshold) != rec.Counts {
				t.Errorf("point %+v does not route as the agent would at %s: %+v", rec, tt.want, route(ss, rec.Threshold))
			}
		})
	}
}

func TestCalibrateSeparated(t *testing.T) {
	a, u := normal(1, 100, 3, 1), normal(2, 100, -3, 1)
	ss := set(a, u)
	c := calibrate(t, ss, 0)
	lo, hi := slices.Max(u), slices.Min(a)
	if lo >= hi {
		t.Fatalf("the seeded draws overlap (%v >= %v): pick another seed", lo, hi)
	}
	rec, ok := c.RecommendedPoint()
	if !ok {
		t.Fatal(c.Problem)
	}
	// Perfectly separable: F1 1 and the widest margin, the middle of the gap.
	if rec.F1 != 1 || math.Abs(rec.Threshold-(lo+hi)/2) > 0.005 {
		t.Errorf("recommended %v (F1 %v), want the middle of (%v, %v) with F1 1", rec.Threshold, rec.F1, lo, hi)
	}
	for _, n := range c.Notes {
		if !strings.Contains(n, "already routes") {
			t.Errorf("unexpected note on a clean set: %q", n)
		}
	}
}

// TestCalibrateOverlapping checks the recommendation against brute force:
// no threshold on a fine grid routes the set with a better F1.
func TestCalibrateOverlapping(t *testing.T) {
	for seed := range uint64(5) {
		a, u := normal(10+seed, 150, 1, 1), normal(20+seed, 90, -1, 1.5)
		ss := set(a, u)
		ss = append(ss, Sample{ID: "unscored", Answerable: true}) // nothing retrieved
		c := calibrate(t, ss, 0)
		rec, ok := c.RecommendedPoint()
		if !ok {
			t.Fatal(c.Problem)
		}
		if got := route(ss, rec.Threshold); got != rec.Counts {
			t.Fatalf("seed %d: point says %+v at %v, the agent would route %+v", seed, rec.Counts, rec.Threshold, got)
		}
		for x := -6.0; x <= 6; x += 0.001 {
			if f := route(ss, x).F1(); f > rec.F1 {
				t.Fatalf("seed %d: threshold %v has F1 %v, better than the recommended %v's %v", seed, x, f, rec.Threshold, rec.F1)
			}
		}
		for i, p := range c.Points {
			if route(ss, p.Threshold) != p.Counts {
				t.Fatalf("seed %d: point %d at %v counts %+v, the agent would route %+v", seed, i, p.Threshold, p.Counts, route(ss, p.Threshold))
			}
		}
		if cur, _ := c.CurrentPoint(); route(ss, 0) != cur.Counts {
			t.Errorf("seed %d: current counts %+v, want %+v", seed, cur.Counts, route(ss, 0))
		}
		if rec.Threshold < -2 || rec.Threshold > 1 {
			t.Errorf("seed %d: recommended %v, far from where the classes cross", seed, rec.Threshold)
		}
		if c.Points[len(c.Points)-1].WronglyLeft != 151 || c.Points[0].WronglyLeft != 1 {
			t.Errorf("seed %d: the unscored answerable question must leave the docs at every threshold", seed)
		}
	}
}

func TestCalibrateNoRecommendation(t *testing.T) {
	score := func(x float64) *float64 { return &x }
	tests := []struct {
		name    string
		samples []Sample
		want    error
	}{
		{"no unanswerable questions", set([]float64{1, 2, 3}, nil), ErrNoUnanswerable},
		{"no answerable questions", set(nil, []float64{-1, 2}), ErrNoAnswerable},
		{"no answerable question retrieved anything", []Sample{
			{ID: "a", Answerable: true}, {ID: "u", Best: score(-2)},
		}, ErrNoSignal},
		{"no scores at all", []Sample{{ID: "a", Answerable: true, Agree: true}, {ID: "u"}}, ErrNoScores},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := calibrate(t, tt.samples, 0)
			if !errors.Is(c.Problem, tt.want) {
				t.Fatalf("problem %v, want %v", c.Problem, tt.want)
			}
			if c.Value != "" || c.Recommended != -1 || c.ConfigLine() != "" {
				t.Errorf("recommends %q (point %d) anyway", c.Value, c.Recommended)
			}
			if _, ok := c.RecommendedPoint(); ok {
				t.Error("RecommendedPoint is ok")
			}
			var out bytes.Buffer
			if err := c.WriteText(&out, 80); err != nil {
				t.Fatal(err)
			}
			if regexp.MustCompile(`(?m)^\s*` + ConfigKey + `: `).MatchString(out.String()) {
				t.Errorf("the report prints a config line:\n%s", &out)
			}
		})
	}
	// Without unanswerable questions the current threshold's misses still show.
	c := calibrate(t, set([]float64{-1, 2, 3}, nil), 0)
	if cur, ok := c.CurrentPoint(); !ok || cur.WronglyLeft != 1 {
		t.Errorf("current point %+v, want 1 answerable question sent away", cur)
	}
}

func TestCalibrateAgreement(t *testing.T) {
	var ss []Sample
	// 7 answerable: 5 agree; 4 unanswerable: 1 agrees.
	for i := range 7 {
		ss = append(ss, Sample{ID: fmt.Sprint("a", i), Answerable: true, Agree: i < 5})
	}
	for i := range 4 {
		ss = append(ss, Sample{ID: fmt.Sprint("u", i), Agree: i == 0})
	}
	c := calibrate(t, ss, 0)
	if c.Scored || !errors.Is(c.Problem, ErrNoScores) {
		t.Fatalf("scored %v, problem %v: want the agreement fallback", c.Scored, c.Problem)
	}
	want := Counts{RightlyAnswered: 5, WronglyLeft: 2, WronglyAnswered: 1, RightlyLeft: 3}
	if c.Agreement != want {
		t.Errorf("agreement %+v, want %+v", c.Agreement, want)
	}
	if a := c.Agreement.Accuracy(); a != 8./11 {
		t.Errorf("accuracy %v, want 8/11", a)
	}
	var out bytes.Buffer
	c.WriteText(&out, 80)
	for _, l := range strings.Split(out.String(), "\n") {
		if len(l) > 80 {
			t.Errorf("line wider than 80 columns: %q", l)
		}
	}
	flat := strings.Join(strings.Fields(out.String()), " ")
	for _, s := range []string{"nothing to calibrate", "lore models pull", "accuracy 0.73", "2 answerable questions sent away from the docs, 1 unanswerable question answered"} {
		if !strings.Contains(flat, s) {
			t.Errorf("report lacks %q:\n%s", s, &out)
		}
	}
	if err := c.WritePNG(&bytes.Buffer{}); !errors.Is(err, ErrNoPlot) {
		t.Errorf("WritePNG: %v, want ErrNoPlot", err)
	}
}

// The advice to install a reranker is the caller's, which knows the
// backend: the pure-Go one is told of TinyBERT, as everywhere else
// (issue 34).
func TestCalibrateGivesTheCallersHint(t *testing.T) {
	const hint = "get one with `lore models pull " + rerank.DefaultHugotModel + "`"
	c, err := Calibrate([]Sample{{ID: "q1", Answerable: true}, {ID: "q2"}}, 0, hint)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	c.WriteText(&b, 80)
	if !errors.Is(c.Problem, ErrNoScores) || !strings.Contains(c.Problem.Error(), hint) || strings.Contains(b.String(), "MiniLM") || !strings.Contains(strings.Join(strings.Fields(b.String()), " "), "TinyBERT") {
		t.Errorf("problem %v, text:\n%s", c.Problem, b.String())
	}
}

func TestCalibrateBadInput(t *testing.T) {
	nan := math.NaN()
	if _, err := Calibrate(nil, 0, ""); err == nil {
		t.Error("no samples: no error")
	}
	if _, err := Calibrate([]Sample{{ID: "q7", Best: &nan}}, 0, ""); err == nil || !strings.Contains(err.Error(), "q7") {
		t.Errorf("NaN score: %v, want an error naming q7", err)
	}
	if _, err := Calibrate(set([]float64{1}, []float64{0}), math.Inf(1), ""); err == nil {
		t.Error("infinite current threshold: no error")
	}
}

func TestFormatWithin(t *testing.T) {
	tests := []struct {
		t, lower, upper float64
		want            string
	}{
		{0.25, 0, 1, "0.25"},
		{-0.25, -1, 0.5, "-0.25"},
		{0.1025, 0.101, 0.104, "0.102"},
		{-0.001, -0.002, 0, "-0.001"},
		{0.001, -0.5, 0.5, "0.00"}, // never "-0.00"
		{-0.001, -0.5, 0.5, "0.00"},
		{7, 6.3, math.Inf(1), "7.00"},
	}
	for _, tt := range tests {
		if got, v := formatWithin(tt.t, tt.lower, tt.upper); got != tt.want || v != mustFloat(t, got) {
			t.Errorf("formatWithin(%v, %v, %v) = %q, %v; want %q", tt.t, tt.lower, tt.upper, got, v, tt.want)
		}
	}
	// Whatever the scores, the text routes the interval's way: above the
	// lower score, at most the upper one, in float32 as the agent compares.
	r := rand.New(rand.NewPCG(3, 4))
	for range 10000 {
		lo := float32(r.NormFloat64() * 5)
		hi := math.Nextafter32(lo, float32(math.Inf(1)))
		for range r.IntN(3) * 1000 {
			hi = math.Nextafter32(hi, float32(math.Inf(1)))
		}
		l, h := float64(lo), float64(hi)
		s, v := formatWithin(l+(h-l)/2, l, h)
		if p := mustFloat(t, s); p != v || !(float32(p) > lo && float32(p) <= hi) {
			t.Fatalf("formatWithin between %v and %v gave %q, which routes otherwise", lo, hi, s)
		}
	}
}

func mustFloat(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// goldenSet is hand-made: overlapping classes, one question that retrieved
// nothing, and the current threshold at the default 0.
func goldenSet() []Sample {
	ss := set(
		[]float64{6.1, 5.2, 4.8, 4.4, 4.1, 3.9, 3.5, 3.3, 2.9, 2.2, 1.7, 1.1, 0.4, -0.6, -2.4},
		[]float64{-7.3, -6.2, -5.5, -4.9, -4.1, -3.8, -3.1, -2.9, -1.2, 0.9},
	)
	return append(ss, Sample{ID: "nothing", Answerable: true})
}

func TestCalibrationText(t *testing.T) {
	c := calibrate(t, goldenSet(), 0)
	var out bytes.Buffer
	if err := c.WriteText(&out, 80); err != nil {
		t.Fatal(err)
	}
	golden.RequireEqual(t, out.String())
}

// TestCalibrationTextHistogram reads the text histogram back: above each
// threshold's line lie exactly the questions it answers from the docs.
func TestCalibrationTextHistogram(t *testing.T) {
	sets := map[string][]Sample{
		"golden":  goldenSet(),
		"normals": set(normal(5, 120, 2, 1.5), normal(6, 80, -2, 1.5)),
		"equal":   set([]float64{1, 1, 1}, []float64{1, 1}),
		// With the current threshold at 4.3, floating point puts the
		// score 4.3 a hair below the line's edge unless binning minds it.
		"edge": set([]float64{4.3, -0.2}, []float64{-4.3, -4.7, -4}),
	}
	// And small random sets on a 0.1 grid, where thresholds meet scores.
	r := rand.New(rand.NewPCG(9, 9))
	for i := range 60 {
		var a, u []float64
		for range 1 + r.IntN(6) {
			a = append(a, float64(r.IntN(80)-20)/10)
		}
		for range 1 + r.IntN(6) {
			u = append(u, float64(r.IntN(80)-60)/10)
		}
		sets[fmt.Sprintf("random %d", i)] = set(a, u)
	}
	row := regexp.MustCompile(`^\s*-?\d+\.\d+ \.\.\s+-?\d+\.\d+  #* +(\d+)  o* +(\d+)$`)
	for name, ss := range sets {
		for _, current := range []float64{0, -3, 2.5, 40, 1.1, -0.6, 0.9, 0.4, -2.9, -4.1, 3.3, 4.4, 1.7, 4.3, 1, -0.2} {
			t.Run(fmt.Sprintf("%s/current %v", name, current), func(t *testing.T) {
				c := calibrate(t, ss, current)
				var out bytes.Buffer
				c.WriteText(&out, 72)
				lines := strings.Split(out.String(), "\n")
				var above [2]int
				seen := map[string]bool{}
				for _, l := range lines {
					if len(l) > 72 {
						t.Errorf("line wider than 72 columns: %q", l)
					}
					if m := row.FindStringSubmatch(l); m != nil {
						a, _ := strconv.Atoi(m[1])
						u, _ := strconv.Atoi(m[2])
						above[0] += a
						above[1] += u
						continue
					}
					for _, which := range []string{"recommended", "current"} {
						if !strings.HasPrefix(l, "---") || !strings.Contains(l, " "+which+" ") || (which == "current" && strings.Contains(l, "recommended")) {
							continue
						}
						seen[which] = true
						p, _ := c.RecommendedPoint()
						if which == "current" {
							p, _ = c.CurrentPoint()
						}
						if above[0] != p.RightlyAnswered || above[1] != p.WronglyAnswered {
							t.Errorf("above the %s line: %d answerable, %d unanswerable; it answers %d and %d from the docs",
								which, above[0], above[1], p.RightlyAnswered, p.WronglyAnswered)
						}
					}
				}
				if !seen["recommended"] {
					t.Errorf("no line for the recommended threshold:\n%s", &out)
				}
			})
		}
	}
}

func TestCalibrationTableKeepsMarkedRows(t *testing.T) {
	ss := set(normal(8, 100, 2, 2), normal(9, 100, -2, 2))
	for _, current := range []float64{-9, 0, 0.2, 3.7, 9} {
		c := calibrate(t, ss, current)
		var out bytes.Buffer
		c.WriteText(&out, 100)
		text := out.String()
		table := text[:strings.Index(text, "Best rerank scores")]
		rows := 0
		for _, l := range strings.Split(table, "\n") {
			if regexp.MustCompile(`^\s*-?\d+\.\d+\s+\d+\s+\d+`).MatchString(l) {
				rows++
			}
		}
		if rows > tableRows {
			t.Errorf("current %v: %d table rows, want at most %d", current, rows, tableRows)
		}
		rec, _ := c.RecommendedPoint()
		cur, _ := c.CurrentPoint()
		if !regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(rec.Text) + `\s.*<- recommended`).MatchString(table) {
			t.Errorf("current %v: no recommended row %s:\n%s", current, rec.Text, table)
		}
		if c.Current != c.Recommended && !regexp.MustCompile(`(?m)^\s*`+regexp.QuoteMeta(cur.Text)+`\s.*<- current`).MatchString(table) {
			t.Errorf("current %v: no current row:\n%s", current, table)
		}
	}
}

func TestCalibrationPNG(t *testing.T) {
	c := calibrate(t, goldenSet(), 0)
	var buf bytes.Buffer
	if err := c.WritePNG(&buf); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != plotW || b.Dy() != plotH {
		t.Fatalf("size %v, want %dx%d", b, plotW, plotH)
	}
	f := c.histogram(plotBins).frame()
	column := func(x int, want interface{ RGBA() (r, g, b, a uint32) }) int {
		n := 0
		wr, wg, wb, _ := want.RGBA()
		for y := f.top; y <= f.bottom; y++ {
			r, g, b, _ := img.At(x, y).RGBA()
			if r == wr && g == wg && b == wb {
				n++
			}
		}
		return n
	}
	rec, _ := c.RecommendedPoint()
	x := f.x(rec.Threshold)
	if n, h := column(x, colRecommended), f.bottom-f.top+1; n < h*9/10 {
		t.Errorf("column %d of the recommended threshold %s has its colour in %d of %d pixels", x, rec.Text, n, h)
	}
	if n := column(f.x(0), colCurrent); n < (f.bottom-f.top)/3 {
		t.Errorf("column of the current threshold has its colour in %d pixels", n)
	}
	if n := column(f.left+(f.right-f.left)/7, colRecommended); n != 0 {
		t.Errorf("a column away from the threshold has the threshold's colour in %d pixels", n)
	}
}
