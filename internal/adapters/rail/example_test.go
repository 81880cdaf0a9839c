package rail_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"time"

	"github.com/paygate/paygate/internal/adapters/rail"
	"github.com/paygate/paygate/internal/dev/railsim"
)

// A payout to the fail-once test beneficiary: the first attempt fails, and
// the re-run under the same idempotency key completes it, once.
func ExampleClient_Submit() {
	// SettleDelay -1: the rail decides each attempt as soon as it is read.
	srv, err := railsim.NewServer(railsim.Options{Logger: slog.New(slog.DiscardHandler), SettleDelay: -1})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()

	c, err := rail.NewClient(ts.URL, 5*time.Second)
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	req := rail.SubmitRequest{
		IdempotencyKey: "payout/10086/6f1c2a4e-3d5b-4c8e-9a7f-1b2c3d4e5f60",
		Amount:         10_000, // EUR 100.00
		Currency:       "EUR",
		Beneficiary:    rail.Beneficiary{Name: "Erika Mustermann", IBAN: railsim.IBANFailOnce, BIC: "COBADEFFXXX", Country: "DE"},
		Reference:      "20300102-AB12CD",
	}
	tr, _ := c.Submit(ctx, req)
	fmt.Println(tr.Status, tr.Attempt)
	tr, _ = c.Get(ctx, tr.ID)
	fmt.Println(tr.Status, tr.FailureType)
	tr, _ = c.Submit(ctx, req) // the finance re-run: same key, same body
	fmt.Println(tr.Status, tr.Attempt)
	tr, _ = c.FindByKey(ctx, req.IdempotencyKey)
	fmt.Println(tr.Status, len(tr.Attempts))

	req.Amount++
	_, err = c.Submit(ctx, req)
	fmt.Println(errors.Is(err, rail.ErrConflict), rail.Retryable(err))
	// Output:
	// submitted 1
	// failed beneficiary_bank_unavailable
	// submitted 2
	// completed 2
	// true false
}
