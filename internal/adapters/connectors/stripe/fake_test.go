package stripe

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/refund"
)

// The fake's test cards: what Stripe would answer a charge of each.
const (
	cardApproved     = "4242424242424242"
	cardNoFunds      = "4000000000009995" // declined, insufficient_funds
	cardExpired      = "4000000000000069" // declined, code expired_card
	cardStolen       = "4000000000009979" // declined, stolen_card
	cardStripeFails  = "4000000000000119" // charged, then Stripe answers 500
	cardHangs        = "4000000000000259" // charged, then no answer in time
	cardRateLimited  = "4000000000000341" // 429 before anything is done
	cardThreeDSecure = "4000002760003184" // wants authentication
)

// fakeStripe is a Stripe of our own for the outcomes stripe-mock cannot
// give: declines, failures after a charge, timeouts, and idempotent
// replays. It keeps PaymentIntents and answers a key it has seen with its
// first answer, as Stripe does.
type fakeStripe struct {
	mu      sync.Mutex
	cards   map[string]string         // pm id -> card number
	intents map[string]map[string]any // pi id -> PaymentIntent
	answers map[string]fakeAnswer     // idempotency key -> first answer
	release chan struct{}             // closed to let hanging charges go
	created int                       // PaymentIntents made
	balance []map[string]any          // balance transactions, as listed
	// indexed, when set, is what the search sees: Stripe's search index,
	// behind its record (index takes it).
	indexed map[string]map[string]any
	listed  url.Values // the last balance transactions query
}

type fakeAnswer struct {
	body   string
	status int
	out    []byte
}

func newFakeStripe(t *testing.T) (*fakeStripe, *Client) {
	f := &fakeStripe{cards: map[string]string{}, intents: map[string]map[string]any{}, answers: map[string]fakeAnswer{},
		release: make(chan struct{})}
	srv := httptest.NewServer(f)
	t.Cleanup(func() {
		close(f.release)
		srv.Close()
	})
	c, err := New(Config{SecretKey: "sk_test_fake", BaseURL: srv.URL, Timeout: 2 * time.Second, CallbackSecret: "a-callback-secret"})
	if err != nil {
		t.Fatal(err)
	}
	return f, c
}

func (f *fakeStripe) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	form, _ := url.ParseQuery(string(body))
	key := r.Header.Get("Idempotency-Key")
	f.mu.Lock()
	if a, ok := f.answers[key]; ok && key != "" {
		f.mu.Unlock()
		if a.body != string(body) {
			writeJSON(w, http.StatusBadRequest, stripeError("idempotency_error", "", ""))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(a.status)
		_, _ = w.Write(a.out)
		return
	}
	status, out, hang := f.handle(r.Method, r.URL.Path, form, r.URL.Query())
	raw, _ := json.Marshal(out)
	if key != "" && status != http.StatusTooManyRequests {
		f.answers[key] = fakeAnswer{string(body), status, raw}
	}
	f.mu.Unlock()
	if hang {
		select {
		case <-r.Context().Done():
		case <-f.release:
		}
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(raw)
}

// handle does what Stripe would; the caller holds f.mu.
func (f *fakeStripe) handle(method, path string, form, query url.Values) (int, any, bool) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case method == http.MethodPost && path == "/v1/payment_methods":
		id := fmt.Sprintf("pm_%d", len(f.cards)+1)
		f.cards[id] = form.Get("card[number]")
		return http.StatusOK, map[string]any{"id": id, "object": "payment_method", "type": "card"}, false
	case method == http.MethodPost && path == "/v1/payment_intents":
		return f.charge(form)
	case method == http.MethodGet && len(parts) == 3 && parts[1] == "payment_intents" && parts[2] != "search":
		pi, ok := f.intents[parts[2]]
		if !ok {
			return http.StatusNotFound, stripeError("invalid_request_error", "resource_missing", ""), false
		}
		return http.StatusOK, pi, false
	case method == http.MethodGet && path == "/v1/payment_intents/search":
		found := []any{}
		searched := f.intents
		if f.indexed != nil {
			searched = f.indexed
		}
		for _, pi := range searched {
			if query.Get("query") == "metadata['paygate_key']:"+searchString(pi["metadata"].(map[string]string)["paygate_key"]) {
				found = append(found, pi)
			}
		}
		return http.StatusOK, map[string]any{"object": "search_result", "data": found, "has_more": false}, false
	case method == http.MethodPost && len(parts) == 4 && parts[1] == "payment_intents":
		pi, ok := f.intents[parts[2]]
		if !ok {
			return http.StatusNotFound, stripeError("invalid_request_error", "resource_missing", ""), false
		}
		if pi["status"] != "requires_capture" {
			return http.StatusBadRequest, stripeError("invalid_request_error", "payment_intent_unexpected_state", ""), false
		}
		switch parts[3] {
		case "capture":
			n, _ := strconv.ParseInt(form.Get("amount_to_capture"), 10, 64)
			pi["status"], pi["amount_received"] = "succeeded", n
		case "cancel":
			pi["status"] = "canceled"
		}
		return http.StatusOK, pi, false
	case method == http.MethodGet && path == "/v1/balance_transactions":
		f.listed = query
		data := []any{}
		for _, bt := range f.balance {
			data = append(data, bt)
		}
		return http.StatusOK, map[string]any{"object": "list", "data": data, "has_more": false, "url": "/v1/balance_transactions"}, false
	case method == http.MethodPost && path == "/v1/refunds":
		pi, ok := f.intents[form.Get("payment_intent")]
		n, _ := strconv.ParseInt(form.Get("amount"), 10, 64)
		if !ok || pi["status"] != "succeeded" || n > pi["amount_received"].(int64) {
			return http.StatusBadRequest, stripeError("invalid_request_error", "charge_already_refunded", ""), false
		}
		return http.StatusOK, map[string]any{"id": "re_1", "object": "refund", "amount": n, "currency": pi["currency"],
			"status": "pending", "payment_intent": pi["id"]}, false
	}
	return http.StatusNotFound, stripeError("invalid_request_error", "", ""), false
}

