package reconcile_test

import (
	"slices"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/paygate/paygate/internal/adapters/ledger"
	"github.com/paygate/paygate/internal/adapters/reconcile"
	"github.com/paygate/paygate/internal/domain/recon"
	"github.com/paygate/paygate/internal/domain/refund"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/models"
)

// TestSettlementNoticeTellsTheMerchantsFees: a settlement notice and the
// statement tell the fees the account was charged and what the day came
// to for it, as the ledger booked them: under blended pricing the
// account's fee, not the acquirer's; a refund's fee, which the gateway
// bears, in neither. Before, both summed the acquirer's fees and nets of
// every line: a blended account read 3.20 of fees where it paid 2.05.
func TestSettlementNoticeTellsTheMerchantsFees(t *testing.T) {
	db := testDB(t)
	ctx := t.Context()
	if err := db.Create(&models.Merchant{ID: proofMerchant, Name: "Fees"}).Error; err != nil {
		t.Fatal(err)
	}
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	led := ledger.New(db)
	tests := []struct {
		name    string
		account string
		pricing recon.Pricing
		// The day's lines: a capture of 100.00 the acquirer took 3.20 of,
		// and a refund of 20.00 it took 0.30 for.
		wantFees, wantNet string
		// The statement's capture and refund rows: fee and net.
		wantCapture, wantRefund [2]int64
	}{
		{"the acquirer's fee passed through", "A-PASS", recon.Pricing{}, "3.20", "76.80", [2]int64{320, 9680}, [2]int64{0, -2000}},
		{"blended: 0.25 and 1.80%", "A-BLEND", recon.Pricing{Blended: &recon.FeeSchedule{Fixed: 25, BasisPoints: 180}}, "2.05", "77.95",
			[2]int64{205, 9795}, [2]int64{0, -2000}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			notifiedAccount(t, db, tc.account, "http://127.0.0.1:1/settlements", tc.pricing)
			order := "13798686700957860" + string(rune('1'+i)) + "0"
			if _, err := led.CreditOrder(ctx, ledger.OrderPosting{Reference: "order/" + order + "/paid", OrderKey: order,
				MerchantID: proofMerchant, AccountID: tc.account, Currency: proofCurrency, Amount: 10000}); err != nil {
				t.Fatal(err)
			}
			// The refund draws on the capture's pending money; its
			// settlement, the acquirer's taking it back, is posted too.
			refundKey := order + "-R1"
			if _, err := led.DebitRefund(ctx, ledger.OrderPosting{Reference: "refund/" + refundKey, OrderKey: order,
				MerchantID: proofMerchant, AccountID: tc.account, Currency: proofCurrency, Amount: 2000}); err != nil {
				t.Fatal(err)
			}
			capture := recon.Line{No: 1, Reference: "ch_" + order, OrderKey: order, Type: recon.Capture, Gross: 10000, Fee: 320, Net: 9680,
				Currency: proofCurrency}
			refunded := recon.Line{No: 2, Reference: "re_" + order, OrderKey: order, Type: recon.Refund, Gross: 2000, Fee: 30, Net: -2030,
				Currency: proofCurrency}
			connector := "sim-" + tc.account
			svc := &reconcile.Service{DB: db, Ledger: led, Connectors: map[string]reconcile.Connector{connector: {
				Source: &switchedReport{lines: []recon.Line{capture, refunded}}, Terms: reconcile.Terms{Days: 1}}}}
			// The record owes both: the capture and the refund of the day
			// before, whose rows reconciliation reads.
			seedOwed(t, db, connector, tc.account, order, refundKey, day.AddDate(0, 0, -1))
			if _, err := svc.Reconcile(ctx, connector, day); err != nil {
				t.Fatal(err)
			}
			if sum, err := svc.Post(ctx, connector, day, nil); err != nil || sum.Posted != 2 {
				t.Fatalf("posted %+v, %v; want the two lines", sum, err)
			}
			ids, err := svc.SettlementNotices(ctx, connector, day)
			if err != nil || len(ids) != 1 {
				t.Fatalf("notices %v, %v; want one", ids, err)
			}
			n, err := models.FindNotification(ctx, db, ids[0])
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"captures": "1", "captured_amount": "100.00", "refunds": "1", "refunded_amount": "20.00",
				"fees": tc.wantFees, "net_amount": tc.wantNet}
			for k, v := range want {
				if n.Fields[k] != v {
					t.Errorf("notice %s = %q, want %q", k, n.Fields[k], v)
				}
			}
			lines, err := svc.Statement(ctx, proofMerchant, tc.account, day, day.AddDate(0, 0, 1))
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][2]int64{}
			for _, l := range lines {
				got[l.Type] = [2]int64{l.Fee, l.Net}
			}
			if got["capture"] != tc.wantCapture || got["refund"] != tc.wantRefund || len(got) != 2 {
				t.Errorf("statement fee and net by type = %v, want capture %v and refund %v", got, tc.wantCapture, tc.wantRefund)
			}
		})
	}
}

