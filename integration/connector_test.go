package integration

// Orders of an account routed to sim-bank, the second simulated acquirer,
// on the real stack: the whole card life (pay, capture, refund, void,
// declines, a lost answer) goes through sim-bank's own API, never the
// first simulator, and the order's record names the connector.

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/dev/simbank"
	"github.com/paygate/paygate/internal/domain/testmode"
	"github.com/paygate/paygate/models"
)

// bankAccount creates an account of its own whose orders go to sim-bank.
func bankAccount(t *testing.T, captureMode string) merchant.Credentials {
	t.Helper()
	creds, err := env.gw.Accounts.Create(context.Background(), merchant.NewAccount{Mode: testmode.Test,
		MerchantID: "60001", AccountID: "60001" + randomHex(3), CaptureMode: captureMode, Connector: "sim-bank",
		AllowedQueryIPs: []string{"127.0.0.1"}, Currencies: []string{"USD", "JPY"}, Risk: quietRisk,
	})
	if err != nil {
		t.Fatal(err)
	}
	return creds
}

// bankPayment is sim-bank's record of the order's payment; it fails the
// test unless there is exactly one.
func bankPayment(t *testing.T, txID string) simbank.Payment {
	t.Helper()
	var found []simbank.Payment
	for _, p := range env.bank.Payments() {
		if p.MerchantRef == txID {
			found = append(found, p)
		}
	}
	if len(found) != 1 {
		t.Fatalf("sim-bank holds %d payments of %s, want 1: %+v", len(found), txID, found)
	}
	return found[0]
}

// bankRefunds are sim-bank's refunds of a payment.
func bankRefunds(paymentID string) []simbank.Refund {
	var out []simbank.Refund
	for _, r := range env.bank.Refunds() {
		if r.PaymentID == paymentID {
			out = append(out, r)
		}
	}
	return out
}

// noSimulatorCharge checks that the first simulator never saw the order.
func noSimulatorCharge(t *testing.T, txID string) {
	t.Helper()
	for _, c := range env.sim.Charges() {
		if c.Reference == txID {
			t.Errorf("the first simulator charged %s: %+v", txID, c)
		}
	}
}

