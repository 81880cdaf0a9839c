package integration

import (
	"context"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/adapters/ledger"
	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/domain/testmode"
	"github.com/paygate/paygate/models"
)

// waitForBalance polls the ledger until the account's USD balance is want:
// the order workflow posts beside the payment, not before its answer.
func waitForBalance(t *testing.T, l *ledger.Ledger, creds merchant.Credentials, want ledger.Balance) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := l.Balance(context.Background(), creds.MerchantID, creds.AccountID, "USD")
		if err != nil {
			t.Fatal(err)
		}
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("balance = %+v, want %+v", got, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestPaidOrderCreditsPending: on the real stack, a paid order credits the
// merchant's pending money (the acquirer has not settled it) with its exact
// amount and a refund before the settlement debits it, each under its
// reference and once.
func TestPaidOrderCreditsPending(t *testing.T) {
	t.Parallel()
	creds, err := env.gw.Accounts.Create(context.Background(), merchant.NewAccount{Mode: testmode.Test,
		MerchantID: "70001", AccountID: "70001" + randomHex(3), CaptureMode: models.CaptureAuto,
		AllowedQueryIPs: []string{"127.0.0.1"}, Currencies: []string{"USD"}, Risk: quietRisk,
	})
	if err != nil {
		t.Fatal(err)
	}
	l := ledger.New(env.gw.DB)
	tx, no := paidOrder(t, creds, "123.45")
	waitForBalance(t, l, creds, ledger.Balance{Currency: "USD", Pending: 12345})

	_, r := batch(t, creds, "/v1/refund", "refund_orders", []batchEntry{
		with(ref(tx, no, "123.45"), "refund_amount", "23.40", "refund_reason", "customer request"),
	})
	if r.ReturnStatus != "1" || len(r.Entries) != 1 || r.Entries[0]["refund_status"] != "1" {
		t.Fatalf("refund: %s %q %v", r.ReturnStatus, r.ReturnMessage, r.Entries)
	}
	waitForBalance(t, l, creds, ledger.Balance{Currency: "USD", Pending: 10005})

	entries, err := l.Entries(context.Background(), ledger.EntryFilter{MerchantID: creds.MerchantID, AccountID: creds.AccountID})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		kind, reference string
		pending         int64
	}{
		{models.EntryOrderPaid, "order/" + tx + "/paid", 12345},
		{models.EntryRefund, "refund/" + tx + "-01", -2340},
	}
	if len(entries) != len(want) {
		t.Fatalf("entries = %+v, want %d", entries, len(want))
	}
	for i, w := range want {
		e := entries[i]
		var pending, sum int64
		for _, ln := range e.Lines {
			sum += ln.Amount
			if ln.AccountKind == models.LedgerPending {
				pending = ln.Amount
			}
		}
		if e.Kind != w.kind || e.Reference != w.reference || pending != w.pending || sum != 0 {
			t.Errorf("entry %d = %+v, want %s %s moving pending by %d, balanced", i, e, w.kind, w.reference, w.pending)
		}
	}
}
