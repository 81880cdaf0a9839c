// Command testreport reads `go test -json` on its standard input and writes
// each package's result, the output of failed tests, where the time went
// and what failed. It exits 1 when anything failed, so a pipeline keeps the
// tests' verdict.
package main

import (
	"fmt"
	"os"

	"github.com/paygate/paygate/internal/dev/testreport"
)

func main() {
	s, err := testreport.Read(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(2)
	}
	testreport.WriteTimes(os.Stdout, s, 12)
	testreport.WriteSkips(os.Stdout, s)
	testreport.WriteFailures(os.Stdout, s)
	if s.Failed() {
		os.Exit(1)
	}
}