func TestSimBankPaysCapturesAndRefunds(t *testing.T) {
	t.Parallel()
	creds := bankAccount(t, models.CaptureManual)
	orderNo := newOrderNo(t)
	f := cardOrder(creds, orderNo, "4242424242424242")
	f["amount"] = "123.45"
	status, r := authorise(t, signCard(f, creds.SignKey))
	if status != http.StatusOK || r.OrderStatus != "1" || r.ResultInfo != "0000:Success" || r.Connector != "sim-bank" ||
		r.Amount != "123.45" || r.Currency != "USD" {
		t.Fatalf("payment: HTTP %d %+v", status, r)
	}
	checkResultSignature(t, r, creds.SignKey)
	tx := r.TransactionID

	// Authorised at sim-bank, not at the first simulator; the record names
	// the connector and the payment.
	p := bankPayment(t, tx)
	if p.TxnType != "AUTH" || p.State != simbank.StateAuthorised || p.ResponseCode != "00" || p.Amount != 12345 ||
		p.Currency != "USD" || p.Captured != 0 || p.CardLast4 != "4242" || !strings.HasSuffix(p.RequestID, ":authorise") {
		t.Errorf("sim-bank payment = %+v", p)
	}
	noSimulatorCharge(t, tx)
	o := findOrder(t, creds.AccountID, orderNo)
	if int(o.PaymentStatus) != 2000 || o.Connector != "sim-bank" || o.ConnectorRef != p.PaymentID || o.AuthCode != p.ApprovalCode ||
		o.Amount != 12345 || o.CapturedAmount != 0 {
		t.Errorf("record = status %d connector %q ref %q auth %q amount %d captured %d, want 2000 sim-bank %s %s 12345 0",
			o.PaymentStatus, o.Connector, o.ConnectorRef, o.AuthCode, o.Amount, o.CapturedAmount, p.PaymentID, p.ApprovalCode)
	}

	// Capture 100.00 of 123.45.
	_, b := batch(t, creds, "/v1/capture", "capture_orders", []batchEntry{with(ref(tx, orderNo, "123.45"), "capture_amount", "100.00")})
	if b.ReturnStatus != "1" || len(b.Entries) != 1 || b.Entries[0]["capture_status"] != "1" || b.Entries[0]["error_message"] != "" {
		t.Fatalf("capture: %s %q %v", b.ReturnStatus, b.ReturnMessage, b.Entries)
	}
	if p := bankPayment(t, tx); p.State != simbank.StateCaptured || p.Captured != 10000 || p.Amount != 12345 {
		t.Errorf("sim-bank payment after the capture = %+v, want CAPTURED 10000", p)
	}
	if o := findOrder(t, creds.AccountID, orderNo); int(o.PaymentStatus) != 3000 || o.CapturedAmount != 10000 || o.Connector != "sim-bank" {
		t.Errorf("record after the capture: %d captured %d connector %q, want 3000 10000 sim-bank", o.PaymentStatus, o.CapturedAmount, o.Connector)
	}

	// Refunds: 69.23 is done at once; 30.78 is more than is left; 30.77 is
	// queued at sim-bank and settles later, completing the refund; then a
	// cent more is refused.
	steps := []struct {
		refund, status, message, refID string
		paymentStatus                  int // 0: not checked (a queued refund settles on its own time)
	}{
		{"69.23", "1", "0000:Success", tx + "-01", 4100},
		{"30.78", "0", "I0003:", "", 4100},
		{"30.77", "-1", "0001:Pending at the acquirer", tx + "-02", 0},
	}
	for i, s := range steps {
		_, b := batch(t, creds, "/v1/refund", "refund_orders", []batchEntry{
			with(ref(tx, orderNo, "123.45"), "refund_amount", s.refund, "refund_reason", "sim-bank test"),
		})
		if b.ReturnStatus != "1" || len(b.Entries) != 1 {
			t.Fatalf("refund %d: %s %q", i, b.ReturnStatus, b.ReturnMessage)
		}
		e := b.Entries[0]
		msg := e["refund_message"] + e["error_message"]
		if e["refund_status"] != s.status || !strings.HasPrefix(msg, s.message) || e["refund_reference_id"] != s.refID {
			t.Errorf("refund %d entry = %v, want status %s message %q reference %q", i, e, s.status, s.message, s.refID)
		}
		if s.paymentStatus != 0 {
			if got := paymentStatus(t, creds, orderNo); got != s.paymentStatus {
				t.Errorf("refund %d: payment_status %d, want %d", i, got, s.paymentStatus)
			}
		}
	}
	waitFor(t, "the queued refund to settle", func() bool { return paymentStatus(t, creds, orderNo) == 4000 })
	_, b = batch(t, creds, "/v1/refund", "refund_orders", []batchEntry{with(ref(tx, orderNo, "123.45"), "refund_amount", "0.01")})
	if len(b.Entries) != 1 || b.Entries[0]["refund_status"] != "0" || !strings.HasPrefix(b.Entries[0]["error_message"]+b.Entries[0]["refund_message"], "I0018") {
		t.Errorf("a refund of a refunded order: %v, want refused with I0018", b.Entries)
	}

	o = findOrder(t, creds.AccountID, orderNo)
	if o.CapturedAmount != 10000 || o.RefundedAmount != 10000 || o.Connector != "sim-bank" {
		t.Errorf("record at the end: captured %d refunded %d connector %q, want 10000 10000 sim-bank", o.CapturedAmount, o.RefundedAmount, o.Connector)
	}
	refunds := bankRefunds(p.PaymentID)
	if len(refunds) != 2 || refunds[0].Amount != 6923 || refunds[1].Amount != 3077 ||
		refunds[0].State != simbank.RefundDone || refunds[1].State != simbank.RefundDone {
		t.Fatalf("sim-bank refunds = %+v, want 69.23 and 30.77, both DONE", refunds)
	}
	if p := bankPayment(t, tx); p.Refunded != 10000 {
		t.Errorf("sim-bank refunded %d, want 10000", p.Refunded)
	}
	var rows []models.Refund
	if err := env.gw.DB.Where("transaction_id = ?", tx).Order("refund_reference_id").Find(&rows).Error; err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Amount != 6923 || rows[1].Amount != 3077 ||
		string(rows[0].Status) != "succeeded" || string(rows[1].Status) != "succeeded" ||
		rows[0].AcquirerRef != refunds[0].RefundID || rows[1].AcquirerRef != refunds[1].RefundID {
		t.Errorf("refund records = %+v, want both succeeded with sim-bank's refund ids", rows)
	}
	noSimulatorCharge(t, tx)
}

