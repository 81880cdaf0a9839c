package simulator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/adapters/outbound"
)

func newTestServer(t *testing.T, opts Options) (*Server, *httptest.Server) {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	srv := NewServer(opts)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		srv.Close()
		ts.Close()
	})
	return srv, ts
}

type answer struct {
	status int
	header http.Header
	body   []byte
}

// devCall is call with the simulator's default secret, for what only the
// people running it may see or change.
func devCall(t *testing.T, method, url string, body any) answer {
	t.Helper()
	return callWith(t, method, url, body, "Bearer "+defaultSecret)
}

func call(t *testing.T, method, url string, body any) answer {
	t.Helper()
	return callWith(t, method, url, body, "")
}

func callWith(t *testing.T, method, url string, body any, authorization string) answer {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return answer{status: resp.StatusCode, header: resp.Header, body: raw}
}

func decode[T any](t *testing.T, a answer) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(a.body, &v); err != nil {
		t.Fatalf("decode %q: %v", a.body, err)
	}
	return v
}

func chargeBody(key, card string, amount int64, capture bool) chargeRequest {
	return chargeRequest{
		IdempotencyKey: key,
		Reference:      "order-" + key,
		CardNumber:     card,
		ExpiryMonth:    "12",
		ExpiryYear:     "2030",
		CVV:            "123",
		Amount:         amount,
		Currency:       "EUR",
		Capture:        capture,
	}
}

func TestCreateChargeValidation(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	valid := chargeBody("k-valid", "4242424242424242", 1000, true)
	tests := []struct {
		name    string
		body    any
		message string
	}{
		{"missing key", func() chargeRequest { r := valid; r.IdempotencyKey = ""; return r }(), "idempotency_key is required"},
		{"non-digit card", func() chargeRequest { r := valid; r.CardNumber = "4242-4242-4242-4242"; return r }(), "card_number must be 12 to 19 digits"},
		{"short card", func() chargeRequest { r := valid; r.CardNumber = "42424242"; return r }(), "card_number must be 12 to 19 digits"},
		{"bad month", func() chargeRequest { r := valid; r.ExpiryMonth = "13"; return r }(), "expiry_month must be 1 to 12"},
		{"bad year", func() chargeRequest { r := valid; r.ExpiryYear = "203"; return r }(), "expiry_year must be 2 or 4 digits"},
		{"missing cvv", func() chargeRequest { r := valid; r.CVV = ""; return r }(), "cvv must be 3 or 4 digits"},
		{"zero amount", func() chargeRequest { r := valid; r.Amount = 0; return r }(), "amount must be a positive number of minor units"},
		{"negative amount", func() chargeRequest { r := valid; r.Amount = -5; return r }(), "amount must be a positive number of minor units"},
		{"lower-case currency", func() chargeRequest { r := valid; r.Currency = "eur"; return r }(), "currency must be 3 upper-case letters"},
		{"long currency", func() chargeRequest { r := valid; r.Currency = "EURO"; return r }(), "currency must be 3 upper-case letters"},
		{"malformed json", `{"idempotency_key":`, "body must be a JSON object with the documented fields"},
		{"unknown field", `{"idempotency_key":"k","pan":"4242424242424242"}`, "body must be a JSON object with the documented fields"},
		{"amount as string", `{"idempotency_key":"k","amount":"10"}`, "body must be a JSON object with the documented fields"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := call(t, http.MethodPost, ts.URL+"/v1/charges", tt.body)
			if a.status != http.StatusBadRequest {
				t.Fatalf("status = %d, want 400; body %s", a.status, a.body)
			}
			got := decode[errorBody](t, a)
			want := errorBody{Error: "invalid_request", Message: tt.message}
			if got != want {
				t.Errorf("body = %+v, want %+v", got, want)
			}
		})
	}
}

