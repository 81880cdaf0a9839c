// Package svgchart draws the console's charts on the server, as inline SVG:
// readable without JavaScript, printed as they are, and named for screen
// readers (role="img", a title and a description). Each chart comes with
// its figures as a table, so the numbers are there to read and to copy.
package svgchart

import (
	"fmt"
	"html"
	"html/template"
	"strings"
)

// Segment is one part of a bar: a value, its colour's name and the text
// the figures show for it.
type Segment struct {
	Value int64
	Kind  Kind
	Text  string
}

// Bar is one bar of a chart: a label and its segments (one for a plain
// bar, several stacked).
type Bar struct {
	Label    string
	Segments []Segment
}

// Plain is a bar of one segment.
func Plain(label string, value int64, text string) Bar {
	return Bar{Label: label, Segments: []Segment{{Value: value, Kind: Main, Text: text}}}
}

// Kind names a segment's colour by what it means.
type Kind int

const (
	Main  Kind = iota // the figure itself
	Good              // approved, completed
	Bad               // declined, failed
	Warn              // errors, waiting
	Muted             // the rest
)

var colours = map[Kind]string{Main: "#0b4fa3", Good: "#1f7a3a", Bad: "#a30000", Warn: "#b36b00", Muted: "#8a8f98"}

// Chart is what to draw: an id (unique on the page), a title, a sentence
// saying what it shows, the bars, and a legend when bars are stacked.
type Chart struct {
	ID     string
	Title  string
	Desc   string
	Bars   []Bar
	Legend []Key
	Empty  string // said when there are no bars or every value is 0
	// Figures names the fold that holds the numbers ("Figures" when
	// empty).
	Figures string
}

// Key is one entry of a legend.
type Key struct {
	Name string
	Kind Kind
}

// blank reports whether there is nothing to draw: no bars, or every value
// 0. Negative values are not drawn (a bar starts at 0) but they are not
// nothing: the figures show them.
func (c Chart) blank() bool {
	for _, b := range c.Bars {
		for _, s := range b.Segments {
			if s.Value != 0 {
				return false
			}
		}
	}
	return true
}

func (c Chart) max() int64 {
	var m int64
	for _, b := range c.Bars {
		var sum int64
		for _, s := range b.Segments {
			sum += max(s.Value, 0)
		}
		m = max(m, sum)
	}
	return m
}

const (
	width     = 560
	font      = `font-family="system-ui,sans-serif"`
	axisColor = "#d6d6d6"
	textColor = "#1a1a1a"
)

func esc(s string) string { return html.EscapeString(s) }

// open starts the svg with its accessible name.
func open(b *strings.Builder, c Chart, height int) {
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" id="%s" class="chart" role="img" aria-labelledby="%s-title %s-desc" viewBox="0 0 %d %d" width="100%%" preserveAspectRatio="xMinYMin meet">`,
		esc(c.ID), esc(c.ID), esc(c.ID), width, height)
	fmt.Fprintf(b, `<title id="%s-title">%s</title><desc id="%s-desc">%s</desc>`, esc(c.ID), esc(c.Title), esc(c.ID), esc(c.Desc))
}

// Columns draws vertical bars, one per label (days, age brackets), from a
// common baseline, each with its figure above it.
func Columns(c Chart) template.HTML {
	const height, top, bottom, left = 230, 22, 34, 8
	var b strings.Builder
	open(&b, c, height)
	m := max(c.max(), 1)
	plot := height - top - bottom
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s"/>`, left, height-bottom, width-left, height-bottom, axisColor)
	if c.blank() {
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle" %s font-size="14" fill="%s">%s</text></svg>`,
			width/2, height/2, font, textColor, esc(c.Empty))
		return template.HTML(b.String()) + figures(c)
	}
	slot := float64(width-2*left) / float64(len(c.Bars))
	barW := slot * 0.7
	for i, bar := range c.Bars {
		x := float64(left) + slot*float64(i) + (slot-barW)/2
		y := float64(height - bottom)
		var total int64
		for _, s := range bar.Segments {
			h := float64(plot) * float64(max(s.Value, 0)) / float64(m)
			y -= h
			total += max(s.Value, 0)
			fmt.Fprintf(&b, `<rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s: %s</title></rect>`,
				x, y, barW, h, colours[s.Kind], esc(bar.Label), esc(s.Text))
		}
		if len(bar.Segments) == 1 && len(c.Bars) <= 16 {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" %s font-size="10" fill="%s">%s</text>`,
				x+barW/2, y-4, font, textColor, esc(bar.Segments[0].Text))
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" %s font-size="10" fill="%s">%s</text>`,
			x+barW/2, height-bottom+14, font, textColor, esc(bar.Label))
	}
	legend(&b, c, height-6)
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) + figures(c)
}

