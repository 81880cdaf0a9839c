package activities_test

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/internal/adapters/ledger"
	"github.com/paygate/paygate/internal/dev/testdb"
	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/payout"
	"github.com/paygate/paygate/models"
)

// stepLedger is the ledger as PayoutOpen and PayoutClose see it: Reserve
// answers reserveErr; the references it was asked for are kept.
type stepLedger struct {
	reserveErr       error
	reserved         []string
	settled, release []string
}

func (l *stepLedger) Reserve(_ context.Context, r ledger.Reservation) error {
	l.reserved = append(l.reserved, r.Reference)
	return l.reserveErr
}

func (l *stepLedger) Settle(_ context.Context, ref string) error {
	l.settled = append(l.settled, ref)
	return nil
}

func (l *stepLedger) Release(_ context.Context, ref string) error {
	l.release = append(l.release, ref)
	return nil
}

// TestPayoutOpen runs the real PayoutOpen on Postgres: the payout is
// recorded at NEW with its charges and its money reserved, a short deposit
// is a result, and a refused reservation is reported with the ledger's
// refusal as the merchant reads it, without Temporal's wrapping.
func TestPayoutOpen(t *testing.T) {
	db := testdb.Open(t, "paygate_payoutopen_")
	ch := payout.Charges{
		Quote: payout.Quote{SourceCurrency: "USD", PaymentCurrency: "USD", Rate: payout.RateScale,
			PaymentAmount: money.FromMinor(10000, "USD"), SourceAmount: money.FromMinor(10000, "USD")},
		FeePaidBy: payout.FeePayer, Fee: money.FromMinor(500, "USD"), PayerPays: money.FromMinor(10500, "USD"),
		Transfer: money.FromMinor(10000, "USD"), BeneficiaryReceives: money.FromMinor(10000, "USD"),
	}
	tests := []struct {
		name        string
		reserveErr  error
		wantRefused string
		wantShort   bool
	}{
		{"reserved", nil, "", false},
		{"a short deposit", fmt.Errorf("reserve: %w", ledger.ErrInsufficientFunds), "", true},
		{"a reservation the ledger refuses", fmt.Errorf("reserve: %w", ledger.ErrReferenceConflict), "ledger refused the reservation", false},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := &stepLedger{reserveErr: tc.reserveErr}
			p := &activities.PayoutActivities{Records: models.Records{DB: db}, Ledger: l}
			id := fmt.Sprintf("payout/m1/open-%d", i)
			got, err := p.PayoutOpen(t.Context(), activities.PayoutOpenInput{
				Start: activities.PayoutRecordStartInput{ID: id, MerchantID: "m1", AccountID: "a1", RequestID: fmt.Sprintf("open-%d", i),
					TransactionID: fmt.Sprintf("90000000000000000%02d", i), ShortReferenceID: "20260101-OPEN0" + fmt.Sprint(i),
					Instruction: payout.Instruction{PaymentAmount: money.FromMinor(10000, "USD"), SourceCurrency: "USD"},
					Run:         1, At: time.Now()},
				Charges: &ch, Reference: id + "/run/1"})
			if err != nil {
				t.Fatal(err)
			}
			if got.ReserveRefused != tc.wantRefused || got.Insufficient != tc.wantShort || got.Charges.Fee.Minor != 500 {
				t.Errorf("PayoutOpen = %+v, want refused %q, short %v", got, tc.wantRefused, tc.wantShort)
			}
			if len(l.reserved) != 1 || l.reserved[0] != id+"/run/1" {
				t.Errorf("reserved %v", l.reserved)
			}
			rec, err := models.FindPayout(t.Context(), db, id)
			if err != nil || rec.Status != string(payout.StatusNew) || rec.FeeAmount != 500 || rec.TransferAmount != 10000 {
				t.Errorf("record = %+v, %v; want NEW with its charges", rec, err)
			}
		})
	}
}

