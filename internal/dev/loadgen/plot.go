package loadgen

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
)

// Series is one line of a latency plot: a name and the results of runs at
// increasing offered rates.
type Series struct {
	Name   string
	Offers []float64 // requests per second offered
	Runs   []Result  // one per offer
}

// plot geometry, in SVG user units.
const (
	plotW, plotH           = 720, 420
	plotLeft, plotRight    = 70, 200
	plotTop, plotBottom    = 30, 50
	plotMinMS, plotDecades = 1.0, 5 // the y axis spans 1 ms to 100 s
)

var plotColours = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"}

// WriteLatencySVG draws p50 (solid) and p99 (dashed) latency against offered
// load for each series, latency on a log scale, as a standalone SVG file.
func WriteLatencySVG(w io.Writer, title string, series []Series) error {
	maxOffer := 0.0
	for _, s := range series {
		if len(s.Offers) != len(s.Runs) {
			return fmt.Errorf("series %q: %d offers for %d runs", s.Name, len(s.Offers), len(s.Runs))
		}
		for _, o := range s.Offers {
			maxOffer = math.Max(maxOffer, o)
		}
	}
	if maxOffer == 0 {
		return fmt.Errorf("nothing to plot")
	}
	innerW := float64(plotW - plotLeft - plotRight)
	innerH := float64(plotH - plotTop - plotBottom)
	x := func(offer float64) float64 { return plotLeft + offer/maxOffer*innerW }
	y := func(ms float64) float64 {
		ms = math.Max(ms, plotMinMS)
		frac := math.Log10(ms/plotMinMS) / plotDecades
		return plotTop + innerH*(1-math.Min(frac, 1))
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", plotW, plotH, plotW, plotH)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", plotW, plotH)
	fmt.Fprintf(&b, `<text x="%d" y="18" font-size="14">%s</text>`+"\n", plotLeft, html.EscapeString(title))
	// Axes, with a grid line per decade of latency and five load ticks.
	for d := 0; d <= plotDecades; d++ {
		ms := plotMinMS * math.Pow(10, float64(d))
		yy := y(ms)
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", plotLeft, yy, plotLeft+innerW, yy)
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", plotLeft-6, yy+4, msLabel(ms))
	}
	for t := 0; t <= 5; t++ {
		offer := maxOffer * float64(t) / 5
		xx := x(offer)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", xx, plotTop, xx, plotTop+innerH)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%.0f</text>`+"\n", xx, plotTop+innerH+16, offer)
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">offered load (requests/s, open loop)</text>`+"\n", plotLeft+innerW/2, plotH-10)
	fmt.Fprintf(&b, `<text transform="translate(16 %.1f) rotate(-90)" text-anchor="middle">latency (log scale)</text>`+"\n", plotTop+innerH/2)
	for i, s := range series {
		colour := plotColours[i%len(plotColours)]
		for _, line := range []struct {
			label string
			dash  string
			value func(Result) float64
		}{
			{"p50", "", func(r Result) float64 { return float64(r.P50.Microseconds()) / 1000 }},
			{"p99", ` stroke-dasharray="6 4"`, func(r Result) float64 { return float64(r.P99.Microseconds()) / 1000 }},
		} {
			pts := make([]string, len(s.Runs))
			for j, r := range s.Runs {
				pts[j] = fmt.Sprintf("%.1f,%.1f", x(s.Offers[j]), y(line.value(r)))
			}
			fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"><title>%s %s</title></polyline>`+"\n",
				colour, line.dash, strings.Join(pts, " "), html.EscapeString(s.Name), line.label)
			ly := float64(plotTop+10) + float64(i*2)*18
			if line.label == "p99" {
				ly += 18
			}
			fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s" stroke-width="2"%s/>`+"\n",
				plotW-plotRight+12, ly, plotW-plotRight+40, ly, colour, line.dash)
			fmt.Fprintf(&b, `<text x="%d" y="%.1f">%s %s</text>`+"\n", plotW-plotRight+46, ly+4, html.EscapeString(s.Name), line.label)
		}
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func msLabel(ms float64) string {
	if ms >= 1000 {
		return fmt.Sprintf("%.0f s", ms/1000)
	}
	return fmt.Sprintf("%.0f ms", ms)
}