// seedOwed records order, paid 100.00 at connector at, and its refund
// refundKey of 20.00 settled at.
func seedOwed(t *testing.T, db *gorm.DB, connector, account, order, refundKey string, at time.Time) {
	t.Helper()
	o := models.Order{TransactionID: order, WorkflowID: "order/" + order, MerchantID: proofMerchant, AccountID: account,
		OrderNo: "FEE-" + order[len(order)-3:], Currency: proofCurrency, Amount: 10000, CapturedAmount: 10000, RefundedAmount: 2000,
		PaymentStatus: status.PartiallyRefunded, OrderStatus: status.OrderStatusOf(status.PartiallyRefunded),
		CaptureMode: models.CaptureAuto, RequestFingerprint: "fp", Connector: connector, ConnectorRef: "ch_" + order,
		CreatedAt: at, UpdatedAt: at}
	if err := db.Create(&o).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Exec("INSERT INTO order_status_changes (transaction_id, to_status, at) VALUES (?, ?, ?)", order, int(status.Paid), at).Error; err != nil {
		t.Fatal(err)
	}
	r := models.Refund{RefundReferenceID: refundKey, TransactionID: order, MerchantID: proofMerchant, AccountID: account,
		OrderNo: o.OrderNo, Currency: proofCurrency, Amount: 2000, Status: refund.Succeeded, AcquirerRef: "re_" + order, SettledAt: &at}
	if err := db.Create(&r).Error; err != nil {
		t.Fatal(err)
	}
}

// TestStatementCountsWhatTheLedgerMoved: a capture the acquirer paid short,
// written off by finance, counts in the statement as the record's amount
// the ledger settled to the merchant (100.00 less its fee), not the line's
// 90.00; a chargeback counts as the acquirer's line took it, fee and all,
// as the dispute's hold took it from the merchant.
func TestStatementCountsWhatTheLedgerMoved(t *testing.T) {
	db := testDB(t)
	ctx := t.Context()
	if err := db.Create(&models.Merchant{ID: proofMerchant, Name: "Fees"}).Error; err != nil {
		t.Fatal(err)
	}
	const account, connector = "A-SHORT", "sim-short"
	notifiedAccount(t, db, account, "http://127.0.0.1:1/settlements", recon.Pricing{})
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	led := ledger.New(db)
	const order = "1379868670095786100"
	if _, err := led.CreditOrder(ctx, ledger.OrderPosting{Reference: "order/" + order + "/paid", OrderKey: order,
		MerchantID: proofMerchant, AccountID: account, Currency: proofCurrency, Amount: 10000}); err != nil {
		t.Fatal(err)
	}
	if _, err := led.HoldDispute(ctx, ledger.DisputeHold{Reference: "dp_" + order, OrderKey: order, MerchantID: proofMerchant,
		AccountID: account, Currency: proofCurrency, Amount: 1000, Fee: 1500}); err != nil {
		t.Fatal(err)
	}
	seedOwed(t, db, connector, account, order, order+"-R1", day.AddDate(0, 0, -1))
	lines := []recon.Line{
		{No: 1, Reference: "ch_" + order, OrderKey: order, Type: recon.Capture, Gross: 9000, Fee: 290, Net: 8710, Currency: proofCurrency},
		{No: 2, Reference: "dp_" + order, OrderKey: order, Type: recon.Chargeback, Gross: 1000, Fee: 1500, Net: -2500, Currency: proofCurrency},
	}
	svc := &reconcile.Service{DB: db, Ledger: led, Connectors: map[string]reconcile.Connector{connector: {
		Source: &switchedReport{lines: lines}, Terms: reconcile.Terms{Days: 1}}}}
	if _, err := svc.Reconcile(ctx, connector, day); err != nil {
		t.Fatal(err)
	}
	var short models.ReconItem
	if err := db.Where("connector = ? AND item_key = ?", connector, "line/1").Take(&short).Error; err != nil {
		t.Fatal(err)
	}
	if short.Class != string(recon.AmountMismatch) {
		t.Fatalf("the short line is %s, want an amount mismatch", short.Class)
	}
	if _, err := svc.Act(ctx, short.ID, recon.WriteOff, "the acquirer keeps 10.00", "finance@example.com"); err != nil {
		t.Fatal(err)
	}
	if sum, err := svc.Post(ctx, connector, day, nil); err != nil || sum.Unposted != 0 {
		t.Fatalf("posted %+v, %v; want everything posted", sum, err)
	}
	got, err := svc.Statement(ctx, proofMerchant, account, day, day.AddDate(0, 0, 1))
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		typ            string
		gross, fee, ne int64
	}
	var rows []row
	for _, l := range got {
		rows = append(rows, row{l.Type, l.Gross, l.Fee, l.Net})
	}
	want := []row{{"capture written off", 10000, 290, 9710}, {"chargeback", 1000, 1500, -2500}}
	if !slices.Equal(rows, want) {
		t.Errorf("statement = %+v, want %+v", rows, want)
	}
}

// notifiedAccount makes account id of proofMerchant, in proofCurrency, with
// pricing and a settlement notify URL.
func notifiedAccount(t *testing.T, db *gorm.DB, id, notifyURL string, pricing recon.Pricing) {
	t.Helper()
	acc := models.Account{ID: id, MerchantID: proofMerchant, Name: id, SignKeyID: "k1", SignKeySealed: []byte{1},
		AllowedQueryIPs: []string{}, Currencies: []string{proofCurrency}, AmountLimits: map[string]int64{},
		SettlementNotifyURL: notifyURL, Pricing: pricing}
	if err := db.Create(&acc).Error; err != nil {
		t.Fatal(err)
	}
}