// TestPayoutOpenDrawsAnotherShortReference: two payouts of one day that
// drew the same short reference are both recorded; the second gets another
// of the same day and reports it, a retry of its step reports the one
// recorded, and a payout whose reference is its own reports none.
func TestPayoutOpenDrawsAnotherShortReference(t *testing.T) {
	db := testdb.Open(t, "paygate_payoutref_")
	p := &activities.PayoutActivities{Records: models.Records{DB: db}, Ledger: &stepLedger{}}
	ch := payout.Charges{Transfer: money.FromMinor(100, "USD"), Fee: money.FromMinor(0, "USD"),
		BeneficiaryReceives: money.FromMinor(100, "USD"), PayerPays: money.FromMinor(100, "USD")}
	open := func(n int) activities.PayoutOpenResult {
		t.Helper()
		id := fmt.Sprintf("payout/m1/ref-%d", n)
		got, err := p.PayoutOpen(t.Context(), activities.PayoutOpenInput{
			Start: activities.PayoutRecordStartInput{ID: id, MerchantID: "m1", AccountID: "a1", RequestID: fmt.Sprintf("ref-%d", n),
				TransactionID: fmt.Sprintf("80000000000000000%02d", n), ShortReferenceID: "20260101-SAME01",
				Instruction: payout.Instruction{PaymentAmount: money.FromMinor(100, "USD"), SourceCurrency: "USD"},
				Run:         1, At: time.Date(2026, 1, 2, 0, 0, 1, 0, time.UTC)},
			Charges: &ch, Reference: id + "/run/1"})
		if err != nil {
			t.Fatalf("payout %d: %v", n, err)
		}
		rec, err := models.FindPayout(t.Context(), db, id)
		if err != nil {
			t.Fatal(err)
		}
		if want := cmp.Or(got.ShortReferenceID, "20260101-SAME01"); rec.ShortReferenceID != want {
			t.Errorf("payout %d: recorded %s, reported %q", n, rec.ShortReferenceID, got.ShortReferenceID)
		}
		return got
	}
	tests := []struct {
		name   string
		payout int
		check  func(t *testing.T, ref string, first string)
	}{
		{"the first keeps its own", 1, func(t *testing.T, ref, _ string) {
			if ref != "" {
				t.Errorf("reported %q, want none", ref)
			}
		}},
		{"the second gets another of the same day", 2, func(t *testing.T, ref, _ string) {
			if !payout.ValidShortReference(ref) || ref == "20260101-SAME01" || !strings.HasPrefix(ref, "20260101-") {
				t.Errorf("reported %q, want another reference of 2026-01-01", ref)
			}
		}},
		{"a retry of the second reports the one recorded", 2, func(t *testing.T, ref, first string) {
			if ref != first {
				t.Errorf("reported %q, want %q as the first time", ref, first)
			}
		}},
	}
	var second string
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := open(tc.payout)
			tc.check(t, got.ShortReferenceID, second)
			if tc.payout == 2 && second == "" {
				second = got.ShortReferenceID
			}
		})
	}
}

// TestPayoutOpenRetriedAtAnotherPrice runs PayoutOpen twice for one run on
// the real ledger, as a retry after a worker died past the reservation's
// commit does, the second time at another price: the ledger refuses the
// second reservation, and the run's close with its reference (what the
// workflow does as it fails, payout-release-unreserved) gives the first
// reservation back, which nothing else would ever release.
func TestPayoutOpenRetriedAtAnotherPrice(t *testing.T) {
	db := testdb.Open(t, "paygate_payoutretry_")
	ctx := t.Context()
	l := ledger.New(db)
	if _, err := l.TopUp(ctx, ledger.TopUp{Reference: "funding", MerchantID: "m1", AccountID: "a1", Currency: "USD", Amount: 50000}); err != nil {
		t.Fatal(err)
	}
	p := &activities.PayoutActivities{Records: models.Records{DB: db}, Ledger: l}
	const id = "payout/m1/retried"
	charges := func(fee int64) *payout.Charges {
		return &payout.Charges{FeePaidBy: payout.FeePayer, Fee: money.FromMinor(fee, "USD"), PayerPays: money.FromMinor(10000+fee, "USD"),
			Transfer: money.FromMinor(10000, "USD"), BeneficiaryReceives: money.FromMinor(10000, "USD")}
	}
	open := func(fee int64) activities.PayoutOpenResult {
		t.Helper()
		got, err := p.PayoutOpen(ctx, activities.PayoutOpenInput{
			Start: activities.PayoutRecordStartInput{ID: id, MerchantID: "m1", AccountID: "a1", RequestID: "retried",
				TransactionID: "9100000000000000001", ShortReferenceID: "20260101-RETRY1",
				Instruction: payout.Instruction{PaymentAmount: money.FromMinor(10000, "USD"), SourceCurrency: "USD"},
				Run:         1, At: time.Now()},
			Charges: charges(fee), Reference: id + "/run/1"})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	balance := func() ledger.Balance {
		t.Helper()
		b, err := l.Balance(ctx, "m1", "a1", "USD")
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if got := open(500); got.ReserveRefused != "" || got.Insufficient {
		t.Fatalf("first open = %+v", got)
	}
	if got := open(600); got.ReserveRefused == "" {
		t.Fatalf("the retry at another price = %+v, want its reservation refused", got)
	}
	if b := balance(); b.Reserved != 10500 || b.Available != 39500 {
		t.Fatalf("after the retry: %+v, want the first reservation open", b)
	}
	err := p.PayoutClose(ctx, activities.PayoutCloseInput{Reference: id + "/run/1",
		Record: activities.PayoutRecordInput{ID: id, Status: payout.StatusFailed, FailureType: payout.FailureUnknown,
			FailureReason: "funds could not be reserved"}})
	if err != nil {
		t.Fatal(err)
	}
	if b := balance(); b.Reserved != 0 || b.Available != 50000 {
		t.Errorf("after the close: %+v, want everything available again", b)
	}
}
