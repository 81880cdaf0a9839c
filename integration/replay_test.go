package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/signing"
	"github.com/paygate/paygate/internal/domain/testmode"
	"github.com/paygate/paygate/models"
)

// answer is one HTTP answer of the API.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// postWith sends a body with extra headers (name, value, ...).
func postWith(t *testing.T, path, contentType, body string, headers ...string) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, env.api.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{resp.StatusCode, resp.Header, b}
}

// field reads a string field of a JSON answer.
func (a answer) field(t *testing.T, name string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(a.body, &m); err != nil {
		t.Fatalf("answer is not JSON (%d): %s", a.status, a.body)
	}
	s, _ := m[name].(string)
	return s
}

// respon reads an XML answer.
func (a answer) respon(t *testing.T) respon {
	t.Helper()
	var r respon
	if err := xml.Unmarshal(a.body, &r); err != nil {
		t.Fatalf("answer is not XML respon (%d): %s", a.status, a.body)
	}
	return r
}

// refundWithCaptureSignature is the signature-replay attack body: a refund of
// amount of the order, carrying the encryption_data of a capture batch of
// the same order (the two recipes are the same list of ids).
func refundWithCaptureSignature(t *testing.T, creds merchant.Credentials, tx, no, total, amount string) string {
	t.Helper()
	captureSig := signing.Sign(creds.SignKey, creds.MerchantID, creds.AccountID, tx)
	return jsonBody(t, map[string]any{
		"merchant_id": creds.MerchantID, "account_id": creds.AccountID, "encryption_data": captureSig,
		"refund_orders": []batchEntry{with(ref(tx, no, total), "refund_amount", amount)},
	})
}

// TestReplayedCaptureSignatureRefundsOnce: a capture batch's signature
// replayed three times on /v1/refund, one after another or all at once,
// makes one refund; every answer is the first answer.
func TestReplayedCaptureSignatureRefundsOnce(t *testing.T) {
	t.Parallel()
	creds := env.auto
	t.Run("one after another", func(t *testing.T) {
		t.Parallel()
		tx, no := paidOrder(t, creds, "30.00")
		body := refundWithCaptureSignature(t, creds, tx, no, "30.00", "30.00")
		var first answer
		for i := range 3 {
			a := postWith(t, "/v1/refund", "application/json", body)
			if i == 0 {
				first = a
				if a.field(t, "return_status") != "1" {
					t.Fatalf("first refund: %s", a.body)
				}
				continue
			}
			if !bytes.Equal(a.body, first.body) || a.header.Get(api.ReplayedHeader) != "true" {
				t.Errorf("replay %d answered %s (replayed %q), want the first answer %s", i, a.body, a.header.Get(api.ReplayedHeader), first.body)
			}
		}
		if n, sum := refundsOf(tx); n != 1 || sum != 3000 {
			t.Errorf("simulator refunds: %d of %d, want 1 of 3000", n, sum)
		}
		if o := findOrder(t, creds.AccountID, no); o.RefundedAmount != 3000 {
			t.Errorf("record refunded %d, want 3000", o.RefundedAmount)
		}
	})
	t.Run("all at once", func(t *testing.T) {
		t.Parallel()
		tx, no := paidOrder(t, creds, "30.00")
		body := refundWithCaptureSignature(t, creds, tx, no, "30.00", "10.00")
		answers := make([]answer, 3)
		var wg sync.WaitGroup
		for i := range answers {
			wg.Go(func() { answers[i] = postWith(t, "/v1/refund", "application/json", body) })
		}
		wg.Wait()
		refunded := 0
		for i, a := range answers {
			switch a.field(t, "return_message") {
			case "OK":
				refunded++
				if !bytes.Equal(a.body, answers[0].body) && answers[0].field(t, "return_message") == "OK" {
					t.Errorf("answer %d differs from the first: %s", i, a.body)
				}
			case codes.RequestInProgress.String():
			default:
				t.Errorf("answer %d: %s", i, a.body)
			}
		}
		if refunded == 0 {
			t.Error("no request was answered with the refund")
		}
		if n, sum := refundsOf(tx); n != 1 || sum != 1000 {
			t.Errorf("simulator refunds: %d of %d, want 1 of 1000", n, sum)
		}
		if o := findOrder(t, creds.AccountID, no); o.RefundedAmount != 1000 {
			t.Errorf("record refunded %d, want 1000", o.RefundedAmount)
		}
	})
}

