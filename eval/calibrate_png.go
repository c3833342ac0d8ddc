package eval

import (
	"errors"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"math"
	"strconv"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// The plot's size and colours (colour-blind safe: Okabe-Ito blue and
// orange for the classes, green and vermilion for the thresholds).
const (
	plotW, plotH = 800, 450
	plotBins     = 30
)

var (
	colBackground   = color.RGBA{255, 255, 255, 255}
	colAxis         = color.RGBA{60, 60, 60, 255}
	colGrid         = color.RGBA{225, 225, 225, 255}
	colAnswerable   = color.RGBA{0, 114, 178, 255}
	colUnanswerable = color.RGBA{230, 159, 0, 255}
	colRecommended  = color.RGBA{0, 158, 115, 255}
	colCurrent      = color.RGBA{213, 94, 0, 255}
)

// ErrNoPlot: without rerank scores there is no distribution to draw.
var ErrNoPlot = errors.New("no rerank scores to plot")

// plotFrame maps scores and counts to pixels.
type plotFrame struct {
	left, right, top, bottom int // the plot area, in pixels
	x0, x1                   float64
	yMax                     int
}

func (f plotFrame) x(v float64) int {
	return f.left + int(math.Round((v-f.x0)/(f.x1-f.x0)*float64(f.right-f.left)))
}

func (f plotFrame) y(n int) int {
	return f.bottom - int(math.Round(float64(n)/float64(f.yMax)*float64(f.bottom-f.top)))
}

// frame lays out the plot of histogram h.
func (h histogram) frame() plotFrame {
	most := 1
	for _, cs := range h.counts {
		for _, n := range cs {
			most = max(most, n)
		}
	}
	step := max(1, int(niceStep(float64(most)/5)))
	return plotFrame{left: 56, right: plotW - 20, top: 48, bottom: plotH - 48,
		x0: h.edge(0), x1: h.edge(h.n), yMax: (most + step - 1) / step * step}
}

// WritePNG draws both score distributions as a histogram, answerable and
// unanswerable side by side in shared bins, with vertical lines at the
// recommended threshold (solid green) and the current one (dashed
// vermilion), axis ticks and a legend. It is 800×450 pixels.
func (c Calibration) WritePNG(w io.Writer) error {
	if !c.Scored {
		return ErrNoPlot
	}
	h := c.histogram(plotBins)
	f := h.frame()
	img := image.NewRGBA(image.Rect(0, 0, plotW, plotH))
	draw.Draw(img, img.Bounds(), image.NewUniform(colBackground), image.Point{}, draw.Src)

	// Grid and y ticks.
	ystep := max(1, int(niceStep(float64(f.yMax)/5)))
	for n := 0; n <= f.yMax; n += ystep {
		y := f.y(n)
		hline(img, f.left, f.right, y, colGrid)
		hline(img, f.left-4, f.left, y, colAxis)
		label := strconv.Itoa(n)
		text(img, f.left-8-7*len(label), y+4, label, colAxis)
	}
	// Bars: answerable on the left half of a bin, unanswerable on the right.
	for j := range h.n {
		xa, xb := f.x(h.edge(j)), f.x(h.edge(j+1))
		mid := (xa + xb) / 2
		fill(img, xa+1, f.y(h.counts[0][j]), mid, f.bottom, colAnswerable)
		fill(img, mid, f.y(h.counts[1][j]), xb-1, f.bottom, colUnanswerable)
	}
	// Axes and x ticks.
	hline(img, f.left, f.right, f.bottom, colAxis)
	vline(img, f.left, f.top, f.bottom, colAxis, 0)
	xstep := niceStep((f.x1 - f.x0) / 8)
	for v := math.Ceil(f.x0/xstep) * xstep; v <= f.x1+xstep/1e6; v += xstep {
		x := f.x(v)
		vline(img, x, f.bottom, f.bottom+4, colAxis, 0)
		label := strconv.FormatFloat(math.Round(v/xstep)*xstep, 'g', 4, 64)
		text(img, x-7*len(label)/2, f.bottom+17, label, colAxis)
	}
	text(img, (f.left+f.right)/2-7*len("best rerank score (logit)")/2, plotH-12, "best rerank score (logit)", colAxis)
	text(img, 8, 21, "questions per bin", colAxis)

	// Threshold lines, the recommended one on top.
	legend := []legendEntry{{colAnswerable, "answerable" + unscored(c.Unscored[0]), false},
		{colUnanswerable, "unanswerable" + unscored(c.Unscored[1]), false}}
	cur := c.CurrentThreshold
	curLabel := "current " + fmtExact(cur)
	if cur >= f.x0 && cur <= f.x1 {
		vline(img, f.x(cur), f.top, f.bottom, colCurrent, 6)
	} else {
		curLabel += " (off the scale)"
	}
	legend = append(legend, legendEntry{colCurrent, curLabel, true})
	if rec, ok := c.RecommendedPoint(); ok {
		x := f.x(rec.Threshold)
		vline(img, x-1, f.top, f.bottom, colRecommended, 0)
		vline(img, x, f.top, f.bottom, colRecommended, 0)
		legend = append(legend, legendEntry{colRecommended, "recommended " + rec.Text, true})
	}

	// Legend above the plot, where it hides no bar; a second row if need be.
	lx, ly := 200, 10
	for _, l := range legend {
		wide := 20 + 7*len(l.label) + 18
		if lx+wide > plotW && lx > 200 {
			lx, ly = 200, ly+16
		}
		if l.line {
			fill(img, lx, ly+5, lx+14, ly+7, l.c)
		} else {
			fill(img, lx, ly, lx+14, ly+12, l.c)
		}
		text(img, lx+20, ly+11, l.label, colAxis)
		lx += wide
	}
	return png.Encode(w, img)
}

// unscored notes questions of a class the plot cannot place.
func unscored(n int) string {
	if n == 0 {
		return ""
	}
	return " (+" + strconv.Itoa(n) + " unscored)"
}

// legendEntry is a swatch (a line for a threshold) and its label.
type legendEntry struct {
	c     color.RGBA
	label string
	line  bool
}

func fill(img *image.RGBA, x0, y0, x1, y1 int, c color.RGBA) {
	draw.Draw(img, image.Rect(x0, y0, x1, y1), image.NewUniform(c), image.Point{}, draw.Src)
}

func hline(img *image.RGBA, x0, x1, y int, c color.RGBA) { fill(img, x0, y, x1+1, y+1, c) }

// vline draws from y0 to y1; dash > 0 draws dash pixels on, dash off.
func vline(img *image.RGBA, x, y0, y1 int, c color.RGBA, dash int) {
	for y := y0; y <= y1; y++ {
		if dash == 0 || (y-y0)/dash%2 == 0 {
			img.SetRGBA(x, y, c)
		}
	}
}

// text draws s with its baseline at y, in the 7×13 basic font.
func text(img *image.RGBA, x, y int, s string, c color.RGBA) {
	d := font.Drawer{Dst: img, Src: image.NewUniform(c), Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
	d.DrawString(s)
}
