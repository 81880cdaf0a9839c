package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	gwclient "github.com/paygate/paygate/client"
	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/domain/payout"
	"github.com/paygate/paygate/workflows"
)

// TestScheduledPayoutPaysTheAvailableBalance: on the real stack, an account
// with a daily payout schedule (10% held back, a minimum of 100.00) has its
// available balance paid out by the day's ScheduledPayouts run through a
// Payout workflow at the simulated rail, the beneficiary bearing the fee;
// the run repeated pays nothing more.
func TestScheduledPayoutPaysTheAvailableBalance(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	creds := payoutAccount(t, 1_000_00)
	// The template's notify_url hears of the payout, as an API payout's
	// does (it heard nothing before: the schedule dropped it).
	box, notifyURL := newInbox(t, gwclient.New(env.api.URL,
		gwclient.Credentials{MerchantID: creds.MerchantID, AccountID: creds.AccountID, SignKey: creds.SignKey}))
	tmpl := payout.Request{NotifyURL: notifyURL,
		PaymentMethod: "SWIFT", SwiftChargeOption: "SHARED", FundSource: "DepositAccount", Reference: "scheduled",
		Beneficiary: &payout.Beneficiary{EntityType: "COMPANY", CompanyName: "Muller GmbH",
			Address: payout.BeneficiaryAddress{City: "Berlin", CountryCode: "DE"},
			BankDetails: payout.BankDetails{AccountName: "Muller GmbH", BankCountryCode: "DE", IBAN: ibanCompletes,
				SwiftCode: "COBADEFFXXX", AccountCurrency: "USD"}},
		Payer: &payout.Payer{EntityType: "COMPANY", CompanyName: "Demo Ltd", Address: payout.PayerAddress{CountryCode: "US"}},
	}
	sched := &payout.Schedule{Interval: payout.Daily, Currency: "USD", Minimum: 100_00, ReserveBasisPoints: 1000, Template: tmpl}
	if err := env.gw.Accounts.SetSettlement(ctx, creds.MerchantID, creds.AccountID, merchant.SettlementSettings{PayoutSchedule: sched}); err != nil {
		t.Fatal(err)
	}
	run := func() workflows.ScheduledPayoutsResult {
		t.Helper()
		wr, err := env.temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "scheduled-payouts-" + randomHex(4), TaskQueue: workflows.TaskQueue},
			workflows.ScheduledPayoutsWorkflowType, workflows.ScheduledPayoutsInput{})
		if err != nil {
			t.Fatal(err)
		}
		var res workflows.ScheduledPayoutsResult
		if err := wr.Get(ctx, &res); err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := run()
	id := workflows.PayoutWorkflowID(creds.MerchantID, payout.ScheduledRequestID(creds.MerchantID, creds.AccountID, time.Now()))
	if !strings.Contains(strings.Join(res.Started, " "), id) {
		t.Fatalf("started %v, skipped %v; want %s", res.Started, res.Skipped, id)
	}
	var st workflows.PayoutState
	if err := env.temporal.GetWorkflow(ctx, id, "").Get(ctx, &st); err != nil {
		t.Fatal(err)
	}
	if st.Status != payout.StatusCompleted {
		t.Fatalf("scheduled payout %s: %+v", id, st)
	}
	requestID := payout.ScheduledRequestID(creds.MerchantID, creds.AccountID, time.Now())
	if n, err := box.await(ctx, "payout", requestID); err != nil || n.Status != string(payout.StatusCompleted) {
		t.Errorf("the template's notify_url heard %+v, %v; want the payout COMPLETED", n, err)
	}
	// 1,000.00 less the 10% reserve went out; the rail's fee came out of
	// what the beneficiary received.
	if b := balance(t, creds); b.Available != 100_00 || b.Reserved != 0 {
		t.Errorf("balance after the payout = %+v, want 100.00 available", b)
	}
	again := run()
	if strings.Contains(strings.Join(again.Started, " "), id) ||
		!strings.Contains(strings.Join(again.Skipped, " "), creds.MerchantID+"/"+creds.AccountID+": the day's payout is made") {
		t.Errorf("the run again: started %v, skipped %v", again.Started, again.Skipped)
	}
	if b := balance(t, creds); b.Available != 100_00 {
		t.Errorf("balance after the run again = %+v", b)
	}
}