// TestIdempotencyKeyReuse: the same Idempotency-Key with the same body gets
// the first answer; with another body it is refused with I0020, unsigned,
// and nothing moves.
func TestIdempotencyKeyReuse(t *testing.T) {
	t.Parallel()
	creds := env.auto
	tx, no := paidOrder(t, creds, "50.00")
	key := "refund-" + newOrderNo(t)
	refund := func(amount string) string {
		return jsonBody(t, map[string]any{
			"merchant_id": creds.MerchantID, "account_id": creds.AccountID,
			"encryption_data": signing.Sign(creds.SignKey, creds.MerchantID, creds.AccountID, tx),
			"refund_orders":   []batchEntry{with(ref(tx, no, "50.00"), "refund_amount", amount)},
		})
	}
	first := postWith(t, "/v1/refund", "application/json", refund("5.00"), api.IdempotencyKeyHeader, key)
	if first.field(t, "return_status") != "1" {
		t.Fatalf("first refund: %s", first.body)
	}
	again := postWith(t, "/v1/refund", "application/json", refund("5.00"), api.IdempotencyKeyHeader, key)
	if !bytes.Equal(again.body, first.body) || again.header.Get(api.ReplayedHeader) != "true" {
		t.Errorf("same key and body: %s", again.body)
	}
	other := postWith(t, "/v1/refund", "application/json", refund("7.00"), api.IdempotencyKeyHeader, key)
	if other.status != http.StatusOK || other.field(t, "return_status") != "0" ||
		other.field(t, "return_message") != codes.IdempotencyConflict.String() || other.field(t, "encryption_data") != "" {
		t.Errorf("same key, other body: %d %s", other.status, other.body)
	}
	if n, sum := refundsOf(tx); n != 1 || sum != 500 {
		t.Errorf("simulator refunds: %d of %d, want 1 of 500", n, sum)
	}

	// On /v1/authorise the refusal is an XML respon.
	authKey := "pay-" + newOrderNo(t)
	f := signCard(cardOrder(creds, newOrderNo(t), "4242424242424242"), creds.SignKey)
	paid := postWith(t, "/v1/authorise", formType, form(f), api.IdempotencyKeyHeader, authKey).respon(t)
	if paid.OrderStatus != "1" {
		t.Fatalf("payment: %s", paid.ResultInfo)
	}
	g := signCard(cardOrder(creds, newOrderNo(t), "4242424242424242"), creds.SignKey)
	r := postWith(t, "/v1/authorise", formType, form(g), api.IdempotencyKeyHeader, authKey).respon(t)
	if r.ResultInfo != codes.IdempotencyConflict.String() || r.EncryptionData != "" || r.TransactionID != "" {
		t.Errorf("authorise with a used key and another order: %+v", r)
	}
	if n := countOrders(t, creds.AccountID, g["order_no"]); n != 0 {
		t.Errorf("the refused order was recorded (%d)", n)
	}
}

