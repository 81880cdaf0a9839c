package reconcile_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/internal/adapters/ledger"
	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/adapters/notifyclient"
	"github.com/paygate/paygate/internal/adapters/reconcile"
	"github.com/paygate/paygate/internal/domain/notify"
	"github.com/paygate/paygate/internal/domain/recon"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

// signKeys gives the delivery the account's key.
type signKeys struct{ key string }

func (k signKeys) Load(_ context.Context, merchantID, accountID string) (*merchant.Account, error) {
	return merchant.NewTestAccount(models.Account{ID: accountID, MerchantID: merchantID}, k.key), nil
}

// TestSettlementNotices: a merchant account with a settlement notify URL
// hears what a day's settlement posted to it, once per what it says: the
// notification carries the day's totals, no encryption_data, and the
// webhook signature of its body; the same day again records nothing new,
// more money posted later tells the new totals under a new id.
func TestSettlementNotices(t *testing.T) {
	db := testDB(t)
	ctx := t.Context()
	got := make(chan url.Values, 4)
	var verified []error
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		verified = append(verified, notify.VerifyHeaders("sign-key", r.Header, body, time.Now(), 0))
		form, _ := url.ParseQuery(string(body))
		got <- form
	}))
	t.Cleanup(receiver.Close)
	if err := db.Create(&models.Merchant{ID: proofMerchant, Name: "Notices"}).Error; err != nil {
		t.Fatal(err)
	}
	notifiedAccount(t, db, proofAccount, receiver.URL+"/settlements", recon.Pricing{})
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	item := func(key string, typ string, gross, fee, net int64) models.ReconItem {
		return models.ReconItem{Connector: "sim-acquirer", Day: day, ItemKey: key, Source: models.ReconSourceLine, Type: typ,
			Gross: gross, Fee: fee, Net: net, Currency: proofCurrency, Class: "matched", MerchantID: proofMerchant,
			AccountID: proofAccount, Posted: "x/" + key, Status: models.ReconNone}
	}
	run := &models.ReconRun{Connector: "sim-acquirer", Day: day, RanAt: time.Now()}
	// A duplicate of line 1 written off to the gateway, and the acquirer's
	// fee adjustment (the gateway's cost), are not the merchant's: they
	// are in no total.
	dup := item("line/5", "capture", 10000, 320, 9680)
	dup.Class, dup.Status = "duplicate", models.ReconWrittenOff
	adj := item("line/6", "fee_adjustment", 0, 15, -15)
	if err := models.SaveReconRun(ctx, db, run, []models.ReconItem{
		item("line/1", "capture", 10000, 320, 9680), item("line/2", "capture", 5000, 175, 4825), item("line/3", "refund", 2000, 0, -2000),
		dup, adj,
	}); err != nil {
		t.Fatal(err)
	}
	svc := &reconcile.Service{DB: db, Ledger: ledger.New(db)}
	ids, err := svc.SettlementNotices(ctx, "sim-acquirer", day)
	if err != nil || len(ids) != 1 {
		t.Fatalf("notices %v, %v; want one", ids, err)
	}
	if again, err := svc.SettlementNotices(ctx, "sim-acquirer", day); err != nil || len(again) != 1 || again[0] != ids[0] {
		t.Errorf("the same day again: %v, %v; want %v", again, err, ids)
	}

	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.RegisterActivity(&activities.Activities{Records: models.Records{DB: db}, Accounts: signKeys{"sign-key"},
		Notifier: notifyclient.NewClient(5*time.Second, true)})
	env.ExecuteWorkflow(workflows.Redeliver, workflows.RedeliverInput{NotifyIDs: ids})
	var res workflows.RedeliverResult
	if err := env.GetWorkflowResult(&res); err != nil || len(res.Delivered) != 1 {
		t.Fatalf("delivery %+v, %v", res, err)
	}
	f := <-got
	want := map[string]string{"notify_type": "settlement", "notify_id": ids[0], "merchant_id": proofMerchant, "account_id": proofAccount,
		"connector": "sim-acquirer", "settlement_date": "2026-11-20", "currency": "EUR", "captures": "2", "captured_amount": "150.00",
		"refunds": "1", "refunded_amount": "20.00", "chargebacks": "0", "encryption_data": "",
		// The items' entries are stand-ins the ledger does not hold, so it
		// booked the account no fee (TestSettlementNoticeTellsTheMerchantsFees
		// has the fees).
		"fees": "0.00", "net_amount": "130.00"}
	for k, v := range want {
		if f.Get(k) != v {
			t.Errorf("%s = %q, want %q", k, f.Get(k), v)
		}
	}
	if len(verified) != 1 || verified[0] != nil {
		t.Errorf("webhook signature: %v", verified)
	}

	// A capture the ledger took on a later run: the day's new totals.
	if err := models.SaveReconRun(ctx, db, run, []models.ReconItem{item("line/4", "capture", 1000, 59, 941)}); err != nil {
		t.Fatal(err)
	}
	later, err := svc.SettlementNotices(ctx, "sim-acquirer", day)
	if err != nil || len(later) != 1 || later[0] == ids[0] {
		t.Errorf("after more was posted: %v, %v; want a new id", later, err)
	}
}
