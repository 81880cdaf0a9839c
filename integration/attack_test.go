package integration

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/risk"
	"github.com/paygate/paygate/internal/domain/signing"
	"github.com/paygate/paygate/internal/domain/testmode"
	"github.com/paygate/paygate/models"
)

// TestSigningOracleIsClosed replays the signing-oracle attack on the real stack:
// a caller with no key asks /v1/authorise to sign values of its choosing,
// then tries the answer as a refund, cancel or checkout signature.
func TestSigningOracleIsClosed(t *testing.T) {
	t.Parallel()
	creds := env.auto
	txID, orderNo := paidOrder(t, creds, "30.00")

	attacks := []struct {
		name   string
		fields map[string]string
		want   string
	}{
		{"paid transaction id as order_no, empty currency and amount", map[string]string{
			"merchant_id": creds.MerchantID, "account_id": creds.AccountID, "order_no": txID,
			"currency": "", "amount": "", "encryption_data": "00"}, "I0013:Signature verification failed"},
		{"no encryption_data", map[string]string{
			"merchant_id": creds.MerchantID, "account_id": creds.AccountID, "order_no": txID}, "I0001:Missing required field: encryption_data"},
		{"APM recipe with a foreign return_url", map[string]string{
			"merchant_id": creds.MerchantID, "account_id": creds.AccountID, "order_no": "X", "currency": "USD",
			"amount": "999.00", "payment_method": "pix", "return_url": "https://evil.example/", "encryption_data": "ff"}, "I0013:Signature verification failed"},
		{"another tenant's key", signCard(cardOrder(creds, newOrderNo(t), "4242424242424242"), "not-the-key"), "I0013:Signature verification failed"},
	}
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			_, r := authorise(t, a.fields)
			if r.ResultInfo != a.want {
				t.Errorf("result_info = %q, want %q", r.ResultInfo, a.want)
			}
			if r.EncryptionData != "" {
				t.Fatalf("the gateway signed for a caller without the key: %s", r.EncryptionData)
			}
			// What the attacker would send next: the answer's signature on a
			// refund of "0"+result_info, and on a cancel and a checkout.
			forged := r.EncryptionData
			for _, path := range []string{"/v1/refund", "/v1/cancel"} {
				array := strings.TrimPrefix(path, "/v1/") + "_orders"
				body := map[string]any{"merchant_id": creds.MerchantID, "account_id": creds.AccountID,
					"encryption_data": forged, array: []batchEntry{
						with(ref("0"+r.ResultInfo, orderNo, "30.00"), "refund_amount", "30.00"),
						with(ref(txID, orderNo, "30.00"), "refund_amount", "30.00"),
					}}
				_, b := post(t, path, "application/json", jsonBody(t, body))
				var br batchResponse
				if err := json.Unmarshal(b, &br); err != nil {
					t.Fatalf("%s: %s", path, b)
				}
				if br.ReturnStatus != "0" || br.ReturnMessage != "I0013:Signature verification failed" || br.EncryptionData != "" {
					t.Errorf("%s with the forged signature = %q %q %q, want 0 I0013 unsigned", path, br.ReturnStatus, br.ReturnMessage, br.EncryptionData)
				}
			}
			_, page := post(t, "/v1/checkout", formType, form(map[string]string{
				"merchant_id": creds.MerchantID, "account_id": creds.AccountID, "order_no": "0" + r.ResultInfo,
				"currency": "USD", "amount": "999.00", "return_url": "https://evil.example/", "encryption_data": forged}))
			if !strings.Contains(string(page), "I0013") {
				t.Errorf("checkout with the forged signature was not refused with I0013")
			}
		})
	}
	if s := paymentStatus(t, creds, orderNo); s != 3000 {
		t.Errorf("the paid order is now %d, want 3000", s)
	}
	if n, sum := refundsOf(txID); n != 0 || sum != 0 {
		t.Errorf("refunds at the acquirer: %d of %d, want none", n, sum)
	}
	if n := countOrders(t, creds.AccountID, "0I0013%"); n != 0 {
		t.Errorf("%d hosted orders were created from forged signatures", n)
	}
}

