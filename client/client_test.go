package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paygate/paygate/client"
	"github.com/paygate/paygate/internal/domain/notify"
	"github.com/paygate/paygate/internal/domain/signing"
)

var creds = client.Credentials{MerchantID: "10086", AccountID: "10086001", SignKey: "test-sign-key"}

// fast retries: the tests wait for conditions, not for time.
var fast = client.WithRetry(client.Retry{Attempts: 4, Backoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond})

// received is one request as the fake gateway saw it.
type received struct {
	path, idempotencyKey, strong string
	fields                       map[string]any
}

// fakeGateway records requests and answers each with the next of its
// answers (the last one again when they run out).
type fakeGateway struct {
	mu      sync.Mutex
	got     []received
	answers []func(w http.ResponseWriter, r *http.Request)
}

func (f *fakeGateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var fields map[string]any
	_ = json.Unmarshal(b, &fields)
	f.mu.Lock()
	n := len(f.got)
	f.got = append(f.got, received{r.URL.Path, r.Header.Get("Idempotency-Key"), r.Header.Get(signing.StrongHeader), fields})
	answer := f.answers[min(n, len(f.answers)-1)]
	f.mu.Unlock()
	answer(w, r)
}

func (f *fakeGateway) requests() []received {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]received(nil), f.got...)
}

func serve(t *testing.T, answers ...func(w http.ResponseWriter, r *http.Request)) (*fakeGateway, *httptest.Server) {
	f := &fakeGateway{answers: answers}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func jsonAnswer(status int, v any) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
}

