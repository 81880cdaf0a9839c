package models_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/paygate/paygate/internal/domain/order"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/models"
)

// protectedDB opens a migrated database of its own with PersonalData
// installed.
func protectedDB(t *testing.T) *gorm.DB {
	t.Helper()
	db, err := models.Open(t.Context(), migratedDB(t), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if s, err := db.DB(); err == nil {
			_ = s.Close()
		}
	})
	if err := models.ProtectForTest(db); err != nil {
		t.Fatal(err)
	}
	return db
}

// shopperDetails is an order naming its shopper in every personal field
// the tests look for.
func shopperDetails(orderNo, email string) order.Details {
	return order.Details{
		MerchantID: "M1", AccountID: "A1", OrderNo: orderNo, Currency: "USD", Amount: "10.00",
		ShopperEmail: email, ShopperIP: "198.51.100.7", FirstName: "Adaline", LastName: "Quigglesby",
		BillingCountry: "GB", BillingAddress: "12 Larkspur Row", Note: "gift for Adaline",
		NotifyURL: "https://merchant.example/notify", PaymentMethod: "PIX",
		Person: &order.Person{DocumentNumber: "52998224725", Email: email},
	}
}

var txSeq int

func newOrder(t *testing.T, db *gorm.DB, d order.Details, ps status.Payment, updated time.Time) *models.Order {
	t.Helper()
	txSeq++
	o := &models.Order{
		TransactionID: fmt.Sprintf("7%018d", txSeq), WorkflowID: "order/" + d.MerchantID + "/" + d.OrderNo,
		MerchantID: d.MerchantID, AccountID: d.AccountID, OrderNo: d.OrderNo, Currency: "USD", Amount: 1000,
		PaymentStatus: ps, OrderStatus: status.OrderStatusOf(ps), ResultCode: "0000", ResultMessage: "ok",
		CaptureMode: models.CaptureAuto, CardMasked: "424242******4242", CardToken: "vault-" + d.OrderNo,
		RequestFingerprint: "fp", Details: d, CreatedAt: updated, UpdatedAt: updated,
	}
	if _, err := models.InsertOrder(t.Context(), db, o); err != nil {
		t.Fatal(err)
	}
	err := db.Create(&models.VaultCard{Token: o.CardToken, KeyID: "k", CardSealed: []byte{1}, Fingerprint: "f"}).Error
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// rawRow is a row as Postgres holds it, every column as text.
func rawRow(t *testing.T, db *gorm.DB, table, where string, args ...any) string {
	t.Helper()
	var row string
	err := db.Raw("SELECT row_to_json(x)::text FROM "+table+" x WHERE "+where, args...).Row().Scan(&row)
	if err != nil {
		t.Fatal(err)
	}
	return row
}

// TestOrdersKeepPersonalDataSealed: a written order holds no personal field
// in clear, reads back whole, and is found by the keyed hashes.
func TestOrdersKeepPersonalDataSealed(t *testing.T) {
	db := protectedDB(t)
	d := shopperDetails("SEAL-1", "Adaline@Example.com")
	o := newOrder(t, db, d, status.Paid, time.Now())

	row := rawRow(t, db, "orders", "transaction_id = ?", o.TransactionID)
	for _, clear := range []string{"Adaline", "Quigglesby", "example.com", "198.51.100.7", "Larkspur", "52998224725"} {
		if strings.Contains(strings.ToLower(row), strings.ToLower(clear)) {
			t.Errorf("the stored order holds %q in clear: %s", clear, row)
		}
	}
	for _, kept := range []string{`"payment_method": "PIX"`, `"billing_country": "GB"`, `"notify_url": "https://merchant.example/notify"`} {
		if !strings.Contains(row, kept) {
			t.Errorf("the stored order lost %s: %s", kept, row)
		}
	}
	got, err := models.FindOrderByNo(t.Context(), db, "A1", "SEAL-1")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Details, d) {
		t.Errorf("read back:\n got %+v\nwant %+v", got.Details, d)
	}
	hash, err := models.HashOf(db, models.HashEmail, " adaline@example.COM ")
	if err != nil {
		t.Fatal(err)
	}
	if got.ShopperEmailHash != hash || hash == "" {
		t.Errorf("email hash = %q, want %q (trimmed, any case)", got.ShopperEmailHash, hash)
	}
	counts, err := models.CountVelocity(t.Context(), db, models.VelocityQuery{AccountID: "A1",
		Email: models.VelocityWindow{Value: "ADALINE@example.com", Since: time.Now().Add(-time.Hour)},
		IP:    models.VelocityWindow{Value: "198.51.100.7", Since: time.Now().Add(-time.Hour)}})
	if err != nil {
		t.Fatal(err)
	}
	if counts.Email != 1 || counts.IP != 1 {
		t.Errorf("velocity = %+v, want the order counted by email and address", counts)
	}

	// A row moved to another transaction id does not open.
	if err := db.Exec("UPDATE orders SET transaction_id = '7999999999999999999' WHERE transaction_id = ?", o.TransactionID).Error; err != nil {
		t.Fatal(err)
	}
	if _, err := models.FindOrderByNo(t.Context(), db, "A1", "SEAL-1"); err == nil {
		t.Error("an order's sealed data opened under another transaction id")
	}
}