// Rows draws horizontal bars, one per label (reasons, methods, statuses),
// the label on the left and the figure on the right.
func Rows(c Chart) template.HTML {
	const rowH, top, labelW, valueW, left = 26, 8, 180, 170, 8
	n := max(len(c.Bars), 1)
	height := top + n*rowH + 24
	var b strings.Builder
	open(&b, c, height)
	m := max(c.max(), 1)
	if c.blank() {
		fmt.Fprintf(&b, `<text x="%d" y="%d" %s font-size="14" fill="%s">%s</text></svg>`, left, top+18, font, textColor, esc(c.Empty))
		return template.HTML(b.String()) + figures(c)
	}
	plot := float64(width - left - labelW - valueW)
	for i, bar := range c.Bars {
		y := top + i*rowH
		fmt.Fprintf(&b, `<text x="%d" y="%d" %s font-size="12" fill="%s">%s</text>`, left, y+16, font, textColor, esc(clip(bar.Label, 30)))
		x := float64(left + labelW)
		var texts []string
		for _, s := range bar.Segments {
			w := plot * float64(max(s.Value, 0)) / float64(m)
			fmt.Fprintf(&b, `<rect class="bar" x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"><title>%s: %s</title></rect>`,
				x, y+4, w, rowH-8, colours[s.Kind], esc(bar.Label), esc(s.Text))
			x += w
			// A stacked bar names its parts that are there; the figures
			// below the chart name them all.
			if s.Value != 0 || len(bar.Segments) == 1 {
				texts = append(texts, s.Text)
			}
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" %s font-size="12" fill="%s">%s</text>`, x+6, y+16, font, textColor, esc(strings.Join(texts, " · ")))
	}
	legend(&b, c, height-6)
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) + figures(c)
}

// legend names the segment kinds when a chart stacks several.
func legend(b *strings.Builder, c Chart, y int) {
	if len(c.Legend) == 0 || len(c.Bars) == 0 {
		return
	}
	x := 8
	for _, k := range c.Legend {
		fmt.Fprintf(b, `<rect x="%d" y="%d" width="10" height="10" fill="%s"/><text x="%d" y="%d" %s font-size="11" fill="%s">%s</text>`,
			x, y-9, colours[k.Kind], x+14, y, font, textColor, esc(k.Name))
		x += 14 + 7*len([]rune(k.Name)) + 16
	}
}

// figures is the chart's numbers as a table, folded under the chart.
func figures(c Chart) template.HTML {
	if len(c.Bars) == 0 {
		return ""
	}
	var b strings.Builder
	label := c.Figures
	if label == "" {
		label = "Figures"
	}
	fmt.Fprintf(&b, `<details class="figures"><summary>%s</summary><table id="%s-figures"><caption>%s</caption><tbody>`,
		esc(label), esc(c.ID), esc(c.Title))
	for _, bar := range c.Bars {
		fmt.Fprintf(&b, `<tr><th scope="row">%s</th>`, esc(bar.Label))
		for _, s := range bar.Segments {
			fmt.Fprintf(&b, `<td>%s</td>`, esc(s.Text))
		}
		b.WriteString(`</tr>`)
	}
	b.WriteString(`</tbody></table></details>`)
	return template.HTML(b.String())
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