func xmlAnswer(status int, body string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/xml; charset=utf-8")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// signedRespon is a payment result signed as the gateway signs it.
func signedRespon(resultInfo, status string) string {
	r := signing.PaymentResult{MerchantID: creds.MerchantID, AccountID: creds.AccountID, TransactionID: "1234567890123456789",
		OrderNo: "A1", Currency: "USD", Amount: "12.34", OrderStatus: status, ResultInfo: resultInfo}
	return fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?><respon><merchant_id>%s</merchant_id><account_id>%s</account_id>`+
		`<order_no>A1</order_no><amount>12.34</amount><currency>USD</currency><transaction_id>1234567890123456789</transaction_id>`+
		`<order_status>%s</order_status><result_info>%s</result_info><risk_reasons><name>velocity</name><status>ACCEPT</status>`+
		`<name>bin</name><status>ACCEPT</status></risk_reasons><encryption_data>%s</encryption_data></respon>`,
		creds.MerchantID, creds.AccountID, status, resultInfo, signing.SignPaymentResult(creds.SignKey, r))
}

func card() client.Payment {
	return client.Payment{Order: client.Order{OrderNo: "A1", Currency: "USD", Amount: "12.34", FirstName: "Ada",
		LastName: "Lovelace", ShopperEmail: "ada@example.com"},
		Card: "4242424242424242", ExpirationMonth: "12", ExpirationYear: "2030", SecurityCode: "123"}
}

// TestCompatibleRecipes: in the compatible scheme each operation's
// encryption_data is the recipe of docs/design.md §3 over the body sent.
func TestCompatibleRecipes(t *testing.T) {
	apm := card()
	apm.Card, apm.ExpirationMonth, apm.ExpirationYear, apm.SecurityCode = "", "", "", ""
	apm.PaymentMethod, apm.ReturnURL = "pix", "https://shop.example/back"
	tests := []struct {
		name   string
		call   func(context.Context, *client.Client) error
		recipe []string // body fields in signing order ("[]" : each entry's transaction_id)
	}{
		{"card payment", func(ctx context.Context, c *client.Client) error { _, err := c.Authorise(ctx, card()); return err },
			[]string{"merchant_id", "account_id", "order_no", "currency", "amount", "first_name", "last_name", "card",
				"expiration_year", "expiration_month", "security_code", "shopper_email"}},
		{"APM payment", func(ctx context.Context, c *client.Client) error { _, err := c.Authorise(ctx, apm); return err },
			[]string{"merchant_id", "account_id", "order_no", "currency", "amount", "payment_method", "return_url"}},
		{"checkout", func(ctx context.Context, c *client.Client) error {
			_, err := c.Checkout(ctx, client.Order{OrderNo: "A2", Currency: "EUR", Amount: "5.00", ReturnURL: "https://shop.example/r"})
			return err
		}, []string{"merchant_id", "account_id", "order_no", "currency", "amount", "return_url"}},
		{"capture", func(ctx context.Context, c *client.Client) error {
			_, err := c.Capture(ctx, []client.CaptureEntry{{TransactionID: "111"}, {TransactionID: "222"}})
			return err
		}, []string{"merchant_id", "account_id", "capture_orders[]"}},
		{"refund", func(ctx context.Context, c *client.Client) error {
			_, err := c.Refund(ctx, []client.RefundEntry{{TransactionID: "333", RefundAmount: "1.00"}})
			return err
		}, []string{"merchant_id", "account_id", "refund_orders[]"}},
		{"review", func(ctx context.Context, c *client.Client) error {
			_, err := c.Review(ctx, []client.ReviewEntry{{TransactionID: "444", ReviewFlag: "1"}})
			return err
		}, []string{"merchant_id", "account_id", "review_orders[]"}},
		{"cancel", func(ctx context.Context, c *client.Client) error {
			_, err := c.Cancel(ctx, []client.CancelEntry{{TransactionID: "555"}})
			return err
		}, []string{"merchant_id", "account_id", "cancel_orders[]"}},
		{"order query", func(ctx context.Context, c *client.Client) error {
			_, err := c.QueryOrders(ctx, client.OrdersQuery{Orders: "A1"})
			return err
		}, []string{"merchant_id", "account_id"}},
		{"refund query", func(ctx context.Context, c *client.Client) error {
			_, err := c.QueryRefunds(ctx, client.RefundsQuery{Trades: "1"})
			return err
		}, []string{"merchant_id", "account_id"}},
		{"payout", func(ctx context.Context, c *client.Client) error {
			_, err := c.Payout(ctx, client.Payout{RequestID: "r-1", PaymentAmount: "100.00", PaymentCurrency: "USD"})
			return err
		}, []string{"merchant_id", "account_id", "request_id", "payment_currency", "payment_amount"}},
		{"payout query", func(ctx context.Context, c *client.Client) error { _, err := c.PayoutQuery(ctx, "r-1"); return err },
			[]string{"merchant_id", "account_id", "request_id"}},
		{"optimise", func(ctx context.Context, c *client.Client) error {
			_, err := c.Optimise(ctx, client.OptimiseRequest{RequestID: "o-1", Currency: "USD", Amount: "9.99", ShopperEmail: "a@b.c"})
			return err
		}, []string{"merchant_id", "account_id", "request_id", "currency", "amount", "shopper_email"}},
		{"cancel subscription", func(ctx context.Context, c *client.Client) error {
			_, err := c.CancelSubscription(ctx, "rec-1")
			return err
		},
			[]string{"merchant_id", "account_id", "recurring_id"}},
		{"subscription", func(ctx context.Context, c *client.Client) error {
			_, err := c.Subscription(ctx, client.SubscriptionChange{RecurringID: "rec-1", Action: "update", ContractAmount: "3.00"})
			return err
		}, []string{"merchant_id", "account_id", "recurring_id", "action", "contract_amount", "recurring_deduction_time"}},
		{"token delete", func(ctx context.Context, c *client.Client) error { _, err := c.DeleteToken(ctx, "tok-1"); return err },
			[]string{"merchant_id", "account_id", "token_id"}},
		{"dispute evidence", func(ctx context.Context, c *client.Client) error {
			_, err := c.Dispute(ctx, client.DisputeRequest{DisputeID: "d-1", Action: "evidence", Evidence: []client.Evidence{{Name: "note", Text: "<shipped>"}}})
			return err
		}, []string{"merchant_id", "account_id", "dispute_id", "action", "evidence_sha256"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, srv := serve(t, jsonAnswer(http.StatusTeapot, map[string]string{}))
			c := client.New(srv.URL, creds, client.WithScheme(client.Compatible), client.WithRetry(client.Retry{Attempts: 1}))
			_ = tt.call(t.Context(), c)
			got := f.requests()
			if len(got) != 1 {
				t.Fatalf("%d requests", len(got))
			}
			body := got[0].fields
			var values []string
			for _, name := range tt.recipe {
				if array, ok := strings.CutSuffix(name, "[]"); ok {
					for _, e := range body[array].([]any) {
						values = append(values, e.(map[string]any)["transaction_id"].(string))
					}
					continue
				}
				s, _ := body[name].(string)
				values = append(values, s)
			}
			if want := signing.Sign(creds.SignKey, values...); body["encryption_data"] != want {
				t.Errorf("encryption_data %v, want %s over %q", body["encryption_data"], want, values)
			}
			if got[0].strong != "" {
				t.Errorf("compatible request sent %s: %s", signing.StrongHeader, got[0].strong)
			}
		})
	}
}

// TestStrongSignature: a strong request carries a Paygate-Signature the
// gateway's check accepts for its method, path and body, with a fresh
// nonce each time, and no encryption_data.
func TestStrongSignature(t *testing.T) {
	var mu sync.Mutex
	var verdicts []error
	var nonces []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		sig, err := signing.ParseStrongHeader(r.Header.Get(signing.StrongHeader))
		if err == nil {
			err = signing.VerifyStrong(creds.SignKey, r.Method, r.URL.Path, body, sig, time.Now())
		}
		mu.Lock()
		verdicts, nonces = append(verdicts, err), append(nonces, sig.Nonce)
		mu.Unlock()
		if strings.Contains(string(body), "encryption_data") {
			t.Errorf("strong request with encryption_data: %s", body)
		}
		jsonAnswer(http.StatusServiceUnavailable, map[string]string{"result_info": "S0001:Temporary system error, try again"})(w, r)
	}))
	defer srv.Close()
	c := client.New(srv.URL, creds, fast)
	_, err := c.Payout(t.Context(), client.Payout{RequestID: "r-1", PaymentAmount: "100.00", PaymentCurrency: "USD",
		Beneficiary: client.Beneficiary{FirstName: "Bo", BankDetails: &client.BankDetails{IBAN: "DE89370400440532013000"}}})
	var perr *client.Error
	if !errors.As(err, &perr) || perr.Code != "S0001" || !perr.Temporary() {
		t.Fatalf("error %v, want the last S0001", err)
	}
	if len(verdicts) != 4 {
		t.Fatalf("%d attempts, want 4", len(verdicts))
	}
	seen := map[string]bool{}
	for i, v := range verdicts {
		if v != nil {
			t.Errorf("attempt %d: %v", i, v)
		}
		if seen[nonces[i]] {
			t.Errorf("attempt %d reused nonce %s", i, nonces[i])
		}
		seen[nonces[i]] = true
	}
}

// TestRetries: what is sent again, how often, and always under one
// Idempotency-Key; what is not.
func TestRetries(t *testing.T) {
	ok := xmlAnswer(http.StatusOK, signedRespon("0000:Success", client.OrderSucceeded))
	hangUp := func(w http.ResponseWriter, _ *http.Request) {
		conn, _, _ := w.(http.Hijacker).Hijack()
		_ = conn.Close()
	}
	busy := xmlAnswer(http.StatusOK, `<respon><result_info>I0021:The same request is still in progress</result_info></respon>`)
	systemError := xmlAnswer(http.StatusOK, `<respon><result_info>S0001:Temporary system error, try again</result_info></respon>`)
	refused := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", `<https://github.com/paygate/paygate/blob/main/docs/result-codes.md#i0013>; rel="help"`)
		xmlAnswer(http.StatusBadRequest, `<respon><result_info>I0013:Signature verification failed</result_info></respon>`)(w, r)
	}
	tests := []struct {
		name     string
		answers  []func(http.ResponseWriter, *http.Request)
		attempts int
		code     string // the *Error's code, "" for success
		status   string // the result's order_status on success
	}{
		{"answered at once", []func(http.ResponseWriter, *http.Request){ok}, 1, "", "1"},
		{"a decline is an answer", []func(http.ResponseWriter, *http.Request){xmlAnswer(http.StatusOK, signedRespon("A0001:Declined", client.OrderFailed))}, 1, "", "0"},
		{"503 then answered", []func(http.ResponseWriter, *http.Request){jsonAnswer(http.StatusServiceUnavailable, nil), ok}, 2, "", "1"},
		{"connection dropped twice", []func(http.ResponseWriter, *http.Request){hangUp, hangUp, ok}, 3, "", "1"},
		{"in progress then answered", []func(http.ResponseWriter, *http.Request){busy, ok}, 2, "", "1"},
		{"system error then answered", []func(http.ResponseWriter, *http.Request){systemError, systemError, ok}, 3, "", "1"},
		{"system error every time", []func(http.ResponseWriter, *http.Request){systemError}, 4, "S0001", ""},
		{"bad signature is not retried", []func(http.ResponseWriter, *http.Request){refused}, 1, "I0013", ""},
		{"429 then answered", []func(http.ResponseWriter, *http.Request){jsonAnswer(http.StatusTooManyRequests, nil), ok}, 2, "", "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, srv := serve(t, tt.answers...)
			res, err := client.New(srv.URL, creds, fast).Authorise(t.Context(), card())
			got := f.requests()
			if len(got) != tt.attempts {
				t.Errorf("%d attempts, want %d", len(got), tt.attempts)
			}
			for _, r := range got {
				if r.idempotencyKey == "" || r.idempotencyKey != got[0].idempotencyKey {
					t.Errorf("Idempotency-Key %q, first %q", r.idempotencyKey, got[0].idempotencyKey)
				}
			}
			if tt.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				if res.OrderStatus != tt.status || res.TransactionID != "1234567890123456789" || len(res.RiskReasons.Reasons) != 2 {
					t.Errorf("result %+v", res)
				}
				return
			}
			var perr *client.Error
			if !errors.As(err, &perr) || perr.Code != tt.code {
				t.Fatalf("error %v, want code %s", err, tt.code)
			}
			if tt.code == "I0013" && (perr.HTTPStatus != http.StatusBadRequest || !strings.HasSuffix(perr.Help, "#i0013") || perr.Temporary()) {
				t.Errorf("refusal %+v", perr)
			}
		})
	}
}

