package main

import (
	"context"
	"io"
)

func runBench(ctx context.Context, args []string, stdout io.Writer) error {
	return nil
}