// TestSimBankCardOutcomes pays with the test cards through sim-bank: its
// response codes come back as our result codes, a sale is captured at once,
// a void reverses the payment, and a lost answer is found by the inquiry
// without a second payment.
func TestSimBankCardOutcomes(t *testing.T) {
	t.Parallel()
	auto := bankAccount(t, models.CaptureAuto)
	manual := bankAccount(t, models.CaptureManual)
	tests := []struct {
		name        string
		creds       merchant.Credentials
		pan         string
		currency    string
		amount      string
		orderStatus string
		result      string
		final       int
		bankState   string
		bankCode    string
		bankAmount  int64
	}{
		{"sale", auto, "5555555555554444", "USD", "12.34", "1", "0000:Success", 3000, simbank.StateCaptured, "00", 1234},
		{"sale in yen", auto, "4242424242424242", "JPY", "1234", "1", "0000:Success", 3000, simbank.StateCaptured, "00", 1234},
		{"do not honour", auto, "4000000000000002", "USD", "12.34", "0", "A0001:Declined", 6000, simbank.StateRefused, "05", 1234},
		{"insufficient funds", auto, "4000000000009995", "USD", "12.34", "0", "A0002:Insufficient funds", 6000, simbank.StateRefused, "51", 1234},
		{"expired card", manual, "4000000000000069", "USD", "12.34", "0", "A0003:Expired card", 6000, simbank.StateRefused, "54", 1234},
		{"wrong CVV", auto, "4000000000000127", "USD", "12.34", "0", "A0004:Incorrect security code", 6000, simbank.StateRefused, "N7", 1234},
		{"card needing 3-D Secure", auto, "4000000000003220", "USD", "12.34", "0",
			"C0002:Card requires 3-D Secure, which is not available for this payment", 6000, simbank.StateRefused, "1A", 1234},
		{"unavailable, then approved on retry", auto, "4000000000000119", "USD", "12.34", "1", "0000:Success", 3000, simbank.StateCaptured, "00", 1234},
		{"answer lost, found by the inquiry", manual, "4000000000000341", "USD", "12.34", "1", "0000:Success", 2000, simbank.StateAuthorised, "00", 1234},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			orderNo := newOrderNo(t)
			f := cardOrder(tc.creds, orderNo, tc.pan)
			f["currency"], f["amount"] = tc.currency, tc.amount
			_, r := authorise(t, signCard(f, tc.creds.SignKey))
			if r.OrderStatus != tc.orderStatus || r.ResultInfo != tc.result || r.Connector != "sim-bank" {
				t.Fatalf("answer: order_status %s result %q connector %q, want %s %q sim-bank", r.OrderStatus, r.ResultInfo, r.Connector,
					tc.orderStatus, tc.result)
			}
			p := bankPayment(t, r.TransactionID)
			if p.State != tc.bankState || p.ResponseCode != tc.bankCode || p.Amount != tc.bankAmount || p.Currency != tc.currency {
				t.Errorf("sim-bank payment = %+v, want %s %s %d %s", p, tc.bankState, tc.bankCode, tc.bankAmount, tc.currency)
			}
			o := findOrder(t, tc.creds.AccountID, orderNo)
			if int(o.PaymentStatus) != tc.final || o.Connector != "sim-bank" || o.ConnectorRef != p.PaymentID {
				t.Errorf("record: %d connector %q ref %q, want %d sim-bank %s", o.PaymentStatus, o.Connector, o.ConnectorRef, tc.final, p.PaymentID)
			}
			noSimulatorCharge(t, r.TransactionID)
		})
	}

	t.Run("cancel reverses the authorisation", func(t *testing.T) {
		t.Parallel()
		orderNo := newOrderNo(t)
		_, r := authorise(t, signCard(cardOrder(manual, orderNo, "4242424242424242"), manual.SignKey))
		if r.OrderStatus != "1" {
			t.Fatalf("payment: %s", r.ResultInfo)
		}
		_, b := batch(t, manual, "/v1/cancel", "cancel_orders", []batchEntry{ref(r.TransactionID, orderNo, "12.34")})
		if len(b.Entries) != 1 || b.Entries[0]["cancel_status"] != "1" {
			t.Fatalf("cancel entries = %v", b.Entries)
		}
		if p := bankPayment(t, r.TransactionID); p.State != simbank.StateReversed || p.Captured != 0 {
			t.Errorf("sim-bank payment = %+v, want REVERSED", p)
		}
		if s := paymentStatus(t, manual, orderNo); s != 5000 {
			t.Errorf("payment_status %d, want 5000", s)
		}
	})
}