// TestWhatCarriesAKey: operations that change something carry an
// Idempotency-Key (the caller's when given); queries carry none, whatever
// the caller asks, since a key would keep their answers a day and a page
// of Orders is another body each time.
func TestWhatCarriesAKey(t *testing.T) {
	tests := []struct {
		name string
		call func(context.Context, *client.Client) error
		key  string // "" none, "*" a generated one
	}{
		{"refund", func(ctx context.Context, c *client.Client) error {
			_, err := c.Refund(ctx, []client.RefundEntry{{TransactionID: "1", RefundAmount: "1.00"}})
			return err
		}, "*"},
		{"refund with the caller's key", func(ctx context.Context, c *client.Client) error {
			_, err := c.Refund(ctx, []client.RefundEntry{{TransactionID: "1", RefundAmount: "1.00"}}, client.WithIdempotencyKey("r-1"))
			return err
		}, "r-1"},
		{"order query, even with a key", func(ctx context.Context, c *client.Client) error {
			_, err := c.QueryOrders(ctx, client.OrdersQuery{}, client.WithIdempotencyKey("q-1"))
			return err
		}, ""},
		{"refund query", func(ctx context.Context, c *client.Client) error {
			_, err := c.QueryRefunds(ctx, client.RefundsQuery{Trades: "1"})
			return err
		}, ""},
		{"payout query", func(ctx context.Context, c *client.Client) error { _, err := c.PayoutQuery(ctx, "r"); return err }, ""},
		{"optimise", func(ctx context.Context, c *client.Client) error {
			_, err := c.Optimise(ctx, client.OptimiseRequest{RequestID: "o", Currency: "USD", Amount: "1.00"})
			return err
		}, ""},
		{"dispute list", func(ctx context.Context, c *client.Client) error {
			_, err := c.Dispute(ctx, client.DisputeRequest{Action: "list"})
			return err
		}, ""},
		{"dispute accepted", func(ctx context.Context, c *client.Client) error {
			_, err := c.Dispute(ctx, client.DisputeRequest{DisputeID: "d", Action: "accept"})
			return err
		}, "*"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, srv := serve(t, jsonAnswer(http.StatusTeapot, nil))
			_ = tt.call(t.Context(), client.New(srv.URL, creds, client.WithRetry(client.Retry{Attempts: 1})))
			got := f.requests()[0].idempotencyKey
			if tt.key == "*" && !strings.HasPrefix(got, "pgc-") || tt.key != "*" && got != tt.key {
				t.Errorf("Idempotency-Key %q, want %q", got, tt.key)
			}
		})
	}
}