func TestChargeOutcomes(t *testing.T) {
	srv, ts := newTestServer(t, Options{TimeoutDelay: 20 * time.Millisecond})
	tests := []struct {
		name        string
		card        string
		capture     bool
		status      string
		declineCode string
		captured    int64
	}{
		{"visa approved sale", "4242424242424242", true, StatusApproved, "", 2500},
		{"mastercard approved auth only", "5555555555554444", false, StatusApproved, "", 0},
		{"other card approved", "378282246310005", true, StatusApproved, "", 2500},
		{"do not honor", "4000000000000002", true, StatusDeclined, "do_not_honor", 0},
		{"insufficient funds", "4000000000009995", true, StatusDeclined, "insufficient_funds", 0},
		{"expired card", "4000000000000069", true, StatusDeclined, "expired_card", 0},
		{"incorrect cvc", "4000000000000127", true, StatusDeclined, "incorrect_cvc", 0},
		{"authentication required", "4000000000003220", true, StatusDeclined, "authentication_required", 0},
		{"timeout card approved after hold", "4000000000000341", true, StatusApproved, "", 2500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := "outcome-" + tt.card
			a := call(t, http.MethodPost, ts.URL+"/v1/charges", chargeBody(key, tt.card, 2500, tt.capture))
			if a.status != http.StatusOK {
				t.Fatalf("status = %d, want 200; body %s", a.status, a.body)
			}
			c := decode[Charge](t, a)
			if c.Status != tt.status || c.DeclineCode != tt.declineCode || c.CapturedAmount != tt.captured {
				t.Errorf("status/decline/captured = %q/%q/%d, want %q/%q/%d",
					c.Status, c.DeclineCode, c.CapturedAmount, tt.status, tt.declineCode, tt.captured)
			}
			wantAuthLen := 0
			if tt.status == StatusApproved {
				wantAuthLen = 6
			}
			if len(c.AuthCode) != wantAuthLen {
				t.Errorf("auth_code = %q, want %d characters", c.AuthCode, wantAuthLen)
			}
			if !strings.HasPrefix(c.ChargeID, "ch_") {
				t.Errorf("charge_id = %q, want prefix ch_", c.ChargeID)
			}
			if c.CardBIN != tt.card[:6] || c.CardLast4 != tt.card[len(tt.card)-4:] {
				t.Errorf("card_bin/last4 = %q/%q, want %q/%q", c.CardBIN, c.CardLast4, tt.card[:6], tt.card[len(tt.card)-4:])
			}
			if c.Amount != 2500 || c.Currency != "EUR" || c.Reference != "order-"+key || c.IdempotencyKey != key {
				t.Errorf("charge = %+v, want amount 2500 EUR, reference and key echoed", c)
			}
		})
	}
	if got := len(srv.Charges()); got != len(tests) {
		t.Errorf("recorded charges = %d, want %d", got, len(tests))
	}
}

func TestChargeIdempotency(t *testing.T) {
	srv, ts := newTestServer(t, Options{})
	body := chargeBody("idem-1", "4242424242424242", 1000, true)

	first := call(t, http.MethodPost, ts.URL+"/v1/charges", body)
	if first.status != http.StatusOK || first.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("first: status %d replayed %q, want 200 and no replay header", first.status, first.header.Get("Idempotent-Replayed"))
	}
	t.Run("replay", func(t *testing.T) {
		again := call(t, http.MethodPost, ts.URL+"/v1/charges", body)
		if again.status != http.StatusOK {
			t.Fatalf("status = %d, want 200", again.status)
		}
		if got := again.header.Get("Idempotent-Replayed"); got != "true" {
			t.Errorf("Idempotent-Replayed = %q, want true", got)
		}
		if !bytes.Equal(again.body, first.body) {
			t.Errorf("replayed body = %s, want %s", again.body, first.body)
		}
	})
	t.Run("conflict", func(t *testing.T) {
		changed := body
		changed.Amount = 1001
		a := call(t, http.MethodPost, ts.URL+"/v1/charges", changed)
		if a.status != http.StatusConflict {
			t.Fatalf("status = %d, want 409", a.status)
		}
		if got := decode[errorBody](t, a).Error; got != "idempotency_conflict" {
			t.Errorf("error = %q, want idempotency_conflict", got)
		}
	})
	// The fingerprint covers the card as BIN and last four and leaves out
	// the security code (it is kept beside its secret in the data file).
	t.Run("another security code is the same request", func(t *testing.T) {
		changed := body
		changed.CVV = "999"
		a := call(t, http.MethodPost, ts.URL+"/v1/charges", changed)
		if a.status != http.StatusOK || a.header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(a.body, first.body) {
			t.Errorf("status %d replayed %q body %s, want the first answer", a.status, a.header.Get("Idempotent-Replayed"), a.body)
		}
	})
	t.Run("another card is a conflict", func(t *testing.T) {
		changed := body
		changed.CardNumber = "5555555555554444"
		if a := call(t, http.MethodPost, ts.URL+"/v1/charges", changed); a.status != http.StatusConflict {
			t.Errorf("status = %d, want 409", a.status)
		}
	})
	if got := len(srv.Charges()); got != 1 {
		t.Errorf("recorded charges = %d, want 1", got)
	}
}

