// Package testreport reads the event stream of `go test -json` and writes
// what a person wants from a long run: each package's result as it ends,
// the whole output of every test that failed, and at the end a table of
// where the time went (slowest packages and tests) and a list of the
// failures. make test and make flake-hunt pipe their runs through it.
package testreport

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
	// ImportPath names the package of a build event.
	ImportPath string
}

// Result is one test or package that ended.
type Result struct {
	Package string
	Test    string // "" for the package itself
	Elapsed time.Duration
	Failed  bool
	Skipped bool
}

// Name is "package" or "package Test".
func (r Result) Name() string {
	if r.Test == "" {
		return r.Package
	}
	return r.Package + " " + r.Test
}

// Summary is what a run left.
type Summary struct {
	Packages []Result // in the order they ended
	Tests    []Result // top-level tests only
	// Failures are the failed tests (subtests included) and failed
	// packages, in the order they failed.
	Failures []Result
	// Skipped are the top-level tests that skipped themselves.
	Skipped []Result
}

// Failed reports whether anything failed.
func (s Summary) Failed() bool { return len(s.Failures) > 0 }

// Read copies the run's story to out as it goes and returns its summary.
// Lines that are not events (a build error, say) are passed through.
func Read(in io.Reader, out io.Writer) (Summary, error) {
	var s Summary
	outputs := map[string]*strings.Builder{} // per package and test
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil || e.Action == "" {
			fmt.Fprintf(out, "%s\n", line)
			continue
		}
		key := e.Package + "\x00" + e.Test
		switch e.Action {
		case "build-output":
			io.WriteString(out, e.Output)
		case "output":
			b := outputs[key]
			if b == nil {
				b = &strings.Builder{}
				outputs[key] = b
			}
			b.WriteString(e.Output)
		case "pass", "fail", "skip":
			r := Result{Package: e.Package, Test: e.Test, Elapsed: time.Duration(e.Elapsed * float64(time.Second)),
				Failed: e.Action == "fail", Skipped: e.Action == "skip"}
			switch {
			case e.Test == "":
				s.Packages = append(s.Packages, r)
				if r.Failed {
					// The package's own output holds a build error or a
					// TestMain's complaint.
					if b := outputs[key]; b != nil {
						io.WriteString(out, b.String())
					}
					s.Failures = append(s.Failures, r)
				}
				fmt.Fprintf(out, "%-4s %-60s %7.1fs\n", verdict(r), e.Package, e.Elapsed)
			case r.Failed:
				if b := outputs[key]; b != nil {
					io.WriteString(out, b.String())
				}
				s.Failures = append(s.Failures, r)
			}
			if e.Test != "" && !strings.Contains(e.Test, "/") {
				s.Tests = append(s.Tests, r)
				if r.Skipped {
					s.Skipped = append(s.Skipped, r)
				}
			}
			delete(outputs, key)
		}
	}
	return s, sc.Err()
}

func verdict(r Result) string {
	switch {
	case r.Failed:
		return "FAIL"
	case r.Skipped:
		return "skip"
	default:
		return "ok"
	}
}

// WriteTimes writes the slowest packages and tests, n of each, and the
// sum of the packages' times.
func WriteTimes(w io.Writer, s Summary, n int) {
	byTime := func(list []Result) []Result {
		out := slices.Clone(list)
		slices.SortStableFunc(out, func(a, b Result) int { return int(b.Elapsed - a.Elapsed) })
		return out[:min(n, len(out))]
	}
	var total time.Duration
	for _, p := range s.Packages {
		total += p.Elapsed
	}
	fmt.Fprintf(w, "\n== time per package (%d packages, %s summed; they run side by side)\n", len(s.Packages), total.Round(time.Second))
	for _, p := range byTime(s.Packages) {
		fmt.Fprintf(w, "%8.1fs  %s\n", p.Elapsed.Seconds(), p.Package)
	}
	fmt.Fprintf(w, "== slowest tests\n")
	for _, t := range byTime(s.Tests) {
		fmt.Fprintf(w, "%8.1fs  %s\n", t.Elapsed.Seconds(), t.Name())
	}
}

// WriteSkips lists the top-level tests that skipped themselves: a test
// that cannot run here is a gap to see, not to hide.
func WriteSkips(w io.Writer, s Summary) {
	if len(s.Skipped) == 0 {
		return
	}
	fmt.Fprintf(w, "== %d skipped tests\n", len(s.Skipped))
	for _, t := range s.Skipped {
		fmt.Fprintf(w, "skip %s\n", t.Name())
	}
}

// WriteFailures lists what failed, or says nothing did.
func WriteFailures(w io.Writer, s Summary) {
	if !s.Failed() {
		fmt.Fprintln(w, "== no failures")
		return
	}
	fmt.Fprintf(w, "== %d failures\n", len(s.Failures))
	for _, f := range s.Failures {
		fmt.Fprintf(w, "FAIL %s\n", f.Name())
	}
}