// TestReplayedAnswers: an answer given again from the gateway's replay
// store says so.
func TestReplayedAnswers(t *testing.T) {
	right := signing.SignUpper(creds.SignKey, creds.MerchantID, creds.AccountID, "1", "777")
	for _, replayed := range []bool{false, true} {
		_, srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
			if replayed {
				w.Header().Set("Idempotent-Replayed", "true")
			}
			jsonAnswer(http.StatusOK, map[string]any{"merchant_id": creds.MerchantID, "account_id": creds.AccountID,
				"return_status": "1", "return_message": "OK", "encryption_data": right,
				"refund_orders": []map[string]string{{"transaction_id": "777", "refund_status": "1"}}})(w, r)
		})
		res, err := client.New(srv.URL, creds, fast).Refund(t.Context(), []client.RefundEntry{{TransactionID: "777", RefundAmount: "1.00"}})
		if err != nil || res.Replayed != replayed {
			t.Errorf("replayed %v: %+v, %v", replayed, res, err)
		}
	}
}

// answered is a transport that reads each answer whole and then says so,
// so a test knows the client holds the answer.
type answered struct{ got chan struct{} }

func (a answered) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	res.Body = io.NopCloser(strings.NewReader(string(body)))
	a.got <- struct{}{}
	return res, nil
}