// TestBadDataIsRefusedAtTheDoor: a NUL byte or invalid UTF-8 in any text
// field is refused before a workflow starts, and the order_no stays usable.
func TestBadDataIsRefusedAtTheDoor(t *testing.T) {
	t.Parallel()
	creds := env.auto
	cases := []struct {
		name  string
		field string
		value string
		want  string
	}{
		{"NUL in note", "note", "a\x00b", "I0008:Invalid field value: note contains a control character"},
		{"NUL in first_name", "first_name", "A\x00da", "I0008:Invalid field value: first_name contains a control character"},
		{"invalid UTF-8 in last_name", "last_name", "Love\xfflace", "I0008:Invalid field value: last_name is not valid UTF-8"},
		{"escape in shopper_email", "shopper_email", "ada\x1b@example.com", "I0008:Invalid field value: shopper_email contains a control character"},
		{"NUL in billing_city", "billing_city", "Lon\x00don", "I0008:Invalid field value: billing_city contains a control character"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			orderNo := newOrderNo(t)
			f := cardOrder(creds, orderNo, "4242424242424242")
			f[tc.field] = tc.value
			_, r := authorise(t, signCard(f, creds.SignKey))
			if r.ResultInfo != tc.want || r.OrderStatus != "0" || r.TransactionID != "" {
				t.Fatalf("answer = %q %q %q, want 0 %q and no transaction", r.OrderStatus, r.ResultInfo, r.TransactionID, tc.want)
			}
			// Refused while decoding, before the signature is checked: unsigned.
			if r.EncryptionData != "" {
				t.Errorf("encryption_data = %q, want empty", r.EncryptionData)
			}
			if n := countOrders(t, creds.AccountID, orderNo); n != 0 {
				t.Fatalf("%d orders recorded for a refused request", n)
			}
			// The same order_no still works once the data is clean.
			_, r = authorise(t, signCard(cardOrder(creds, orderNo, "4242424242424242"), creds.SignKey))
			if r.ResultInfo != "0000:Success" {
				t.Fatalf("clean retry = %q, want 0000:Success", r.ResultInfo)
			}
		})
	}
}

var tenantSeq atomic.Int64