// charge makes a PaymentIntent of the card the payment method holds.
func (f *fakeStripe) charge(form url.Values) (int, any, bool) {
	number := f.cards[form.Get("payment_method")]
	if number == cardRateLimited {
		return http.StatusTooManyRequests, stripeError("invalid_request_error", "rate_limit", ""), false
	}
	f.created++
	amount, _ := strconv.ParseInt(form.Get("amount"), 10, 64)
	pi := map[string]any{"id": fmt.Sprintf("pi_%d", f.created), "object": "payment_intent", "amount": amount,
		"currency": form.Get("currency"), "status": "requires_capture", "amount_received": int64(0),
		"metadata": map[string]string{"paygate_key": form.Get("metadata[paygate_key]"), "paygate_reference": form.Get("metadata[paygate_reference]")}}
	if form.Get("capture_method") == "automatic" {
		pi["status"], pi["amount_received"] = "succeeded", amount
	}
	f.intents[pi["id"].(string)] = pi
	decline := func(code, declineCode string) (int, any, bool) {
		pi["status"] = "requires_payment_method"
		pi["last_payment_error"] = map[string]any{"type": "card_error", "code": code, "decline_code": declineCode}
		e := stripeError("card_error", code, declineCode)
		e["error"].(map[string]any)["payment_intent"] = pi
		return http.StatusPaymentRequired, e, false
	}
	switch number {
	case cardNoFunds:
		return decline("card_declined", "insufficient_funds")
	case cardExpired:
		return decline("expired_card", "")
	case cardStolen:
		return decline("card_declined", "stolen_card")
	case cardThreeDSecure:
		if form.Get("error_on_requires_action") == "true" {
			return decline("authentication_required", "authentication_required")
		}
		// Stripe's page, and the shopper back at return_url.
		pi["status"] = "requires_action"
		pi["next_action"] = map[string]any{"type": "redirect_to_url", "redirect_to_url": map[string]any{
			"url": "https://hooks.stripe.test/3ds/" + pi["id"].(string), "return_url": form.Get("return_url")}}
	case cardStripeFails:
		return http.StatusInternalServerError, stripeError("api_error", "", ""), false
	case cardHangs:
		return http.StatusOK, pi, true
	}
	return http.StatusOK, pi, false
}

