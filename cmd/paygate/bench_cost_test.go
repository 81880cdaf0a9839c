package main

import (
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/dev/proccpu"
)

// TestCostTable: each run's CPU per request by process, statements and
// commits, and the gateway's own share of Temporal's (its API's and
// worker's CPU; the simulators' is theirs).
func TestCostTable(t *testing.T) {
	sample := func(apiMS, workerMS, simMS, temporalMS, pgMS int, statements float64, commits int64) costSample {
		ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
		return costSample{cpu: proccpu.Sample{"paygate api": {1: ms(apiMS)}, "paygate worker": {2: ms(workerMS)}, "simulators": {3: ms(simMS)},
			"temporal": {4: ms(temporalMS)}, "postgres": {5: ms(pgMS)}},
			statements: statements, commits: commits}
	}
	runs := []runCost{
		{name: "baseline", requests: 100, before: sample(0, 0, 0, 0, 0, 10, 100), after: sample(0, 0, 100, 0, 0, 10, 100)},
		{name: "gateway", requests: 100, before: sample(0, 0, 100, 0, 0, 10, 100), after: sample(400, 800, 200, 2400, 600, 1010, 400)},
		{name: "floor", requests: 100, before: sample(400, 800, 200, 2400, 600, -1, 400), after: sample(400, 800, 200, 4800, 600, -1, 400)},
	}
	var b strings.Builder
	writeCostTable(&b, runs)
	writeOwnShare(&b, runs)
	want := `
cost per request, by process (CPU ms), and the gateway's database work

| | baseline | gateway | floor |
|---|---|---|---|
| paygate api | 0.00 | 4.00 | 0.00 |
| paygate worker | 0.00 | 8.00 | 0.00 |
| simulators | 1.00 | 1.00 | 0.00 |
| temporal | 0.00 | 24.00 | 24.00 |
| postgres | 0.00 | 6.00 | 0.00 |
| gateway SQL statements | 0.00 | 10.00 | n/a |
| gateway database commits | 0.00 | 3.00 | 0.00 |

gateway's own CPU per payment: api 4.00 ms + worker 8.00 ms = 12.00 ms, 0.50x Temporal's 24.00 ms
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