// TestUnprotectedWritesAreRefused: an order or payout written through a
// database without PersonalData is refused, not stored in clear.
func TestUnprotectedWritesAreRefused(t *testing.T) {
	db, err := models.Open(t.Context(), migratedDB(t), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if s, err := db.DB(); err == nil {
			_ = s.Close()
		}
	})
	_, err = models.InsertOrder(t.Context(), db, &models.Order{TransactionID: "7000000000000000001", Details: shopperDetails("U-1", "u@example.com")})
	if !errors.Is(err, models.ErrNotProtected) {
		t.Errorf("order: %v, want ErrNotProtected", err)
	}
	err = models.InsertPayout(t.Context(), db, &models.Payout{ID: "payout/M1/u", Request: []byte(`{}`)}, nil)
	if !errors.Is(err, models.ErrNotProtected) {
		t.Errorf("payout: %v, want ErrNotProtected", err)
	}
}

// TestLegacyRowsAreSealed: an order and a payout written in clear before
// 0015 read back as they were, and SealLegacyOrders/Payouts seal them.
func TestLegacyRowsAreSealed(t *testing.T) {
	db := protectedDB(t)
	d := shopperDetails("LEGACY-1", "old@example.com")
	details, _ := json.Marshal(d)
	err := db.Exec(`INSERT INTO orders (transaction_id, workflow_id, merchant_id, account_id, order_no, currency, amount,
		payment_status, order_status, result_code, result_message, capture_mode, request_fingerprint, details,
		shopper_email, shopper_ip, created_at, updated_at)
		VALUES ('7100000000000000001', 'order/M1/LEGACY-1', 'M1', 'A1', 'LEGACY-1', 'USD', 1000, 3000, 1, '0000', 'ok', 'auto', 'fp', ?,
		'old@example.com', '198.51.100.7', now(), now())`, string(details)).Error
	if err != nil {
		t.Fatal(err)
	}
	request := `{"request":{"request_id":"r-legacy","beneficiary":{"first_name":"Bartholomew","additional_info":{"personal_email":"ben@example.com"}}},"iban":"GB33BUKB20201555555555"}`
	err = db.Exec(`INSERT INTO payouts (id, merchant_id, account_id, request_id, transaction_id, short_reference_id, status,
		payment_currency, payment_amount, source_currency, request, created_at, updated_at)
		VALUES ('payout/M1/r-legacy', 'M1', 'A1', 'r-legacy', '7100000000000000002', 'P-LEGACY', 'COMPLETED', 'EUR', 500, 'EUR', ?, now(), now())`,
		request).Error
	if err != nil {
		t.Fatal(err)
	}

	before, err := models.FindOrderByNo(t.Context(), db, "A1", "LEGACY-1")
	if err != nil || !reflect.DeepEqual(before.Details, d) {
		t.Fatalf("legacy order read as %+v (%v)", before, err)
	}
	if n, err := models.SealLegacyOrders(t.Context(), db, 100); err != nil || n != 1 {
		t.Fatalf("SealLegacyOrders = %d, %v; want 1", n, err)
	}
	if n, err := models.SealLegacyPayouts(t.Context(), db, 100); err != nil || n != 1 {
		t.Fatalf("SealLegacyPayouts = %d, %v; want 1", n, err)
	}
	for _, r := range []string{rawRow(t, db, "orders", "order_no = 'LEGACY-1'"), rawRow(t, db, "payouts", "request_id = 'r-legacy'")} {
		for _, clear := range []string{"example.com", "Adaline", "Bartholomew", "GB33BUKB"} {
			if strings.Contains(r, clear) {
				t.Errorf("sealed row still holds %q: %s", clear, r)
			}
		}
	}
	after, err := models.FindOrderByNo(t.Context(), db, "A1", "LEGACY-1")
	if err != nil || !reflect.DeepEqual(after.Details, d) {
		t.Errorf("sealed order read as %+v (%v)", after, err)
	}
	p, err := models.FindPayout(t.Context(), db, "payout/M1/r-legacy")
	if err != nil || !sameJSON(t, p.Request, []byte(request)) {
		t.Errorf("sealed payout request = %s (%v)", p.Request, err)
	}
	if n, _ := models.SealLegacyOrders(t.Context(), db, 100); n != 0 {
		t.Errorf("a second pass sealed %d orders", n)
	}
	// Found by email through its hash now.
	rec, err := models.EraseShopper(t.Context(), db, models.ErasureRequest{Email: "OLD@example.com", RequestedBy: "test"}, time.Now())
	if err != nil || rec.Orders != 1 {
		t.Errorf("erase after sealing = %+v, %v; want 1 order", rec, err)
	}
	rec, err = models.EraseShopper(t.Context(), db, models.ErasureRequest{Email: "ben@example.com", RequestedBy: "test"}, time.Now())
	if err != nil || rec.Payouts != 1 {
		t.Errorf("erase beneficiary = %+v, %v; want 1 payout", rec, err)
	}
}