// index makes the search see the PaymentIntents as they are now, and not
// what becomes of them later, as Stripe's search may lag its record.
func (f *fakeStripe) index() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.indexed = map[string]map[string]any{}
	for id, pi := range f.intents {
		f.indexed[id] = maps.Clone(pi)
	}
}

func stripeError(typ, code, declineCode string) map[string]any {
	e := map[string]any{"type": typ, "message": "refused by the fake"}
	if code != "" {
		e["code"] = code
	}
	if declineCode != "" {
		e["decline_code"] = declineCode
	}
	return map[string]any{"error": e}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func charge(card string, capture bool) connector.ChargeRequest {
	return connector.ChargeRequest{IdempotencyKey: "order/1/charge/1", Reference: "1379868670095785984",
		Card: connector.Card{Number: card, ExpiryMonth: "12", ExpiryYear: "35", CVV: "123"}, Amount: 1000, Currency: "USD", Capture: capture}
}

// TestChargeOutcomes: what each Stripe answer to a charge becomes, with the
// exact decline reason or connector error.
func TestChargeOutcomes(t *testing.T) {
	tests := []struct {
		name     string
		card     string
		capture  bool
		want     connector.Charge
		wantErr  error
		inquired connector.ChargeStatus // what an inquiry then finds; "" for none
	}{
		{"authorised", cardApproved, false, connector.Charge{ID: "pi_1", Status: connector.Approved, Amount: 1000, Currency: "USD"}, nil, ""},
		{"sold", cardApproved, true, connector.Charge{ID: "pi_1", Status: connector.Approved, Amount: 1000, Currency: "USD", CapturedAmount: 1000}, nil, ""},
		{"insufficient funds", cardNoFunds, false, connector.Charge{ID: "pi_1", Status: connector.Declined, DeclineReason: connector.DeclineInsufficientFunds,
			Amount: 1000, Currency: "USD", Message: "refused by the fake"}, nil, ""},
		{"expired card, by its error code", cardExpired, false, connector.Charge{ID: "pi_1", Status: connector.Declined, DeclineReason: connector.DeclineExpiredCard,
			Amount: 1000, Currency: "USD", Message: "refused by the fake"}, nil, ""},
		{"stolen card: never to be tried again", cardStolen, false, connector.Charge{ID: "pi_1", Status: connector.Declined, DeclineReason: connector.DeclineDoNotRetry,
			Amount: 1000, Currency: "USD", Message: "refused by the fake"}, nil, ""},
		{"authentication wanted", cardThreeDSecure, false, connector.Charge{ID: "pi_1", Status: connector.Declined, DeclineReason: connector.DeclineAuthenticationRequired,
			Amount: 1000, Currency: "USD", Message: "refused by the fake"}, nil, ""},
		{"rate limited: nothing done", cardRateLimited, false, connector.Charge{}, connector.ErrUnavailable, ""},
		{"Stripe fails after charging: unknown, and the inquiry finds it", cardStripeFails, false, connector.Charge{}, connector.ErrTimeout, connector.Approved},
		{"no answer in time: unknown, and the inquiry finds it", cardHangs, false, connector.Charge{}, connector.ErrTimeout, connector.Approved},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, c := newFakeStripe(t)
			req := charge(tc.card, tc.capture)
			got, err := c.Charge(t.Context(), req)
			if !errors.Is(err, tc.wantErr) || got != tc.want {
				t.Fatalf("Charge = %+v, %v; want %+v, %v", got, err, tc.want, tc.wantErr)
			}
			found, err := c.Inquire(t.Context(), req.IdempotencyKey)
			switch {
			case tc.inquired == "" && tc.wantErr != nil:
				if !errors.Is(err, connector.ErrNotFound) {
					t.Errorf("Inquire = %+v, %v; want not found", found, err)
				}
			case tc.inquired != "":
				if err != nil || found.Status != tc.inquired || found.ID != "pi_1" {
					t.Errorf("Inquire = %+v, %v; want pi_1 %s", found, err, tc.inquired)
				}
			}
		})
	}
}

