package reconcile_test

import (
	"context"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/adapters/ledger"
	"github.com/paygate/paygate/internal/adapters/reconcile"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/recon"
	"github.com/paygate/paygate/internal/domain/refund"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/models"
)

// fixedReport is a settlement report of fixed lines, whatever the day.
type fixedReport []recon.Line

func (r fixedReport) Settlement(context.Context, time.Time) ([]recon.Line, error) { return r, nil }

// TestRefundGivenBack: a refund the acquirer gave back after it succeeded
// (Stripe's refund_failure, naming only the refund) is an open exception of
// the refund's order and account, found by the refund's acquirer reference,
// and posts nothing; one of a refund not here is an exception of nobody's.
func TestRefundGivenBack(t *testing.T) {
	db := testDB(t)
	ctx := t.Context()
	at := time.Date(2026, 11, 10, 12, 0, 0, 0, time.UTC)
	const tx = "1379868670095785984"
	order := models.Order{TransactionID: tx, WorkflowID: "order/" + tx, MerchantID: proofMerchant, AccountID: proofAccount,
		OrderNo: "RF-1", Currency: proofCurrency, Amount: 5000, CapturedAmount: 5000, RefundedAmount: 2500,
		PaymentStatus: status.PartiallyRefunded, OrderStatus: status.OrderStatusOf(status.PartiallyRefunded),
		CaptureMode: models.CaptureAuto, RequestFingerprint: "fp", Connector: "stripe", ConnectorRef: "pi_1", CreatedAt: at, UpdatedAt: at}
	if err := db.Create(&order).Error; err != nil {
		t.Fatal(err)
	}
	if err := models.SaveRefund(ctx, db, &models.Refund{RefundReferenceID: tx + "-01", TransactionID: tx, MerchantID: proofMerchant,
		AccountID: proofAccount, OrderNo: "RF-1", Currency: proofCurrency, Amount: 2500, Status: refund.Succeeded,
		ResultCode: codes.OK.ID, ResultMessage: codes.OK.Message, AcquirerRef: "re_1", Version: 1}); err != nil {
		t.Fatal(err)
	}
	report := fixedReport{
		{No: 1, Reference: "re_1", Type: recon.RefundFailure, Gross: -2500, Net: 2500, Currency: proofCurrency, Batch: "txn_6"},
		{No: 2, Reference: "re_9", Type: recon.RefundFailure, Gross: -700, Net: 700, Currency: proofCurrency, Batch: "txn_7"},
	}
	svc := &reconcile.Service{DB: db, Ledger: ledger.New(db),
		Connectors: map[string]reconcile.Connector{"stripe": {Source: report, Terms: reconcile.Terms{Days: 2}}}}
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	sum, err := svc.Reconcile(ctx, "stripe", day)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Exceptions != 2 || sum.Classes[string(recon.RefundReversed)] != 2 {
		t.Errorf("summary %+v, want two refund_reversed exceptions", sum)
	}
	var items []models.ReconItem
	if err := db.Where("connector = ? AND source = ?", "stripe", models.ReconSourceLine).Order("line_no").Find(&items).Error; err != nil {
		t.Fatal(err)
	}
	type seen struct{ orderKey, merchant, account, class, status, posted string }
	want := []seen{
		{tx, proofMerchant, proofAccount, string(recon.RefundReversed), models.ReconOpen, ""},
		{"", "", "", string(recon.RefundReversed), models.ReconOpen, ""},
	}
	if len(items) != len(want) {
		t.Fatalf("items %+v, want %d", items, len(want))
	}
	for i, it := range items {
		if got := (seen{it.OrderKey, it.MerchantID, it.AccountID, it.Class, it.Status, it.Posted}); got != want[i] {
			t.Errorf("line %d = %+v, want %+v", it.LineNo, got, want[i])
		}
	}
	for _, class := range []recon.Class{recon.RefundReversed} {
		if class.Allows(recon.WriteOff) || !class.Allows(recon.Resolve) || !class.Allows(recon.Claim) {
			t.Errorf("%s: write-off allowed %t, resolve %t, claim %t; want claim and resolve only",
				class, class.Allows(recon.WriteOff), class.Allows(recon.Resolve), class.Allows(recon.Claim))
		}
	}
}
