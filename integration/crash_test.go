package integration

import (
	"strings"
	"testing"
	"time"
)

// TestWorkerCrashMidChargeChargesOnce stops the worker while the acquirer is
// holding a charge, starts a new one, and checks the order still completes
// with the true outcome and exactly one charge.
func TestWorkerCrashMidChargeChargesOnce(t *testing.T) {
	creds := env.auto
	orderNo := newOrderNo(t)
	type answer struct {
		status int
		r      respon
	}
	done := make(chan answer, 1)
	go func() {
		s, r := authorise(t, signCard(cardOrder(creds, orderNo, "4000000000000341"), creds.SignKey))
		done <- answer{s, r}
	}()

	// Wait until the acquirer has the charge, that is while the worker is
	// inside the charge call.
	waitForSimCharge(t, orderNo)
	env.worker.Stop()
	w, err := env.gw.NewWorker()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	env.worker = w

	var got answer
	select {
	case got = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("no answer within 60s after the worker restart")
	}
	checkPaidOnce(t, got.status, got.r, creds.AccountID, orderNo)
}

// waitForSimCharge waits, up to 10 s, until the simulator holds the
// order's charge: the worker is then inside the charge call.
func waitForSimCharge(t *testing.T, orderNo string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !simHasCharge(orderNo) {
		if time.Now().After(deadline) {
			t.Fatal("the charge never reached the simulator")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkPaidOnce checks an answer of 12.34 USD paid with auto capture, the
// record paid and captured, and one charge at the simulator.
func checkPaidOnce(t *testing.T, status int, r respon, accountID, orderNo string) {
	t.Helper()
	if status != 200 || r.ResultInfo != "0000:Success" || r.OrderStatus != "1" {
		t.Fatalf("HTTP %d, %s / %s", status, r.OrderStatus, r.ResultInfo)
	}
	if n := chargesFor(r.TransactionID); n != 1 {
		t.Errorf("simulator charges = %d, want 1", n)
	}
	if o := findOrder(t, accountID, orderNo); o.PaymentStatus != 3000 || o.CapturedAmount != 1234 {
		t.Errorf("record: payment_status %d captured %d", o.PaymentStatus, o.CapturedAmount)
	}
}

// simHasCharge reports whether the simulator holds a charge for the order,
// found by the idempotency key the workflow derives from its id.
func simHasCharge(orderNo string) bool {
	for _, c := range env.sim.Charges() {
		if strings.Contains(c.IdempotencyKey, ":"+orderNo+":") {
			return true
		}
	}
	return false
}