// TestEraseShopper erases by email and by transaction id, keeps amounts and
// statuses, leaves orders in progress and other shoppers alone, and records
// each erasure without the email.
func TestEraseShopper(t *testing.T) {
	db := protectedDB(t)
	now := time.Now()
	paid := newOrder(t, db, shopperDetails("E-PAID", "erin@example.com"), status.Paid, now)
	refunded := newOrder(t, db, shopperDetails("E-REFUNDED", "ERIN@example.com"), status.Refunded, now)
	pending := newOrder(t, db, shopperDetails("E-PENDING", "erin@example.com"), status.Pending, now)
	other := newOrder(t, db, shopperDetails("E-OTHER", "otto@example.com"), status.Paid, now)
	card := &models.StoredCard{TokenID: "tok-erin", MerchantID: "M1", AccountID: "A1", VaultToken: "vault-stored-erin",
		CardMasked: "424242******4242", CardFingerprint: "f", SourceTransactionID: paid.TransactionID, CreatedAt: now}
	if _, err := models.KeepCard(t.Context(), db, card); err != nil {
		t.Fatal(err)
	}
	if err := db.Create(&models.VaultCard{Token: "vault-stored-erin", KeyID: "k", CardSealed: []byte{1}, Fingerprint: "f"}).Error; err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		req  models.ErasureRequest
		want models.PersonalDataErasure
	}{
		{name: "nobody named", req: models.ErasureRequest{MerchantID: "M1"}},
		{name: "another merchant's shopper", req: models.ErasureRequest{MerchantID: "M2", Email: "erin@example.com"}},
		{name: "by email, any case", req: models.ErasureRequest{MerchantID: "M1", Email: " Erin@Example.com"},
			want: models.PersonalDataErasure{Orders: 2, StoredCards: 1, VaultCards: 3, Open: 1}},
		{name: "again: only the order in progress is found", req: models.ErasureRequest{Email: "erin@example.com"},
			want: models.PersonalDataErasure{Open: 1}},
		{name: "by transaction id", req: models.ErasureRequest{TransactionID: other.TransactionID},
			want: models.PersonalDataErasure{Orders: 1, VaultCards: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.RequestedBy, tt.req.Reason = "test:ops", "shopper asked"
			got, err := models.EraseShopper(t.Context(), db, tt.req, now)
			if tt.req.Email == "" && tt.req.TransactionID == "" {
				if !errors.Is(err, models.ErrNothingToErase) {
					t.Fatalf("err = %v, want ErrNothingToErase", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Orders != tt.want.Orders || got.Payouts != tt.want.Payouts || got.StoredCards != tt.want.StoredCards ||
				got.VaultCards != tt.want.VaultCards || got.Open != tt.want.Open {
				t.Errorf("erased %+v, want %+v", got, tt.want)
			}
			if got.ID == 0 || got.RequestedBy != "test:ops" || (tt.req.Email != "" && got.EmailHash == "") {
				t.Errorf("audit record = %+v", got)
			}
		})
	}

	for _, o := range []*models.Order{paid, refunded, other} {
		row := rawRow(t, db, "orders", "transaction_id = ?", o.TransactionID)
		for _, clear := range []string{"example.com", "Adaline", "Quigglesby", "Larkspur", "52998224725"} {
			if strings.Contains(row, clear) {
				t.Errorf("erased order %s holds %q: %s", o.OrderNo, clear, row)
			}
		}
		got, err := models.FindOrderByNo(t.Context(), db, "A1", o.OrderNo)
		if err != nil {
			t.Fatal(err)
		}
		if got.Amount != 1000 || got.PaymentStatus != o.PaymentStatus || got.CardMasked != "424242******4242" ||
			got.Details.PaymentMethod != "PIX" || got.Details.ShopperEmail != "" || got.PersonalErasedAt == nil {
			t.Errorf("erased order %s = %+v", o.OrderNo, got)
		}
	}
	if got, _ := models.FindOrderByNo(t.Context(), db, "A1", pending.OrderNo); got.Details.ShopperEmail != "erin@example.com" {
		t.Errorf("the order in progress lost its shopper: %+v", got.Details)
	}
	if deleted, err := models.StoredCardDeleted(t.Context(), db, "tok-erin"); err != nil || !deleted {
		t.Errorf("the shopper's stored card: deleted %v, %v", deleted, err)
	}
	var audit []models.PersonalDataErasure
	if err := db.Order("id").Find(&audit).Error; err != nil || len(audit) != 4 {
		t.Fatalf("audit = %+v, %v; want 4 records", audit, err)
	}
	for _, a := range audit {
		if strings.Contains(fmt.Sprint(a), "@") {
			t.Errorf("the audit holds an email: %+v", a)
		}
	}
}

// TestEraseExpired: the retention run erases closed orders and final
// payouts last changed before the cut-off, and leaves the rest.
func TestEraseExpired(t *testing.T) {
	db := protectedDB(t)
	now := time.Now()
	old, recent := now.Add(-400*24*time.Hour), now.Add(-24*time.Hour)
	cut := now.Add(-365 * 24 * time.Hour)
	closedOld := newOrder(t, db, shopperDetails("R-OLD", "rita@example.com"), status.Failed, old)
	openOld := newOrder(t, db, shopperDetails("R-OPEN", "rita@example.com"), status.HeldForReview, old)
	newOrder(t, db, shopperDetails("R-RECENT", "rita@example.com"), status.Paid, recent)
	kept := newOrder(t, db, shopperDetails("R-CARD", "rita@example.com"), status.Paid, old)
	if _, err := models.KeepCard(t.Context(), db, &models.StoredCard{TokenID: "tok-rita", MerchantID: "M1", AccountID: "A1",
		VaultToken: kept.CardToken, CardMasked: "424242******4242", CardFingerprint: "f", SourceTransactionID: kept.TransactionID, CreatedAt: old}); err != nil {
		t.Fatal(err)
	}
	for i, st := range []string{"COMPLETED", "SUBMITTED"} {
		p := &models.Payout{ID: fmt.Sprintf("payout/M1/r%d", i), MerchantID: "M1", AccountID: "A1", RequestID: fmt.Sprintf("r%d", i),
			TransactionID: fmt.Sprintf("72%017d", i), ShortReferenceID: fmt.Sprintf("P%d", i), Status: st,
			PaymentCurrency: "EUR", PaymentAmount: 500, SourceCurrency: "EUR",
			Request:   []byte(`{"request":{"beneficiary":{"first_name":"Bartholomew"}},"iban":"GB33BUKB20201555555555"}`),
			CreatedAt: old, UpdatedAt: old}
		if err := models.InsertPayout(t.Context(), db, p, nil); err != nil {
			t.Fatal(err)
		}
	}

	got, err := models.EraseExpired(t.Context(), db, cut, 100, now)
	if err != nil {
		t.Fatal(err)
	}
	if got.Orders != 1 || got.Payouts != 1 || got.RequestedBy != "retention" || got.ID == 0 {
		t.Errorf("retention run = %+v, want 1 order and 1 payout recorded", got)
	}
	for _, o := range []struct {
		no     string
		erased bool
	}{{closedOld.OrderNo, true}, {openOld.OrderNo, false}, {"R-RECENT", false}, {kept.OrderNo, false}} {
		row, err := models.FindOrderByNo(t.Context(), db, "A1", o.no)
		if err != nil {
			t.Fatal(err)
		}
		if erased := row.PersonalErasedAt != nil && row.Details.ShopperEmail == ""; erased != o.erased {
			t.Errorf("%s erased = %v, want %v", o.no, erased, o.erased)
		}
	}
	p, err := models.FindPayout(t.Context(), db, "payout/M1/r0")
	if err != nil || bytes.Contains(p.Request, []byte("Bartholomew")) || bytes.Contains(p.Request, []byte("GB33")) || p.PersonalErasedAt == nil {
		t.Errorf("completed payout after retention: %s (%v)", p.Request, err)
	}
	if p, _ := models.FindPayout(t.Context(), db, "payout/M1/r1"); !bytes.Contains(p.Request, []byte("Bartholomew")) {
		t.Errorf("a payout in progress was erased: %s", p.Request)
	}
	again, err := models.EraseExpired(t.Context(), db, cut, 100, now)
	if err != nil || again.Orders+again.Payouts != 0 || again.ID != 0 {
		t.Errorf("second run = %+v, %v; want nothing erased and nothing recorded", again, err)
	}
}

// sameJSON reports whether a and b are the same JSON value; Postgres's
// jsonb keeps no key order.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(x, y)
}