// TestTenantIsolation: a second merchant, with its own valid key, names the
// first merchant's orders on every endpoint. Nothing of the first merchant's
// is read or changed.
func TestTenantIsolation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	newAccount := func(merchantID string, mode string) merchant.Credentials {
		creds, err := env.gw.Accounts.Create(ctx, merchant.NewAccount{Mode: testmode.Test,
			MerchantID: merchantID, AccountID: fmt.Sprintf("%s%03d", merchantID, tenantSeq.Add(1)), CaptureMode: mode,
			AllowedQueryIPs: []string{"127.0.0.1"}, Currencies: []string{"USD"}, Risk: quietRisk,
		})
		if err != nil {
			t.Fatal(err)
		}
		return creds
	}
	victimAuto := newAccount("40001", models.CaptureAuto)
	victimManual := newAccount("40001", models.CaptureManual)
	attacker := newAccount("40002", models.CaptureAuto)
	sibling := newAccount("40001", models.CaptureAuto) // same merchant, another account

	paidTx, paidNo := paidOrder(t, victimAuto, "20.00")
	f := cardOrder(victimManual, newOrderNo(t), "4242424242424242")
	_, r := authorise(t, signCard(f, victimManual.SignKey))
	if r.OrderStatus != "1" {
		t.Fatalf("manual order: %s", r.ResultInfo)
	}
	authTx, authNo := r.TransactionID, f["order_no"]
	heldCreds := riskAccount(t, risk.Config{CountryMismatchScore: 60}, nil)
	hf := riskOrder(t, heldCreds, "4242424242424267", func(f map[string]string) { f["billing_country"] = "GB" })
	_, r = authorise(t, hf)
	if r.OrderStatus != "-2" {
		t.Fatalf("held order: %s %s", r.OrderStatus, r.ResultInfo)
	}
	heldTx, heldNo := r.TransactionID, hf["order_no"]

	successes := 0
	for _, intruder := range []struct {
		name  string
		creds merchant.Credentials
	}{{"another merchant", attacker}, {"another account of the same merchant", sibling}} {
		batches := []struct {
			path, array, status string
			entry               batchEntry
		}{
			{"/v1/refund", "refund_orders", "refund_status", with(ref(paidTx, paidNo, "20.00"), "refund_amount", "20.00")},
			{"/v1/capture", "capture_orders", "capture_status", ref(authTx, authNo, "12.34")},
			{"/v1/cancel", "cancel_orders", "cancel_status", ref(authTx, authNo, "12.34")},
			{"/v1/review", "review_orders", "review_status", with(ref(heldTx, heldNo, "12.34"), "review_flag", "1")},
		}
		for _, b := range batches {
			t.Run(intruder.name+b.path, func(t *testing.T) {
				_, br := batch(t, intruder.creds, b.path, b.array, []batchEntry{b.entry})
				if len(br.Entries) != 1 {
					t.Fatalf("answer %+v", br)
				}
				if got := br.Entries[0][b.status]; got != "0" {
					successes++
					t.Errorf("%s of another tenant's order: status %s", b.path, got)
				}
				if msg := br.Entries[0]["error_message"] + br.Entries[0]["refund_message"]; !strings.HasPrefix(msg, "I0016:") {
					t.Errorf("%s message = %q, want I0016 order not found", b.path, msg)
				}
			})
		}
		t.Run(intruder.name+"/v1/retrievalTrans", func(t *testing.T) {
			_, q := query(t, intruder.creds, map[string]string{"trades": paidTx + "," + authTx, "orders": paidNo + "," + authNo})
			for _, o := range q.OrdersList {
				if o.QueryResult != "0" || o.PaymentStatus != "" || o.Amount != "" {
					successes++
					t.Errorf("query saw another tenant's order: %+v", o)
				}
			}
		})
		t.Run(intruder.name+"/v1/retrievalRefund", func(t *testing.T) {
			body := map[string]string{"merchant_id": intruder.creds.MerchantID, "account_id": intruder.creds.AccountID,
				"encryption_data": signing.Sign(intruder.creds.SignKey, intruder.creds.MerchantID, intruder.creds.AccountID),
				"trades":          paidTx}
			_, b := post(t, "/v1/retrievalRefund", formType, form(body))
			var rr struct {
				ReturnStatus string `json:"return_status"`
				RefundList   []struct {
					TransactionID string `json:"transaction_id"`
					RefundAmount  string `json:"refund_amount"`
					QueryResult   string `json:"query_result"`
				} `json:"refund_list"`
			}
			if err := json.Unmarshal(b, &rr); err != nil {
				t.Fatalf("%s", b)
			}
			// The id comes back as not found, as one nobody has would: the
			// answer tells the intruder nothing.
			if len(rr.RefundList) != 1 || rr.RefundList[0].QueryResult != "0" || rr.RefundList[0].RefundAmount != "" ||
				rr.RefundList[0].TransactionID != paidTx {
				successes++
				t.Errorf("refund query saw another tenant's refunds: %s", b)
			}
		})
		t.Run(intruder.name+"/ids of the victim with the intruder's key", func(t *testing.T) {
			// The victim's ids signed with the intruder's key: refused on every endpoint.
			for _, path := range []string{"/v1/refund", "/v1/capture", "/v1/cancel", "/v1/review"} {
				array := strings.TrimPrefix(path, "/v1/") + "_orders"
				_, br := batchSignedWith(t, victimAuto, intruder.creds.SignKey, path, array, []batchEntry{
					with(ref(paidTx, paidNo, "20.00"), "refund_amount", "20.00", "review_flag", "1")})
				if br.ReturnMessage != "I0013:Signature verification failed" || br.EncryptionData != "" {
					successes++
					t.Errorf("%s with victim's ids and intruder's key: %q %q", path, br.ReturnMessage, br.EncryptionData)
				}
			}
			f := cardOrder(victimAuto, newOrderNo(t), "4242424242424242")
			_, r := authorise(t, signCard(f, intruder.creds.SignKey))
			if r.ResultInfo != "I0013:Signature verification failed" || r.EncryptionData != "" {
				successes++
				t.Errorf("authorise on the victim's account with the intruder's key: %q %q", r.ResultInfo, r.EncryptionData)
			}
			_, page := post(t, "/v1/checkout", formType, form(map[string]string{
				"merchant_id": victimAuto.MerchantID, "account_id": victimAuto.AccountID, "order_no": newOrderNo(t),
				"currency": "USD", "amount": "5.00", "return_url": "https://evil.example/",
				"encryption_data": signing.Sign(intruder.creds.SignKey, victimAuto.MerchantID, victimAuto.AccountID, "x", "USD", "5.00", "https://evil.example/")}))
			if !strings.Contains(string(page), "I0013") {
				successes++
				t.Errorf("checkout on the victim's account with the intruder's key was not refused")
			}
		})
		t.Run(intruder.name+"/checkout with the victim's order_no opens the intruder's own order", func(t *testing.T) {
			v := url.Values{"merchant_id": {intruder.creds.MerchantID}, "account_id": {intruder.creds.AccountID},
				"order_no": {paidNo}, "currency": {"USD"}, "amount": {"20.00"}, "return_url": {"https://shop.example/r"}}
			v.Set("encryption_data", signing.Sign(intruder.creds.SignKey, intruder.creds.MerchantID, intruder.creds.AccountID,
				paidNo, "USD", "20.00", "https://shop.example/r"))
			post(t, "/v1/checkout", formType, v.Encode())
			if o := findOrder(t, victimAuto.AccountID, paidNo); o.PaymentStatus != 3000 || o.MerchantID != victimAuto.MerchantID {
				successes++
				t.Errorf("the victim's order changed: %d", o.PaymentStatus)
			}
		})
	}
	t.Run("callbacks without the provider's signature", func(t *testing.T) {
		o := findOrder(t, victimAuto.AccountID, paidNo)
		status, _ := post(t, "/v1/apm/callback", "application/json",
			jsonBody(t, map[string]string{"payment_id": "pay_x", "reference": o.TransactionID, "status": "paid"}))
		if status < 400 {
			successes++
			t.Errorf("unsigned APM callback answered %d", status)
		}
		status, _ = post(t, "/v1/3ds/callback", formType, form(map[string]string{
			"authentication_id": "auth_x", "status": "Y", "reference": o.TransactionID, "signature": "00"}))
		if status < 400 {
			successes++
			t.Errorf("unsigned 3-D Secure callback answered %d", status)
		}
	})

	if s := paymentStatus(t, victimAuto, paidNo); s != 3000 {
		t.Errorf("victim's paid order is %d, want 3000", s)
	}
	if s := paymentStatus(t, victimManual, authNo); s != 2000 {
		t.Errorf("victim's authorised order is %d, want 2000", s)
	}
	if s := paymentStatus(t, heldCreds, heldNo); s != 2100 {
		t.Errorf("victim's held order is %d, want 2100", s)
	}
	if n, _ := refundsOf(paidTx); n != 0 {
		t.Errorf("%d refunds of the victim's order at the acquirer", n)
	}
	if successes != 0 {
		t.Errorf("%d cross-tenant successes, want 0", successes)
	}
}

