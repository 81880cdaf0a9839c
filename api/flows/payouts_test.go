package flows

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/notify"
	"github.com/paygate/paygate/internal/domain/payout"
	"github.com/paygate/paygate/internal/domain/payout/payouttest"
	"github.com/paygate/paygate/models"
)

// TestPayoutRunInputKeepsTheRecordedCharges: a re-run starts from the
// charges its payout recorded (so the rail gets the same transfer under the
// same key even after the operator changed rates), and prices again only a
// payout that was never priced.
func TestPayoutRunInputKeepsTheRecordedCharges(t *testing.T) {
	in := payouttest.Valid(t)
	raw, _ := json.Marshal(in)
	rate, err := payout.ParseRate("0.92")
	if err != nil {
		t.Fatal(err)
	}
	quoted := time.Date(2026, 11, 23, 9, 26, 53, 0, time.UTC)
	charges := payout.Charges{
		Quote: payout.Quote{SourceCurrency: "USD", PaymentCurrency: "EUR", Rate: rate,
			PaymentAmount: money.FromMinor(10000, "EUR"), SourceAmount: money.FromMinor(10870, "USD"), QuotedAt: quoted},
		FeePaidBy: in.FeePaidBy, Fee: money.FromMinor(500, "USD"), PayerPays: money.FromMinor(11370, "USD"),
		Transfer: money.FromMinor(10870, "USD"), BeneficiaryReceives: money.FromMinor(10000, "EUR"),
	}
	in.SourceCurrency = "USD"
	raw, _ = json.Marshal(in)
	quote, _ := json.Marshal(charges.Quote)
	cases := []struct {
		name string
		p    models.Payout
		want *payout.Charges
	}{
		{name: "failed before it was priced", p: models.Payout{ID: "payout/10086/a", Request: raw, Run: 1}},
		{name: "priced, then failed at the rail", want: &charges, p: models.Payout{ID: "payout/10086/b", Request: raw, Run: 2,
			Quote: quote, SourceAmount: 10870, FeeAmount: 500, PayerPaysAmount: 11370, TransferAmount: 10870,
			BeneficiaryReceivesAmount: 10000}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PayoutRunInput(&tc.p, notify.DefaultSchedule())
			if err != nil {
				t.Fatal(err)
			}
			if got.Run != tc.p.Run+1 || got.ID != tc.p.ID {
				t.Errorf("run %d of %s, want %d of %s", got.Run, got.ID, tc.p.Run+1, tc.p.ID)
			}
			gotJSON, _ := json.Marshal(got.Charges)
			wantJSON, _ := json.Marshal(tc.want)
			if string(gotJSON) != string(wantJSON) {
				t.Errorf("charges\n%s\nwant\n%s", gotJSON, wantJSON)
			}
		})
	}
}