// strongHeader signs a POST of body to path at the time given.
func strongHeader(t *testing.T, key, path string, at time.Time, nonce, body string) string {
	t.Helper()
	sig, err := signing.SignStrong(key, http.MethodPost, path, at.Unix(), nonce, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return sig.String()
}

// TestStrongSigningScheme: an account on the strong scheme refuses
// compatible-only signatures, takes a strong one, and refuses a used nonce
// and a stale timestamp; an account switched to the strong scheme refuses
// the compatible signature from then on.
func TestStrongSigningScheme(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	creds, err := env.gw.Accounts.Create(ctx, merchant.NewAccount{Mode: testmode.Test,
		MerchantID: "70001", AccountID: "70001001", CaptureMode: models.CaptureAuto, SigningScheme: merchant.SigningStrong,
		AllowedQueryIPs: []string{"127.0.0.1"}, Currencies: []string{"USD"}, Risk: quietRisk,
	})
	if err != nil {
		t.Fatal(err)
	}
	refused := func(name string, r respon) {
		t.Helper()
		if r.ResultInfo != "I0013:Signature verification failed" || r.EncryptionData != "" || r.TransactionID != "" {
			t.Errorf("%s: %+v", name, r)
		}
	}

	// The compatible signature alone, right as it is, is refused.
	f := signCard(cardOrder(creds, newOrderNo(t), "4242424242424242"), creds.SignKey)
	refused("compatible signature", postWith(t, "/v1/authorise", formType, form(f)).respon(t))

	// A strong signature pays. (The handler wants encryption_data present;
	// beside a strong signature it is not looked at.)
	f = cardOrder(creds, newOrderNo(t), "4242424242424242")
	f["encryption_data"] = "-"
	body := form(f)
	nonce := "it-" + randomHex(12)
	paid := postWith(t, "/v1/authorise", formType, body, signing.StrongHeader,
		strongHeader(t, creds.SignKey, "/v1/authorise", time.Now(), nonce, body)).respon(t)
	if paid.OrderStatus != "1" {
		t.Fatalf("strong payment: %+v", paid)
	}
	checkResultSignature(t, paid, creds.SignKey)

	// Its nonce again, on another order: refused.
	g := cardOrder(creds, newOrderNo(t), "4242424242424242")
	g["encryption_data"] = "-"
	other := form(g)
	refused("used nonce", postWith(t, "/v1/authorise", formType, other, signing.StrongHeader,
		strongHeader(t, creds.SignKey, "/v1/authorise", time.Now(), nonce, other)).respon(t))
	// Six minutes old: refused.
	refused("stale timestamp", postWith(t, "/v1/authorise", formType, other, signing.StrongHeader,
		strongHeader(t, creds.SignKey, "/v1/authorise", time.Now().Add(-6*time.Minute), "it-"+randomHex(12), other)).respon(t))
	if n := countOrders(t, creds.AccountID, g["order_no"]); n != 0 {
		t.Errorf("a refused order was recorded (%d)", n)
	}

	// A refund with a strong signature; the capture-signature replay does
	// nothing on this account.
	refund := jsonBody(t, map[string]any{"merchant_id": creds.MerchantID, "account_id": creds.AccountID,
		"refund_orders": []batchEntry{with(ref(paid.TransactionID, paid.OrderNo, "12.34"), "refund_amount", "2.00")}})
	replayed := refundWithCaptureSignature(t, creds, paid.TransactionID, paid.OrderNo, "12.34", "12.34")
	if a := postWith(t, "/v1/refund", "application/json", replayed); a.field(t, "return_message") != "I0013:Signature verification failed" {
		t.Errorf("capture signature on a strong account's refund: %s", a.body)
	}
	a := postWith(t, "/v1/refund", "application/json", refund, signing.StrongHeader,
		strongHeader(t, creds.SignKey, "/v1/refund", time.Now(), "it-"+randomHex(12), refund))
	if a.field(t, "return_status") != "1" || a.field(t, "encryption_data") == "" {
		t.Errorf("strong refund: %s", a.body)
	}
	if n, sum := refundsOf(paid.TransactionID); n != 1 || sum != 200 {
		t.Errorf("simulator refunds: %d of %d, want 1 of 200", n, sum)
	}

	// paygate merchant set-signing: a compatible account switched to strong.
	switched, err := env.gw.Accounts.Create(ctx, merchant.NewAccount{Mode: testmode.Test,
		MerchantID: "70002", AccountID: "70002001", CaptureMode: models.CaptureAuto,
		AllowedQueryIPs: []string{"127.0.0.1"}, Currencies: []string{"USD"}, Risk: quietRisk,
	})
	if err != nil {
		t.Fatal(err)
	}
	query := form(map[string]string{"merchant_id": switched.MerchantID, "account_id": switched.AccountID, "orders": "X",
		"encryption_data": signing.Sign(switched.SignKey, switched.MerchantID, switched.AccountID)})
	if a := postWith(t, "/v1/retrievalTrans", formType, query); a.field(t, "return_status") != "1" {
		t.Fatalf("compatible query: %s", a.body)
	}
	if err := env.gw.Accounts.SetSigningScheme(ctx, switched.MerchantID, switched.AccountID, merchant.SigningStrong); err != nil {
		t.Fatal(err)
	}
	if a := postWith(t, "/v1/retrievalTrans", formType, query); a.field(t, "return_message") != "I0013:Signature verification failed" {
		t.Errorf("compatible query after the switch: %s", a.body)
	}
	if a := postWith(t, "/v1/retrievalTrans", formType, query, signing.StrongHeader,
		strongHeader(t, switched.SignKey, "/v1/retrievalTrans", time.Now(), "it-"+randomHex(12), query)); a.field(t, "return_status") != "1" {
		t.Errorf("strong query after the switch: %s", a.body)
	}
}
