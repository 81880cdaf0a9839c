package integration

// An account routed over both simulated acquirers, on the real stack:
// while the first is down for its payments, they are charged at the
// second, once, and captured and refunded there.

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/paygate/paygate/app"
	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/dev/simbank"
	"github.com/paygate/paygate/internal/dev/simulator"
	"github.com/paygate/paygate/internal/domain/routing"
	"github.com/paygate/paygate/internal/domain/testmode"
	"github.com/paygate/paygate/models"
)

// downAmount is the amount the first simulator refuses (503) while the
// test runs; no other test pays it.
const downAmount = 913721

// setSimFaults sets the first simulator's faults.
func setSimFaults(t *testing.T, f simulator.Faults) {
	t.Helper()
	body, _ := json.Marshal(f)
	req, _ := http.NewRequest(http.MethodPost, env.simHTTP.URL+"/_sim/faults", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+app.DefaultProviderSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("set faults: HTTP %d", resp.StatusCode)
	}
}

func TestFailoverToTheSecondAcquirer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	creds, err := env.gw.Accounts.Create(ctx, merchant.NewAccount{Mode: testmode.Test,
		MerchantID: "60002", AccountID: "60002" + randomHex(3), CaptureMode: models.CaptureManual, Connector: "sim-acquirer",
		AllowedQueryIPs: []string{"127.0.0.1"}, Currencies: []string{"USD"}, Risk: quietRisk,
	})
	if err != nil {
		t.Fatal(err)
	}
	rules := routing.Rules{Routes: []routing.Route{{Name: "cards", When: routing.Condition{Methods: []string{routing.MethodCard}},
		Targets: []routing.Target{{Connector: "sim-acquirer"}, {Connector: "sim-bank"}}}}}
	if err := env.gw.Accounts.SetRouting(ctx, creds.MerchantID, creds.AccountID, rules, []string{"sim-acquirer", "sim-bank"}); err != nil {
		t.Fatal(err)
	}
	setSimFaults(t, simulator.Faults{Mode: simulator.FaultError, Rate: 1, Amount: downAmount})
	t.Cleanup(func() { setSimFaults(t, simulator.Faults{Mode: simulator.FaultNone}) })

	tests := []struct {
		name   string
		amount string
		want   string // the connector that charged
	}{
		{"the first acquirer is down for this payment", "9137.21", "sim-bank"},
		{"the first acquirer takes this one", "12.34", "sim-acquirer"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			orderNo := newOrderNo(t)
			f := cardOrder(creds, orderNo, "4242424242424242")
			f["amount"] = tc.amount
			status, r := authorise(t, signCard(f, creds.SignKey))
			if status != http.StatusOK || r.ResultInfo != "0000:Success" || r.Connector != tc.want {
				t.Fatalf("payment: HTTP %d %+v, want success at %s", status, r, tc.want)
			}
			tx := r.TransactionID
			charges := 0
			for _, c := range env.sim.Charges() {
				if c.Reference == tx {
					charges++
				}
			}
			var bank []simbank.Payment
			for _, p := range env.bank.Payments() {
				if p.MerchantRef == tx {
					bank = append(bank, p)
				}
			}
			wantSim, wantBank := 1, 0
			if tc.want == "sim-bank" {
				wantSim, wantBank = 0, 1
			}
			if charges != wantSim || len(bank) != wantBank {
				t.Fatalf("%d charges at sim-acquirer and %d at sim-bank, want %d and %d", charges, len(bank), wantSim, wantBank)
			}
			if o := findOrder(t, creds.AccountID, orderNo); o.Connector != tc.want {
				t.Errorf("the record names %q, want %q", o.Connector, tc.want)
			}
			// Every attempt is on the record, in order.
			h, err := models.ConsoleRecords{DB: env.gw.DB}.HistoryOf(ctx, tx)
			if err != nil {
				t.Fatal(err)
			}
			var attempts []string
			for _, a := range h.Charges {
				attempts = append(attempts, a.Connector+":"+a.Outcome)
			}
			want := []string{"sim-acquirer:approved"}
			if tc.want == "sim-bank" {
				want = []string{"sim-acquirer:down", "sim-bank:approved"}
			}
			if !slices.Equal(attempts, want) {
				t.Errorf("recorded attempts %v, want %v", attempts, want)
			}
			if tc.want != "sim-bank" {
				return
			}
			// The capture and the refund go where the charge was made.
			_, b := batch(t, creds, "/v1/capture", "capture_orders", []batchEntry{ref(tx, orderNo, tc.amount)})
			if b.ReturnStatus != "1" || len(b.Entries) != 1 || b.Entries[0]["capture_status"] != "1" {
				t.Fatalf("capture: %s %q %v", b.ReturnStatus, b.ReturnMessage, b.Entries)
			}
			_, b = batch(t, creds, "/v1/refund", "refund_orders", []batchEntry{
				with(ref(tx, orderNo, tc.amount), "refund_amount", "10.00", "refund_reason", "failover test")})
			if b.ReturnStatus != "1" || len(b.Entries) != 1 || b.Entries[0]["refund_status"] != "1" {
				t.Fatalf("refund: %s %q %v", b.ReturnStatus, b.ReturnMessage, b.Entries)
			}
			p := bankPayment(t, tx)
			if p.State != simbank.StateCaptured || p.Captured != downAmount || len(bankRefunds(p.PaymentID)) != 1 {
				t.Errorf("sim-bank payment %+v with %d refunds, want captured %d and one refund", p, len(bankRefunds(p.PaymentID)), downAmount)
			}
		})
	}
}