// countOrders counts an account's orders whose order_no matches a LIKE pattern.
func countOrders(t *testing.T, accountID, pattern string) int64 {
	t.Helper()
	var n int64
	if err := env.gw.DB.Model(&models.Order{}).Where("account_id = ? AND order_no LIKE ?", accountID, pattern).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSeenSignatureMovesNoMoneyOnALiveAccount replays, on a live account
// made with the defaults, every way a seen signature moved money: a
// capture's encryption_data on /v1/refund, a refund's body with its amount
// raised, the same body with one space more (compatible and strong), a
// compatible payout and a compatible charge of a stored card. Each is
// refused with I0013 and only the merchant's own strong refund is paid.
func TestSeenSignatureMovesNoMoneyOnALiveAccount(t *testing.T) {
	t.Parallel()
	live := modeAccount(t, testmode.Live)
	orderNo := newOrderNo(t)
	f := cardOrder(live, orderNo, "4242424242424267")
	f["amount"] = "30.00"
	if _, r := authorise(t, signCard(f, live.SignKey)); r.OrderStatus != "1" {
		t.Fatalf("a live card payment, compatibly signed: %s", r.ResultInfo)
	}
	tx := findOrder(t, live.AccountID, orderNo).TransactionID

	// The merchant's own refund of 1.00, strongly signed.
	refund := func(amount, sig string) string {
		return jsonBody(t, map[string]any{
			"merchant_id": live.MerchantID, "account_id": live.AccountID, "encryption_data": sig,
			"refund_orders": []batchEntry{with(ref(tx, orderNo, "30.00"), "refund_amount", amount)},
		})
	}
	own := refund("1.00", "")
	ownHeader := strongHeader(t, live.SignKey, "/v1/refund", time.Now(), "it-"+randomHex(12), own)
	if a := postWith(t, "/v1/refund", "application/json", own, signing.StrongHeader, ownHeader); a.field(t, "return_status") != "1" {
		t.Fatalf("the merchant's strong refund: %s", a.body)
	}

	batchSig := signing.Sign(live.SignKey, live.MerchantID, live.AccountID, tx) // a capture's, or a refund's
	payout := payoutBody(live, newRequestID(), "10.00", ibanCompletes)
	stored := map[string]string{"merchant_id": live.MerchantID, "account_id": live.AccountID, "order_no": newOrderNo(t),
		"currency": "USD", "amount": "20.00", "token_id": "tok_" + randomHex(16), "first_name": "Ada", "last_name": "Lovelace",
		"shopper_email": "ada@example.com"}
	stored = signCard(stored, live.SignKey)
	attacks := []struct {
		name, path, ct, body string
		headers              []string
		code                 func(a answer) string
	}{
		{name: "a capture's signature on /v1/refund", path: "/v1/refund", body: refund("5.00", batchSig)},
		{name: "a refund's body with 20.00 for 1.00", path: "/v1/refund", body: refund("20.00", batchSig)},
		{name: "a compatible refund with one space more", path: "/v1/refund", body: refund("1.00", batchSig) + " "},
		{name: "the strong refund again with one space more", path: "/v1/refund", body: own + " ", headers: []string{signing.StrongHeader, ownHeader}},
		{name: "the strong refund's header on a raised amount", path: "/v1/refund", body: refund("20.00", ""), headers: []string{signing.StrongHeader, ownHeader}},
		{name: "a compatible capture", path: "/v1/capture", body: jsonBody(t, map[string]any{"merchant_id": live.MerchantID,
			"account_id": live.AccountID, "encryption_data": batchSig, "capture_orders": []batchEntry{ref(tx, orderNo, "30.00")}})},
		{name: "a compatible payout", path: "/v1/payout", body: jsonBody(t, payout),
			code: func(a answer) string { return a.field(t, "result_info") }},
		{name: "a compatible charge of a stored card", path: "/v1/authorise", ct: formType, body: form(stored),
			code: func(a answer) string { return a.respon(t).ResultInfo }},
	}
	for _, at := range attacks {
		t.Run(at.name, func(t *testing.T) {
			a := postWith(t, at.path, cmp.Or(at.ct, "application/json"), at.body, at.headers...)
			code := at.code
			if code == nil {
				code = func(a answer) string { return a.field(t, "return_message") }
			}
			if got := code(a); got != codes.BadSignature.String() {
				t.Errorf("%s: %s, want %s", at.name, a.body, codes.BadSignature)
			}
		})
	}
	if n, sum := refundsOf(tx); n != 1 || sum != 100 {
		t.Errorf("acquirer refunds: %d of %d, want the merchant's one of 100", n, sum)
	}
	if o := findOrder(t, live.AccountID, orderNo); o.RefundedAmount != 100 || o.CapturedAmount != 3000 {
		t.Errorf("record: refunded %d captured %d, want 100 and 3000", o.RefundedAmount, o.CapturedAmount)
	}
	var payouts int64
	if err := env.gw.DB.Model(&models.Payout{}).Where("merchant_id = ? AND account_id = ?", live.MerchantID, live.AccountID).Count(&payouts).Error; err != nil {
		t.Fatal(err)
	}
	if payouts != 0 {
		t.Errorf("%d payouts recorded, want none", payouts)
	}
}