// TestSimBankWithoutShopperFlows: sim-bank runs no 3-D Secure and no APMs.
// An order asking for them fails with C0001 and charges nothing; the hosted
// page still works with a card and names the connector; and a callback
// signed by the first simulator's ACS or APM provider does not move an
// order of sim-bank's.
func TestSimBankWithoutShopperFlows(t *testing.T) {
	t.Parallel()
	creds := bankAccount(t, models.CaptureAuto)

	t.Run("3-D Secure asked for", func(t *testing.T) {
		orderNo := newOrderNo(t)
		f := cardOrder(creds, orderNo, "4242424242424242")
		f["open3d"] = "do3DS"
		_, r := authorise(t, signCard(f, creds.SignKey))
		if r.OrderStatus != "0" || r.ResultInfo != "C0001:Acquirer error" || r.Connector != "sim-bank" {
			t.Fatalf("answer: %s %q %q, want 0 C0001 sim-bank", r.OrderStatus, r.ResultInfo, r.Connector)
		}
		for _, p := range env.bank.Payments() {
			if p.MerchantRef == r.TransactionID {
				t.Errorf("sim-bank charged an order that asked for 3-D Secure: %+v", p)
			}
		}
		noSimulatorCharge(t, r.TransactionID)
		if o := findOrder(t, creds.AccountID, orderNo); int(o.PaymentStatus) != 6000 || o.Connector != "sim-bank" {
			t.Errorf("record %d %q, want 6000 sim-bank", o.PaymentStatus, o.Connector)
		}
	})

	t.Run("hosted checkout", func(t *testing.T) {
		orderNo := newOrderNo(t)
		resp, forward := browse(t, http.MethodPost, env.api.URL+"/v1/checkout", checkoutOrder(creds, orderNo))
		fields := hiddenFields(forward)
		if resp.StatusCode != http.StatusOK || fields.Get("connector_code") != "sim-bank" {
			t.Fatalf("forwarding page (%d): connector_code %q, want sim-bank", resp.StatusCode, fields.Get("connector_code"))
		}
		o := findOrder(t, creds.AccountID, orderNo)
		if int(o.PaymentStatus) != 1000 || o.Connector != "sim-bank" {
			t.Fatalf("checkout order %d %q, want 1000 sim-bank", o.PaymentStatus, o.Connector)
		}

		// The first simulator's signatures are valid, but not for this order.
		cb := forgedThreeDS("au_forged", "authenticated", "AAAB", o.TransactionID)
		resp, _ = browse(t, http.MethodPost, env.api.URL+"/v1/3ds/callback", cb)
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("3-D Secure callback signed by another connector: HTTP %d, want 403", resp.StatusCode)
		}
		code, body := signedAPMCallback(t, map[string]any{"payment_id": "ap_forged", "reference": o.TransactionID, "status": "succeeded"})
		if code != http.StatusUnauthorized {
			t.Errorf("APM callback signed by another connector: HTTP %d %s, want 401", code, body)
		}

		session := hiddenFields(mustPage(t, fields)).Get("session")
		resp, _ = browse(t, http.MethodPost, env.api.URL+"/v1/checkout/pay", url.Values{
			"session": {session}, "card_holder": {"Ada Lovelace"}, "card_number": {"4242424242424242"},
			"expiry_month": {"12"}, "expiry_year": {"2031"}, "security_code": {"739"},
		})
		loc, err := url.Parse(resp.Header.Get("Location"))
		if resp.StatusCode != http.StatusSeeOther || err != nil || loc.Path != "/return" || loc.Query().Get("order_status") != "1" {
			t.Fatalf("shopper sent to %d %q, want /return with order_status 1", resp.StatusCode, resp.Header.Get("Location"))
		}
		if p := bankPayment(t, o.TransactionID); p.State != simbank.StateCaptured || p.Amount != 5990 {
			t.Errorf("sim-bank payment = %+v, want CAPTURED 5990", p)
		}
		if o := findOrder(t, creds.AccountID, orderNo); int(o.PaymentStatus) != 3000 || o.Connector != "sim-bank" {
			t.Errorf("record %d %q, want 3000 sim-bank", o.PaymentStatus, o.Connector)
		}
		noSimulatorCharge(t, o.TransactionID)
	})
}