func TestConcurrentChargesCreateOne(t *testing.T) {
	srv, ts := newTestServer(t, Options{})
	body := chargeBody("concurrent-1", "4242424242424242", 1000, true)
	const n = 20
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			a := call(t, http.MethodPost, ts.URL+"/v1/charges", body)
			if a.status == http.StatusOK {
				ids[i] = decode[Charge](t, a).ChargeID
			}
		})
	}
	wg.Wait()
	charges := srv.Charges()
	if len(charges) != 1 {
		t.Fatalf("recorded charges = %d, want 1", len(charges))
	}
	for i, id := range ids {
		if id != charges[0].ChargeID {
			t.Errorf("request %d got charge_id %q, want %q", i, id, charges[0].ChargeID)
		}
	}
}

func TestUnavailableCardFirstAttempt(t *testing.T) {
	srv, ts := newTestServer(t, Options{})
	body := chargeBody("flaky-1", "4000000000000119", 1000, true)
	tests := []struct {
		name    string
		status  int
		charges int
	}{
		{"first attempt unavailable", http.StatusServiceUnavailable, 0},
		{"second attempt approved", http.StatusOK, 1},
		{"third attempt replayed", http.StatusOK, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := call(t, http.MethodPost, ts.URL+"/v1/charges", body)
			if a.status != tt.status {
				t.Fatalf("status = %d, want %d; body %s", a.status, tt.status, a.body)
			}
			if tt.status == http.StatusServiceUnavailable {
				if got := decode[errorBody](t, a).Error; got != "acquirer_unavailable" {
					t.Errorf("error = %q, want acquirer_unavailable", got)
				}
			} else if got := decode[Charge](t, a).Status; got != StatusApproved {
				t.Errorf("status = %q, want approved", got)
			}
			if got := len(srv.Charges()); got != tt.charges {
				t.Errorf("recorded charges = %d, want %d", got, tt.charges)
			}
		})
	}
}