// TestCallerKeyAndCancel: a caller's Idempotency-Key is sent as given; a
// cancelled context ends the retries, and the error still holds the last
// answer's refusal.
func TestCallerKeyAndCancel(t *testing.T) {
	f, srv := serve(t, jsonAnswer(http.StatusServiceUnavailable, nil))
	ctx, cancel := context.WithCancel(t.Context())
	tr := answered{got: make(chan struct{}, 1)}
	c := client.New(srv.URL, creds, client.WithHTTPClient(&http.Client{Transport: tr}),
		client.WithRetry(client.Retry{Attempts: 100, Backoff: time.Hour, MaxBackoff: time.Hour}))
	done := make(chan error)
	go func() {
		_, err := c.Capture(ctx, []client.CaptureEntry{{TransactionID: "1"}}, client.WithIdempotencyKey("capture-1"))
		done <- err
	}()
	<-tr.got
	cancel()
	err := <-done
	var last *client.Error
	if !errors.Is(err, context.Canceled) || !errors.As(err, &last) || last.HTTPStatus != http.StatusServiceUnavailable {
		t.Errorf("error %v, want context.Canceled and the last answer's 503", err)
	}
	if got := f.requests(); len(got) != 1 || got[0].idempotencyKey != "capture-1" {
		t.Errorf("requests %+v", got)
	}
}

// TestAnswerSignatures: a signed answer whose signature is not the
// account's is refused; a right one is taken.
func TestAnswerSignatures(t *testing.T) {
	batch := func(sig string) map[string]any {
		return map[string]any{"merchant_id": creds.MerchantID, "account_id": creds.AccountID, "return_status": "1",
			"return_message": "0000:Success", "encryption_data": sig,
			"capture_orders": []map[string]string{{"transaction_id": "777", "capture_status": "1"}}}
	}
	right := signing.SignUpper(creds.SignKey, creds.MerchantID, creds.AccountID, "1", "777")
	tests := []struct {
		name   string
		answer func(http.ResponseWriter, *http.Request)
		err    error
	}{
		{"right batch signature", jsonAnswer(http.StatusOK, batch(right)), nil},
		{"batch signed with another key", jsonAnswer(http.StatusOK, batch(signing.SignUpper("other", creds.MerchantID, creds.AccountID, "1", "777"))), client.ErrAnswerSignature},
		{"payment result altered", func(w http.ResponseWriter, r *http.Request) {
			xmlAnswer(http.StatusOK, strings.Replace(signedRespon("0000:Success", "1"), "<amount>12.34", "<amount>1234.00", 1))(w, r)
		}, client.ErrAnswerSignature},
		{"payment result with its signature taken out", func(w http.ResponseWriter, r *http.Request) {
			xmlAnswer(http.StatusOK, regexp.MustCompile(`<encryption_data>[0-9A-F]*</encryption_data>`).
				ReplaceAllString(signedRespon("A0001:Declined", "1"), "<encryption_data></encryption_data>"))(w, r)
		}, client.ErrAnswerSignature},
		{"batch taken, not signed", jsonAnswer(http.StatusOK, batch("")), client.ErrAnswerSignature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, srv := serve(t, tt.answer)
			c := client.New(srv.URL, creds, fast)
			var err error
			if strings.HasPrefix(tt.name, "payment") {
				_, err = c.Authorise(t.Context(), card())
			} else {
				_, err = c.Capture(t.Context(), []client.CaptureEntry{{TransactionID: "777"}})
			}
			if !errors.Is(err, tt.err) {
				t.Errorf("error %v, want %v", err, tt.err)
			}
		})
	}
}