// mustPage posts the forwarding page's fields back and returns the payment
// page.
func mustPage(t *testing.T, fields url.Values) string {
	t.Helper()
	resp, page := browse(t, http.MethodPost, env.api.URL+"/v1/checkout", fields)
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, `id="card-number"`) {
		t.Fatalf("payment page (%d):\n%.400s", resp.StatusCode, page)
	}
	return page
}

// waitFor polls cond for up to 20 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestMerchantThreeDSAndInstallments follows the interface's Payment order
// (additional_information[].mpi_info: eci, cavv, xid, dsTransID; and
// installments, issue 29): the acquirer that takes them gets them (the
// challenge card is charged on the merchant's own authentication, in three
// installments, with no 3-D Secure of ours); an account whose connector
// cannot is refused I0033 before anything is charged; a malformed result
// is I0008.
func TestMerchantThreeDSAndInstallments(t *testing.T) {
	t.Parallel()
	const mpi = `[{"mpi_info":{"eci":"05","cavv":"AAABBEg0VhI0VniQEjRWAAAAAAA=","dsTransID":"f25084f0-5b16-4c0a-ae5d-b24808a95e4b"}}]`
	tests := []struct {
		name         string
		creds        merchant.Credentials
		mpi, install string
		want         string
	}{
		{"sim-acquirer takes both", env.auto, mpi, "3", "0000:Success"},
		{"sim-bank takes no mpi_info", bankAccount(t, models.CaptureAuto), mpi, "", "I0033:The connector does not take this payment's options: sim-bank does not take a 3-D Secure result of the merchant's own (mpi_info)"},
		{"sim-bank takes no installments", bankAccount(t, models.CaptureAuto), "", "6", "I0033:The connector does not take this payment's options: sim-bank does not take installments"},
		{"an eci of one digit", env.auto, `[{"mpi_info":{"eci":"5","cavv":"AAAB"}}]`, "", "I0008:Invalid field value: additional_information.mpi_info.eci must be two digits"},
		{"one installment is none, 61 too many", env.auto, "", "61", "I0008:Invalid field value: installments must be a number of monthly payments from 2 to 60"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			orderNo := newOrderNo(t)
			f := cardOrder(tc.creds, orderNo, "4000000000003220") // the challenge card
			if tc.mpi != "" {
				f["additional_information"] = tc.mpi
			}
			if tc.install != "" {
				f["installments"] = tc.install
			}
			_, r := authorise(t, signCard(f, tc.creds.SignKey))
			if r.ResultInfo != tc.want {
				t.Fatalf("answer %s %s, want %s", r.OrderStatus, r.ResultInfo, tc.want)
			}
			if tc.want != "0000:Success" {
				if _, err := models.FindOrderByNo(context.Background(), env.gw.DB, tc.creds.AccountID, orderNo); err == nil {
					t.Error("a refused payment was recorded")
				}
				return
			}
			for _, c := range env.sim.Charges() {
				if c.Reference == r.TransactionID && (!c.ThreeDS || c.Installments != 3) {
					t.Errorf("the acquirer's charge: three_ds %t, installments %d", c.ThreeDS, c.Installments)
				}
			}
			if _, ok := env.sim.AuthenticationOf(r.TransactionID); ok {
				t.Error("the gateway ran a 3-D Secure of its own beside the merchant's")
			}
		})
	}
}