func TestTimeoutCardIsRecordedBeforeAnswer(t *testing.T) {
	srv, ts := newTestServer(t, Options{TimeoutDelay: 300 * time.Millisecond})
	body := chargeBody("slow-1", "4000000000000341", 1000, true)
	start := time.Now()
	done := make(chan answer, 1)
	go func() { done <- call(t, http.MethodPost, ts.URL+"/v1/charges", body) }()

	deadline := time.Now().Add(time.Second)
	for len(srv.Charges()) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	inq := call(t, http.MethodGet, ts.URL+"/v1/charges/slow-1", nil)
	if inq.status != http.StatusOK || decode[Charge](t, inq).Status != StatusApproved {
		t.Fatalf("inquiry during hold: status %d body %s, want 200 approved", inq.status, inq.body)
	}
	a := <-done
	if elapsed := time.Since(start); elapsed < 300*time.Millisecond {
		t.Errorf("answer came after %s, want at least 300ms", elapsed)
	}
	if a.status != http.StatusOK || !bytes.Equal(bytes.TrimSpace(a.body), mustJSON(t, decode[Charge](t, inq))) {
		t.Errorf("held answer = %d %s, want the recorded charge", a.status, a.body)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestLookupsAndNotFound(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	a := call(t, http.MethodPost, ts.URL+"/v1/charges", chargeBody("look-1", "4242424242424242", 500, true))
	c := decode[Charge](t, a)
	tests := []struct {
		name   string
		method string
		path   string
		body   any
		status int
		error  string
	}{
		{"inquire known", http.MethodGet, "/v1/charges/look-1", nil, http.StatusOK, ""},
		{"inquire unknown", http.MethodGet, "/v1/charges/nope", nil, http.StatusNotFound, "not_found"},
		{"refund unknown", http.MethodGet, "/v1/refunds/re_nope", nil, http.StatusNotFound, "not_found"},
		{"capture unknown charge", http.MethodPost, "/v1/charges/ch_nope/capture", captureRequest{"cap-x", 10}, http.StatusNotFound, "not_found"},
		{"void unknown charge", http.MethodPost, "/v1/charges/ch_nope/void", voidRequest{"void-x"}, http.StatusNotFound, "not_found"},
		{"refund unknown charge", http.MethodPost, "/v1/charges/ch_nope/refunds", refundRequest{"ref-x", 10}, http.StatusNotFound, "not_found"},
		{"refund missing key", http.MethodPost, "/v1/charges/" + c.ChargeID + "/refunds", refundRequest{"", 10}, http.StatusBadRequest, "invalid_request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := call(t, tt.method, ts.URL+tt.path, tt.body)
			if a.status != tt.status {
				t.Fatalf("status = %d, want %d; body %s", a.status, tt.status, a.body)
			}
			if tt.error != "" {
				if got := decode[errorBody](t, a).Error; got != tt.error {
					t.Errorf("error = %q, want %q", got, tt.error)
				}
			}
		})
	}
	t.Run("list charges", func(t *testing.T) {
		list := decode[struct {
			Charges []Charge `json:"charges"`
		}](t, devCall(t, http.MethodGet, ts.URL+"/v1/charges", nil))
		if len(list.Charges) != 1 || list.Charges[0] != c {
			t.Errorf("charges = %+v, want [%+v]", list.Charges, c)
		}
	})
	t.Run("list refunds empty", func(t *testing.T) {
		a := devCall(t, http.MethodGet, ts.URL+"/v1/refunds", nil)
		if got := string(bytes.TrimSpace(a.body)); got != `{"refunds":[]}` {
			t.Errorf("body = %s, want {\"refunds\":[]}", got)
		}
	})
}

func TestRefundSettlesAndCloseStopsTimers(t *testing.T) {
	srv, ts := newTestServer(t, Options{SettleDelay: 30 * time.Millisecond})
	c := decode[Charge](t, call(t, http.MethodPost, ts.URL+"/v1/charges", chargeBody("settle-1", "4242424242424242", 5000, true)))

	settling := decode[Refund](t, call(t, http.MethodPost, ts.URL+"/v1/charges/"+c.ChargeID+"/refunds", refundRequest{"r-1", 1077}))
	if settling.Status != RefundPending || settling.SettledAt != nil {
		t.Fatalf("refund = %+v, want pending with no settled_at", settling)
	}
	deadline := time.Now().Add(2 * time.Second)
	for srv.Refunds()[0].Status != RefundSucceeded && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := srv.Refunds()[0]; got.Status != RefundSucceeded || got.SettledAt == nil {
		t.Fatalf("refund after settle delay = %+v, want succeeded with settled_at", got)
	}
	if got := srv.Charges()[0].RefundedAmount; got != 1077 {
		t.Errorf("refunded_amount = %d, want 1077", got)
	}

	stuck := decode[Refund](t, call(t, http.MethodPost, ts.URL+"/v1/charges/"+c.ChargeID+"/refunds", refundRequest{"r-2", 177}))
	srv.Close()
	time.Sleep(100 * time.Millisecond)
	got := decode[Refund](t, call(t, http.MethodGet, ts.URL+"/v1/refunds/"+stuck.RefundID, nil))
	if got.Status != RefundPending {
		t.Errorf("refund after Close = %q, want pending", got.Status)
	}
}

func TestLogsHoldNoCardData(t *testing.T) {
	var buf syncBuffer
	logger := slog.New(slog.NewJSONHandler(&buf, nil))
	srv, ts := newTestServer(t, Options{Logger: logger})
	card, cvv := "4242424242424242", "987"
	body := chargeBody("log-1", card, 1000, true)
	body.CVV = cvv
	call(t, http.MethodPost, ts.URL+"/v1/charges", body)
	call(t, http.MethodPost, ts.URL+"/v1/charges", body)
	bad := body
	bad.Currency = "x"
	call(t, http.MethodPost, ts.URL+"/v1/charges", bad)

	// The log line is written after the answer is sent, so wait for it.
	deadline := time.Now().Add(2 * time.Second)
	for strings.Count(buf.String(), "\n") < 3 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	out := buf.String()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("log lines = %d, want 3:\n%s", len(lines), out)
	}
	if strings.Contains(out, card) || strings.Contains(out, `"`+cvv+`"`) {
		t.Errorf("log holds card data:\n%s", out)
	}
	wantOutcomes := []string{"approved", "replayed", "invalid_request"}
	for i, line := range lines {
		var rec struct {
			Method, Path, IdempotencyKey, Outcome string
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		rec.Method, _ = m["method"].(string)
		rec.Path, _ = m["path"].(string)
		rec.IdempotencyKey, _ = m["idempotency_key"].(string)
		rec.Outcome, _ = m["outcome"].(string)
		if rec.Method != "POST" || rec.Path != "/v1/charges" || rec.IdempotencyKey != "log-1" || rec.Outcome != wantOutcomes[i] {
			t.Errorf("line %d = %+v, want POST /v1/charges log-1 %s", i, rec, wantOutcomes[i])
		}
	}
	for _, c := range srv.Charges() {
		if b := mustJSON(t, c); bytes.Contains(b, []byte(card)) {
			t.Errorf("stored charge holds the card number: %s", b)
		}
	}
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestListingsNeedTheSecret: every charge and refund, and the fault
// settings, are for the people running the simulator only.
func TestListingsNeedTheSecret(t *testing.T) {
	_, ts := newTestServer(t, Options{EnableFaults: true})
	tests := []struct {
		name, method, path, authorization string
		want                              int
	}{
		{"charges without a token", http.MethodGet, "/v1/charges", "", http.StatusUnauthorized},
		{"charges with another secret", http.MethodGet, "/v1/charges", "Bearer not-the-secret", http.StatusUnauthorized},
		{"charges with the secret without Bearer", http.MethodGet, "/v1/charges", defaultSecret, http.StatusUnauthorized},
		{"charges with the secret", http.MethodGet, "/v1/charges", "Bearer " + defaultSecret, http.StatusOK},
		{"refunds without a token", http.MethodGet, "/v1/refunds", "", http.StatusUnauthorized},
		{"refunds with the secret", http.MethodGet, "/v1/refunds", "Bearer " + defaultSecret, http.StatusOK},
		{"faults without a token", http.MethodGet, "/_sim/faults", "", http.StatusUnauthorized},
		{"set faults without a token", http.MethodPost, "/_sim/faults", "", http.StatusUnauthorized},
		{"faults with the secret", http.MethodGet, "/_sim/faults", "Bearer " + defaultSecret, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body any
			if tt.method == http.MethodPost {
				body = map[string]any{"mode": "error", "rate": 1}
			}
			if a := callWith(t, tt.method, ts.URL+tt.path, body, tt.authorization); a.status != tt.want {
				t.Errorf("HTTP %d, want %d: %s", a.status, tt.want, a.body)
			}
		})
	}
}

// TestChargePastItsDeadline: a charge request that reaches the simulator
// after the deadline its caller stamped is refused and not made, so an
// inquiry after the caller's timeout is final; the key stays free for the
// same charge sent again in time. A request with no deadline, or one not
// passed, is charged as always.
func TestChargePastItsDeadline(t *testing.T) {
	cases := []struct {
		name        string
		deadline    string
		wantStatus  int
		wantCharged bool
	}{
		{name: "no deadline", wantStatus: http.StatusOK, wantCharged: true},
		{name: "deadline ahead", deadline: time.Now().Add(time.Minute).UTC().Format(time.RFC3339Nano), wantStatus: http.StatusOK, wantCharged: true},
		{name: "deadline passed", deadline: time.Now().Add(-time.Millisecond).UTC().Format(time.RFC3339Nano), wantStatus: http.StatusRequestTimeout},
		{name: "deadline unreadable", deadline: "soon", wantStatus: http.StatusOK, wantCharged: true},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, ts := newTestServer(t, Options{})
			key := fmt.Sprintf("dl-%d", i)
			raw := mustJSON(t, chargeBody(key, "4242424242424242", 1000, true))
			req, err := http.NewRequest(http.MethodPost, ts.URL+"/v1/charges", bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			if tc.deadline != "" {
				req.Header.Set(outbound.DeadlineHeader, tc.deadline)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.wantStatus)
			}
			inq := call(t, http.MethodGet, ts.URL+"/v1/charges/"+key, nil)
			if got := inq.status == http.StatusOK; got != tc.wantCharged || len(srv.Charges()) != map[bool]int{true: 1}[tc.wantCharged] {
				t.Fatalf("inquiry %d with %d charges, want charged %t", inq.status, len(srv.Charges()), tc.wantCharged)
			}
			if !tc.wantCharged {
				again := call(t, http.MethodPost, ts.URL+"/v1/charges", chargeBody(key, "4242424242424242", 1000, true))
				if again.status != http.StatusOK || len(srv.Charges()) != 1 {
					t.Fatalf("the same charge sent again in time: %d, %d charges, want 200 and one", again.status, len(srv.Charges()))
				}
			}
		})
	}
}
