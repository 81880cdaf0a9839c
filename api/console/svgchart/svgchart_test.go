package svgchart

import (
	"encoding/xml"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// svgOf cuts the svg element out of a chart's HTML.
func svgOf(t *testing.T, h string) string {
	t.Helper()
	end := strings.Index(h, "</svg>")
	if !strings.HasPrefix(h, "<svg") || end < 0 {
		t.Fatalf("not an svg first: %.80s", h)
	}
	return h[:end+len("</svg>")]
}

// heights are the heights of the bars (columns) or their widths (rows).
func sizes(t *testing.T, svg, attr string) []float64 {
	t.Helper()
	var out []float64
	for _, m := range regexp.MustCompile(`<rect class="bar"[^>]* `+attr+`="([0-9.]+)"`).FindAllStringSubmatch(svg, -1) {
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

func TestColumns(t *testing.T) {
	tests := []struct {
		name    string
		bars    []Bar
		heights []float64 // of the plot's 174 px
		texts   []string  // in the figures, in order
	}{
		{"proportional", []Bar{Plain("11-19", 6000, "60.00"), Plain("11-20", 1500, "15.00"), Plain("11-21", 0, "0.00")},
			[]float64{174, 43.5, 0}, []string{"60.00", "15.00", "0.00"}},
		{"a negative value draws nothing", []Bar{Plain("a", 10, "10"), Plain("b", -5, "-5")}, []float64{174, 0}, []string{"10", "-5"}},
		{"stacked", []Bar{{Label: "x", Segments: []Segment{{Value: 3, Kind: Good, Text: "3"}, {Value: 1, Kind: Bad, Text: "1"}}},
			Plain("y", 2, "2")}, []float64{130.5, 43.5, 87}, []string{"3", "1", "2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := string(Columns(Chart{ID: "c1", Title: "Volume <USD>", Desc: "per day", Bars: tc.bars}))
			svg := svgOf(t, h)
			if err := xml.Unmarshal([]byte(svg), new(struct{})); err != nil {
				t.Fatalf("not well-formed: %v", err)
			}
			if got := sizes(t, svg, "height"); !equal(got, tc.heights) {
				t.Errorf("heights %v, want %v", got, tc.heights)
			}
			if !strings.Contains(svg, `role="img" aria-labelledby="c1-title c1-desc"`) || !strings.Contains(svg, `<title id="c1-title">Volume &lt;USD&gt;</title>`) {
				t.Errorf("accessible name missing or unescaped: %.300s", svg)
			}
			for _, text := range tc.texts {
				if !strings.Contains(h[len(svg):], "<td>"+text+"</td>") {
					t.Errorf("the figures lack %s", text)
				}
			}
		})
	}
}

func TestRows(t *testing.T) {
	h := string(Rows(Chart{ID: "r", Title: "Declines", Bars: []Bar{
		Plain(`A0001 "Declined" <b>`, 4, "4"), Plain("A0002 Insufficient funds", 1, "1"),
	}}))
	svg := svgOf(t, h)
	if err := xml.Unmarshal([]byte(svg), new(struct{})); err != nil {
		t.Fatalf("not well-formed: %v", err)
	}
	if got := sizes(t, svg, "width"); !equal(got, []float64{202, 50.5}) {
		t.Errorf("widths %v", got)
	}
	if strings.Contains(h, "<b>") || !strings.Contains(h, `A0001 &#34;Declined&#34; &lt;b&gt;`) {
		t.Error("a label is not escaped")
	}
}

func TestEmptyChartSaysSo(t *testing.T) {
	for name, draw := range map[string]func(Chart) string{
		"columns": func(c Chart) string { return string(Columns(c)) },
		"rows":    func(c Chart) string { return string(Rows(c)) },
	} {
		t.Run(name, func(t *testing.T) {
			for _, bars := range [][]Bar{nil, {Plain("a", 0, "0")}} {
				h := draw(Chart{ID: "e", Title: "T", Bars: bars, Empty: "Nothing in this window."})
				if !strings.Contains(h, ">Nothing in this window.</text>") || strings.Contains(h, `class="bar"`) {
					t.Errorf("%d bars: %s", len(bars), h)
				}
			}
		})
	}
}

// TestNegativeValuesAreNotNothing: a chart whose values are all negative
// (a day of more refunds than captures) is drawn with its figures, not
// called empty.
func TestNegativeValuesAreNotNothing(t *testing.T) {
	h := string(Columns(Chart{ID: "n", Title: "Net", Bars: []Bar{Plain("11-19", -500, "-5.00"), Plain("11-20", 0, "0.00")}, Empty: "Nothing"}))
	if strings.Contains(h, ">Nothing</text>") || !strings.Contains(h, "<td>-5.00</td>") {
		t.Errorf("negative figures: %s", h)
	}
	if got := sizes(t, svgOf(t, h), "height"); !equal(got, []float64{0, 0}) {
		t.Errorf("heights %v", got)
	}
}

func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if d := a[i] - b[i]; d > 0.06 || d < -0.06 {
			return false
		}
	}
	return true
}