// TestOrdersPages: Orders follows next_cursor to the last page, and stops
// with an error on a cursor that does not move.
func TestOrdersPages(t *testing.T) {
	page := func(cursor string, next string, orders ...string) map[string]any {
		list := []map[string]string{}
		for _, o := range orders {
			list = append(list, map[string]string{"order_no": o, "payment_status": client.PaymentPaid})
		}
		return map[string]any{"return_status": "1", "return_message": "0000:Success", "next_cursor": next, "orders_list": list}
	}
	tests := []struct {
		name   string
		pages  map[string]map[string]any // by the cursor asked for
		orders []string
		err    error
	}{
		{"three pages", map[string]map[string]any{"": page("", "c1", "A", "B"), "c1": page("c1", "c2", "C"), "c2": page("c2", "", "D")},
			[]string{"A", "B", "C", "D"}, nil},
		{"one page", map[string]map[string]any{"": page("", "", "A")}, []string{"A"}, nil},
		{"the change feed caught up", map[string]map[string]any{"": page("", "c1", "A", "B"), "c1": page("c1", "c1")},
			[]string{"A", "B"}, nil},
		{"a cursor that does not move", map[string]map[string]any{"": page("", "c1", "A"), "c1": page("c1", "c1", "B")},
			[]string{"A", "B"}, client.ErrCursorLoop},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var q map[string]string
				_ = json.NewDecoder(r.Body).Decode(&q)
				jsonAnswer(http.StatusOK, tt.pages[q["cursor"]])(w, r)
			}))
			defer srv.Close()
			var got []string
			var err error
			for o, e := range client.New(srv.URL, creds, fast).Orders(t.Context(), client.OrdersQuery{}) {
				if e != nil {
					err = e
					break
				}
				got = append(got, o.OrderNo)
			}
			if strings.Join(got, ",") != strings.Join(tt.orders, ",") || !errors.Is(err, tt.err) {
				t.Errorf("orders %v, error %v; want %v, %v", got, err, tt.orders, tt.err)
			}
		})
	}
}

