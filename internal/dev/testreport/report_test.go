package testreport

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

const run = `{"Action":"start","Package":"p/a"}
{"Action":"run","Package":"p/a","Test":"TestOK"}
{"Action":"output","Package":"p/a","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"output","Package":"p/a","Test":"TestOK","Output":"quiet detail\n"}
{"Action":"pass","Package":"p/a","Test":"TestOK","Elapsed":1.5}
{"Action":"run","Package":"p/a","Test":"TestBad"}
{"Action":"run","Package":"p/a","Test":"TestBad/case_one"}
{"Action":"output","Package":"p/a","Test":"TestBad/case_one","Output":"    bad_test.go:9: got 2, want 3\n"}
{"Action":"fail","Package":"p/a","Test":"TestBad/case_one","Elapsed":0.2}
{"Action":"fail","Package":"p/a","Test":"TestBad","Elapsed":0.3}
{"Action":"output","Package":"p/a","Output":"FAIL\n"}
{"Action":"fail","Package":"p/a","Elapsed":2.5}
{"ImportPath":"p/b","Action":"build-output","Output":"p/b/x.go:3:1: syntax error\n"}
{"ImportPath":"p/b","Action":"build-fail"}
{"Action":"start","Package":"p/b"}
{"Action":"output","Package":"p/b","Output":"FAIL\tp/b [build failed]\n"}
{"Action":"fail","Package":"p/b","Elapsed":0}
{"Action":"run","Package":"p/c","Test":"TestSlow"}
{"Action":"pass","Package":"p/c","Test":"TestSlow","Elapsed":40}
{"Action":"skip","Package":"p/c","Test":"TestSkipped","Elapsed":0}
{"Action":"pass","Package":"p/c","Elapsed":41}
not an event
`

func TestRead(t *testing.T) {
	var out bytes.Buffer
	s, err := Read(strings.NewReader(run), &out)
	if err != nil {
		t.Fatal(err)
	}
	var failed []string
	for _, f := range s.Failures {
		failed = append(failed, f.Name())
	}
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"failures in order", strings.Join(failed, ","), "p/a TestBad/case_one,p/a TestBad,p/a,p/b"},
		{"packages", len(s.Packages), 3},
		{"top-level tests", len(s.Tests), 4},
		{"slow package time", s.Packages[2].Elapsed, 41 * time.Second},
		{"a failed test's output is shown", strings.Contains(out.String(), "got 2, want 3"), true},
		{"a passing test's output is not", strings.Contains(out.String(), "quiet detail"), false},
		{"a build error is shown", strings.Contains(out.String(), "syntax error"), true},
		{"a line that is no event passes through", strings.Contains(out.String(), "not an event"), true},
		{"a package's verdict", strings.Contains(out.String(), "ok   p/c"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %v, want %v\noutput:\n%s", tt.got, tt.want, out.String())
			}
		})
	}
}

func TestWriteTimesAndFailures(t *testing.T) {
	s, _ := Read(strings.NewReader(run), &bytes.Buffer{})
	var out bytes.Buffer
	WriteTimes(&out, s, 2)
	WriteSkips(&out, s)
	WriteFailures(&out, s)
	got := out.String()
	for _, want := range []string{
		"3 packages, 44s summed", "    41.0s  p/c\n     2.5s  p/a\n", "    40.0s  p/c TestSlow\n     1.5s  p/a TestOK\n",
		"== 1 skipped tests\nskip p/c TestSkipped\n", "== 4 failures\nFAIL p/a TestBad/case_one\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	var none bytes.Buffer
	WriteFailures(&none, Summary{})
	if none.String() != "== no failures\n" {
		t.Errorf("no failures: %q", none.String())
	}
}