// TestRetriedChargeIsOneCharge: a charge sent again with its key, after an
// unknown outcome, gets Stripe's first PaymentIntent, never a second.
func TestRetriedChargeIsOneCharge(t *testing.T) {
	f, c := newFakeStripe(t)
	req := charge(cardApproved, false)
	first, err := c.Charge(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.Charge(t.Context(), req)
	if err != nil || again != first {
		t.Fatalf("retry = %+v, %v; want the first %+v", again, err, first)
	}
	other := req
	other.Amount = 2000
	if _, err := c.Charge(t.Context(), other); !errors.Is(err, connector.ErrConflict) {
		t.Errorf("the key with another amount: %v, want a conflict", err)
	}
	if f.created != 1 {
		t.Errorf("%d PaymentIntents made, want 1", f.created)
	}
}

// TestAfterTheCharge: capture, void and refund of a PaymentIntent, and the
// errors of each in the wrong state.
func TestAfterTheCharge(t *testing.T) {
	_, c := newFakeStripe(t)
	ctx := t.Context()
	auth, err := c.Charge(ctx, charge(cardApproved, false))
	if err != nil {
		t.Fatal(err)
	}
	captured, err := c.Capture(ctx, connector.CaptureRequest{ChargeID: auth.ID, IdempotencyKey: "cap/1", Amount: 600, Currency: "USD"})
	if err != nil || captured.Status != connector.Approved || captured.CapturedAmount != 600 {
		t.Fatalf("capture = %+v, %v; want 600 captured", captured, err)
	}
	if _, err := c.Void(ctx, connector.VoidRequest{ChargeID: auth.ID, IdempotencyKey: "void/1"}); !errors.Is(err, connector.ErrConflict) {
		t.Errorf("void of a captured payment: %v, want a conflict", err)
	}
	r, err := c.Refund(ctx, connector.RefundRequest{ChargeID: auth.ID, IdempotencyKey: "ref/1", Amount: 200, Currency: "USD"})
	if want := (connector.Refund{ID: "re_1", ChargeID: auth.ID, Amount: 200, Currency: "USD", Status: refund.Pending}); err != nil || r != want {
		t.Errorf("refund = %+v, %v; want %+v", r, err, want)
	}
	if _, err := c.Refund(ctx, connector.RefundRequest{ChargeID: auth.ID, IdempotencyKey: "ref/2", Amount: 700, Currency: "USD"}); !errors.Is(err, connector.ErrConflict) {
		t.Errorf("refund over the captured amount: %v, want a conflict", err)
	}
	if _, err := c.Capture(ctx, connector.CaptureRequest{ChargeID: "pi_404", IdempotencyKey: "cap/2", Amount: 1, Currency: "USD"}); !errors.Is(err, connector.ErrNotFound) {
		t.Errorf("capture of no PaymentIntent: %v, want not found", err)
	}
	second, err := c.Charge(ctx, connector.ChargeRequest{IdempotencyKey: "order/2/charge/1", Reference: "2", Amount: 100, Currency: "USD",
		Card: connector.Card{Number: cardApproved, ExpiryMonth: "1", ExpiryYear: "2035"}})
	if err != nil {
		t.Fatal(err)
	}
	voided, err := c.Void(ctx, connector.VoidRequest{ChargeID: second.ID, IdempotencyKey: "void/2"})
	if err != nil || !voided.Voided || voided.Status != connector.Approved {
		t.Errorf("void = %+v, %v; want voided", voided, err)
	}
}

// TestLookChargeIsCurrent: a charge read by its id is as Stripe has it
// now, where the search by key may still show it as it was: the capture
// and the void an order asks about after an unanswered send.
func TestLookChargeIsCurrent(t *testing.T) {
	f, c := newFakeStripe(t)
	ctx := t.Context()
	req := charge(cardApproved, false)
	auth, err := c.Charge(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	f.index()
	if _, err := c.Capture(ctx, connector.CaptureRequest{ChargeID: auth.ID, IdempotencyKey: "cap/1", Amount: 600, Currency: "USD"}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		look    func() (connector.Charge, error)
		want    connector.Charge
		wantErr error
	}{
		{"the search by key, behind", func() (connector.Charge, error) { return c.Inquire(ctx, req.IdempotencyKey) },
			connector.Charge{ID: auth.ID, Status: connector.Approved, Amount: 1000, Currency: "USD"}, nil},
		{"the read by id, as it stands", func() (connector.Charge, error) { return c.LookCharge(ctx, auth.ID) },
			connector.Charge{ID: auth.ID, Status: connector.Approved, Amount: 1000, Currency: "USD", CapturedAmount: 600}, nil},
		{"no such PaymentIntent", func() (connector.Charge, error) { return c.LookCharge(ctx, "pi_404") },
			connector.Charge{}, connector.ErrNotFound},
		{"an id that would change the path: nothing sent", func() (connector.Charge, error) { return c.LookCharge(ctx, "pi_1/capture") },
			connector.Charge{}, connector.ErrRejected},
		{"no id", func() (connector.Charge, error) { return c.LookCharge(ctx, "") },
			connector.Charge{}, connector.ErrRejected},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.look()
			if !errors.Is(err, tc.wantErr) || got != tc.want {
				t.Errorf("= %+v, %v; want %+v, %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

// TestChargeRefusedBeforeSending: requests the connector refuses itself,
// with nothing sent.
func TestChargeRefusedBeforeSending(t *testing.T) {
	f, c := newFakeStripe(t)
	good := charge(cardApproved, false)
	tests := []struct {
		name string
		edit func(*connector.ChargeRequest)
		want error
	}{
		{"no idempotency key", func(r *connector.ChargeRequest) { r.IdempotencyKey = "" }, connector.ErrRejected},
		{"an authentication of another connector", func(r *connector.ChargeRequest) { r.ThreeDS = &connector.ThreeDSData{AuthenticationID: "au_1"} }, connector.ErrRejected},
		{"month 13", func(r *connector.ChargeRequest) { r.Card.ExpiryMonth = "13" }, connector.ErrRejected},
		{"a three-digit year", func(r *connector.ChargeRequest) { r.Card.ExpiryYear = "203" }, connector.ErrRejected},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := good
			tc.edit(&req)
			if _, err := c.Charge(t.Context(), req); !errors.Is(err, tc.want) {
				t.Errorf("Charge: %v, want %v", err, tc.want)
			}
			if err := fmt.Sprint(c.Charge(t.Context(), req)); strings.Contains(err, req.Card.Number) {
				t.Errorf("the error shows the card number: %s", err)
			}
		})
	}
	if len(f.cards) != 0 {
		t.Errorf("%d cards sent, want none", len(f.cards))
	}
}

// shopperAt settles a PaymentIntent waiting at Stripe's 3-D Secure page:
// authenticated and authorised, or failed.
func (f *fakeStripe) shopperAt(id string, passed bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	pi := f.intents[id]
	delete(pi, "next_action")
	if passed {
		pi["status"] = "requires_capture"
		return
	}
	pi["status"] = "requires_payment_method"
	pi["last_payment_error"] = map[string]any{"type": "card_error", "code": "payment_intent_authentication_failure"}
}

// TestThreeDSecure: Stripe's authentication as our 3-D Secure step, from
// the PaymentIntent that asks for the shopper to the charge that takes it.
func TestThreeDSecure(t *testing.T) {
	auth := func(card string) connector.AuthenticationRequest {
		return connector.AuthenticationRequest{IdempotencyKey: "order/1/3ds", Reference: "1379868670095785984",
			Card: connector.Card{Number: card, ExpiryMonth: "12", ExpiryYear: "2035"}, Amount: 1000, Currency: "USD",
			ReturnURL: "https://pay.example/v1/3ds/callback"}
	}
	charge := func(pi string, capture bool) connector.ChargeRequest {
		return connector.ChargeRequest{IdempotencyKey: "order/1/charge", Reference: "1379868670095785984", Amount: 1000,
			Currency: "USD", Capture: capture, ThreeDS: &connector.ThreeDSData{AuthenticationID: pi}}
	}
	tests := []struct {
		name      string
		card      string
		passed    bool // the shopper at Stripe's page
		capture   bool
		wantFirst connector.AuthenticationStatus
		wantAfter connector.AuthenticationStatus
		want      connector.Charge // the charge after; zero: none
	}{
		{"frictionless, authorised", cardApproved, true, false, connector.Authenticated, connector.Authenticated,
			connector.Charge{ID: "pi_1", Status: connector.Approved, Amount: 1000, Currency: "USD"}},
		{"frictionless, a sale captures it", cardApproved, true, true, connector.Authenticated, connector.Authenticated,
			connector.Charge{ID: "pi_1", Status: connector.Approved, Amount: 1000, Currency: "USD", CapturedAmount: 1000}},
		{"challenged and passed", cardThreeDSecure, true, true, connector.ChallengeRequired, connector.Authenticated,
			connector.Charge{ID: "pi_1", Status: connector.Approved, Amount: 1000, Currency: "USD", CapturedAmount: 1000}},
		{"challenged and failed", cardThreeDSecure, false, true, connector.ChallengeRequired, connector.AuthenticationFailed, connector.Charge{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, c := newFakeStripe(t)
			au, err := c.Authenticate(t.Context(), auth(tc.card))
			if err != nil || au.Status != tc.wantFirst || au.ID != "pi_1" {
				t.Fatalf("Authenticate = %+v, %v; want pi_1 %s", au, err, tc.wantFirst)
			}
			if tc.wantFirst == connector.ChallengeRequired {
				if au.ACSURL != "https://hooks.stripe.test/3ds/pi_1" {
					t.Errorf("challenge page %q", au.ACSURL)
				}
				// Stripe sends the shopper back to our signed return.
				ret, _ := url.Parse(f.intents["pi_1"]["next_action"].(map[string]any)["redirect_to_url"].(map[string]any)["return_url"].(string))
				q := ret.Query()
				q.Set("payment_intent", "pi_1")
				cb, err := c.ReadThreeDSResult(q)
				if err != nil || cb != (connector.ThreeDSCallback{AuthenticationID: "pi_1", Reference: "1379868670095785984"}) {
					t.Errorf("the return reads %+v, %v", cb, err)
				}
				f.shopperAt("pi_1", tc.passed)
			}
			after, err := c.GetAuthentication(t.Context(), "pi_1")
			if err != nil || after.Status != tc.wantAfter {
				t.Fatalf("GetAuthentication = %+v, %v; want %s", after, err, tc.wantAfter)
			}
			if tc.want == (connector.Charge{}) {
				return
			}
			got, err := c.Charge(t.Context(), charge("pi_1", tc.capture))
			if err != nil || got != tc.want {
				t.Errorf("Charge = %+v, %v; want %+v", got, err, tc.want)
			}
			if _, err := c.Charge(t.Context(), connector.ChargeRequest{IdempotencyKey: "order/2/charge", Reference: "another order",
				Amount: 1000, Currency: "USD", ThreeDS: &connector.ThreeDSData{AuthenticationID: "pi_1"}}); !errors.Is(err, connector.ErrRejected) {
				t.Errorf("another order's charge on this authentication: %v, want refused", err)
			}
		})
	}
}

// TestThreeDSReturnIsChecked: only a return that names this connector with
// our signature over its reference reads as Stripe's.
func TestThreeDSReturnIsChecked(t *testing.T) {
	_, c := newFakeStripe(t)
	good := url.Values{"connector": {"stripe"}, "reference": {"1379868670095785984"}, "signature": {c.sign("1379868670095785984")},
		"payment_intent": {"pi_1"}}
	edit := func(k, v string) url.Values {
		q := url.Values{}
		for name, vals := range good {
			q[name] = vals
		}
		if v == "" {
			q.Del(k)
		} else {
			q.Set(k, v)
		}
		return q
	}
	tests := []struct {
		name string
		form url.Values
		want error
	}{
		{"ours", good, nil},
		{"another connector's", edit("connector", "sim-acquirer"), connector.ErrCallbackUnsigned},
		{"another order's signature", edit("reference", "1379868670095785985"), connector.ErrCallbackUnsigned},
		{"no signature", edit("signature", ""), connector.ErrCallbackUnsigned},
		{"no PaymentIntent", edit("payment_intent", ""), connector.ErrCallbackMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := c.ReadThreeDSResult(tc.form); !errors.Is(err, tc.want) {
				t.Errorf("ReadThreeDSResult: %v, want %v", err, tc.want)
			}
		})
	}
	plain, err := New(Config{SecretKey: "sk_test_x"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.Authenticate(t.Context(), connector.AuthenticationRequest{IdempotencyKey: "k", Reference: "r",
		ReturnURL: "https://pay.example/v1/3ds/callback"}); !errors.Is(err, connector.ErrRejected) {
		t.Errorf("3-D Secure without a callback secret: %v, want refused", err)
	}
}
