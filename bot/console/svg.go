package console

import (
	"fmt"
	"html"
	"strings"

	"github.com/shopspring/decimal"
)

// Charts are drawn on the server as SVG, with no script and no inline
// style: the page's stylesheet colours them through their classes
// (ch-axis, ch-grid, ch-text, ch-s0..ch-s2), so one chart reads in the
// light and the dark theme. Amounts become pixels only here (a float is a
// coordinate, never money); every label is the decimal's own text.

// series is one named row of values of a chart.
type series struct {
	Name   string
	Values []decimal.Decimal
}

const (
	chartW, chartH = 640, 240
	padL, padR     = 56, 12
	padT, padB     = 12, 40
)

// barChart draws groups of bars: one group per label, one bar per series.
func barChart(title string, labels []string, ss []series) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" class="chart" role="img" aria-label="%s">`, chartW, chartH, html.EscapeString(title))
	lo, hi := decimal.Zero, decimal.Zero
	for _, s := range ss {
		for _, v := range s.Values {
			lo, hi = decimal.Min(lo, v), decimal.Max(hi, v)
		}
	}
	if hi.Equal(lo) {
		hi = lo.Add(decimal.NewFromInt(1))
	}
	plotW, plotH := float64(chartW-padL-padR), float64(chartH-padT-padB)
	span := hi.Sub(lo).InexactFloat64()
	y := func(v decimal.Decimal) float64 { return float64(padT) + plotH*(1-v.Sub(lo).InexactFloat64()/span) }
	// Grid and axis labels: the bottom, zero (when below zero is shown), the top.
	for _, v := range uniq(lo, decimal.Zero, hi) {
		fmt.Fprintf(&b, `<line class="ch-grid" x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#8884"/>`, padL, chartW-padR, y(v), y(v))
		fmt.Fprintf(&b, `<text class="ch-text" x="%d" y="%.1f" text-anchor="end" font-size="11" fill="#888">%s</text>`, padL-4, y(v)+4, v.StringFixed(2))
	}
	n := len(labels)
	if n == 0 {
		n = 1
	}
	group := plotW / float64(n)
	bar := group * 0.8 / float64(max(len(ss), 1))
	every := max(1, n/10) // at most about ten labels under the axis
	for i, l := range labels {
		x0 := float64(padL) + group*float64(i) + group*0.1
		for k, s := range ss {
			if i >= len(s.Values) {
				continue
			}
			v := s.Values[i]
			top, bottom := y(decimal.Max(v, decimal.Zero)), y(decimal.Min(v, decimal.Zero))
			fmt.Fprintf(&b, `<rect class="ch-s%d" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s %s: %s</title></rect>`,
				k%3, x0+bar*float64(k), top, max(bar-1, 1), max(bottom-top, 0.5), seriesFill[k%3], html.EscapeString(l), html.EscapeString(s.Name), v.StringFixed(2))
		}
		if i%every == 0 {
			fmt.Fprintf(&b, `<text class="ch-text" x="%.1f" y="%d" text-anchor="middle" font-size="11" fill="#888">%s</text>`,
				x0+group*0.4, chartH-padB+14, html.EscapeString(l))
		}
	}
	fmt.Fprintf(&b, `<line class="ch-axis" x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#888"/>`, padL, chartW-padR, y(decimal.Zero), y(decimal.Zero))
	// The legend.
	for k, s := range ss {
		x := padL + k*150
		fmt.Fprintf(&b, `<rect class="ch-s%d" x="%d" y="%d" width="10" height="10" fill="%s"/>`, k%3, x, chartH-14, seriesFill[k%3])
		fmt.Fprintf(&b, `<text class="ch-text" x="%d" y="%d" font-size="11" fill="#888">%s</text>`, x+14, chartH-5, html.EscapeString(s.Name))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// seriesFill are the series' colours where no stylesheet applies (the page's
// stylesheet sets them per theme).
var seriesFill = [3]string{"#3b82f6", "#f59e0b", "#10b981"}

func uniq(vs ...decimal.Decimal) []decimal.Decimal {
	var out []decimal.Decimal
	for _, v := range vs {
		dup := false
		for _, o := range out {
			dup = dup || o.Equal(v)
		}
		if !dup {
			out = append(out, v)
		}
	}
	return out
}