// TestVerifyNotification: only a notification signed with the account's
// key, recent, unaltered and for the account is taken.
func TestVerifyNotification(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	payment := notify.Fields{"notify_type": "payment", "notify_id": "n-1", "merchant_id": creds.MerchantID,
		"account_id": creds.AccountID, "transaction_id": "1234567890123456789", "order_no": "A1", "currency": "USD",
		"amount": "12.34", "order_status": "1", "result_info": "0000:Success", "payment_status": "3000"}
	payment["encryption_data"] = signing.SignPaymentResult(creds.SignKey, signing.PaymentResultFrom(payment.Get))
	settlement := notify.Fields{"notify_type": "settlement", "notify_id": "n-2", "merchant_id": creds.MerchantID,
		"account_id": creds.AccountID, "net_amount": "90.00", "currency": "USD"}
	other := notify.Fields{"notify_type": "settlement", "notify_id": "n-3", "merchant_id": "1", "account_id": "2"}
	send := func(f notify.Fields, key string, at time.Time) (http.Header, []byte) {
		body := notify.Body(f)
		return http.Header(notify.Sign(key, f["notify_id"], at, body)), body
	}
	tests := []struct {
		name  string
		make  func() (http.Header, []byte)
		typ   string // the notification's type when taken; "" when refused
		check func(*client.Notification) bool
	}{
		{"payment", func() (http.Header, []byte) { return send(payment, creds.SignKey, now) }, "payment",
			func(n *client.Notification) bool {
				return n.OrderStatus == "1" && n.Amount == "12.34" && n.PaymentStatus == "3000"
			}},
		{"settlement, headers only", func() (http.Header, []byte) { return send(settlement, creds.SignKey, now) }, "settlement",
			func(n *client.Notification) bool {
				return n.NetAmount == "90.00" && n.Fields.Get("net_amount") == "90.00"
			}},
		{"four minutes old", func() (http.Header, []byte) { return send(payment, creds.SignKey, now.Add(-4*time.Minute)) }, "payment", nil},
		{"six minutes old", func() (http.Header, []byte) { return send(payment, creds.SignKey, now.Add(-6*time.Minute)) }, "", nil},
		{"another key", func() (http.Header, []byte) { return send(payment, "someone-else", now) }, "", nil},
		{"signed with the key before a rotation", func() (http.Header, []byte) {
			f := notify.Fields{}
			for k, v := range payment {
				f[k] = v
			}
			f["encryption_data"] = signing.SignPaymentResult("the-old-key", signing.PaymentResultFrom(f.Get))
			return send(f, "the-old-key", now)
		}, "payment", nil},
		{"amount altered after signing", func() (http.Header, []byte) {
			h, b := send(payment, creds.SignKey, now)
			return h, []byte(strings.Replace(string(b), "amount=12.34", "amount=99.99", 1))
		}, "", nil},
		{"encryption_data wrong, headers right", func() (http.Header, []byte) {
			f := notify.Fields{}
			for k, v := range payment {
				f[k] = v
			}
			f["encryption_data"] = strings.Repeat("0", 64)
			return send(f, creds.SignKey, now)
		}, "", nil},
		{"no headers", func() (http.Header, []byte) { return http.Header{}, notify.Body(payment) }, "", nil},
		{"another account's", func() (http.Header, []byte) { return send(other, creds.SignKey, now) }, "", nil},
	}
	rotated := creds
	rotated.OldSignKeys = []string{"the-old-key"}
	c := client.New("http://unused", rotated, client.WithClock(func() time.Time { return now }))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, body := tt.make()
			n, err := c.VerifyNotification(h, body)
			if tt.typ == "" {
				if !errors.Is(err, client.ErrNotification) || n != nil {
					t.Fatalf("taken: %+v, %v", n, err)
				}
			} else if err != nil || n.NotifyType != tt.typ || (tt.check != nil && !tt.check(n)) {
				t.Fatalf("notification %+v, error %v", n, err)
			}
			// The handler answers the same: 200 taken, 401 refused.
			var handled []string
			var refusals []error
			srv := httptest.NewServer(c.NotificationHandler(func(_ context.Context, n *client.Notification) error {
				handled = append(handled, n.NotifyID)
				return nil
			}, func(err error) { refusals = append(refusals, err) }))
			defer srv.Close()
			req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(string(body)))
			for k, v := range h {
				req.Header[k] = v
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			want := http.StatusOK
			if tt.typ == "" {
				want = http.StatusUnauthorized
			}
			if res.StatusCode != want || (want == http.StatusOK) != (len(handled) == 1) || (want == http.StatusOK) != (len(refusals) == 0) {
				t.Errorf("handler answered %d (want %d), handled %v, refused %v", res.StatusCode, want, handled, refusals)
			}
		})
	}
}

// TestHandlerFailureAsksForRedelivery: a handler error answers 500, so
// the gateway delivers the notification again.
func TestHandlerFailureAsksForRedelivery(t *testing.T) {
	c := client.New("http://unused", creds)
	f := notify.Fields{"notify_type": "settlement", "notify_id": "n-9", "merchant_id": creds.MerchantID, "account_id": creds.AccountID}
	body := notify.Body(f)
	srv := httptest.NewServer(c.NotificationHandler(func(context.Context, *client.Notification) error { return errors.New("db down") }, nil))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(string(body)))
	for k, v := range notify.Sign(creds.SignKey, "n-9", time.Now(), body) {
		req.Header[k] = v
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusInternalServerError {
		t.Errorf("status %d, want 500", res.StatusCode)
	}
}

// TestCheckoutRefusalReadsTheLink: a refused hosted payment answers a
// page; the code comes from its Link header.
func TestCheckoutRefusalReadsTheLink(t *testing.T) {
	_, srv := serve(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Link", `<https://x.example/docs/result-codes.md#i0004>; rel="help"`)
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "<p>Currency not supported</p>")
	})
	_, err := client.New(srv.URL, creds, fast).Checkout(t.Context(), client.Order{OrderNo: "A", Currency: "XXX", Amount: "1.00", ReturnURL: "https://s.example"})
	var perr *client.Error
	if !errors.As(err, &perr) || perr.Code != "I0004" || perr.Help != "https://x.example/docs/result-codes.md#i0004" {
		t.Fatalf("error %v", err)
	}
}
