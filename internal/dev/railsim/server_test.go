package railsim

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// clock is a clock the tests drive.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

const (
	testSettle  = 5 * time.Second
	testPending = time.Hour
)

// newRail starts a rail on a driven clock with a settle delay of 5s.
func newRail(t *testing.T, path string, clk *clock) (*Server, *httptest.Server) {
	t.Helper()
	srv, err := NewServer(Options{
		Logger:       slog.New(slog.DiscardHandler),
		DataPath:     path,
		SettleDelay:  testSettle,
		PendingDelay: testPending,
		Now:          clk.Now,
	})
	if err != nil {
		t.Fatalf("NewServer: %v", err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		ts.Close()
		_ = srv.Close()
	})
	return srv, ts
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

func call(t *testing.T, method, url, key string, body any) reply {
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
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
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
	return reply{status: resp.StatusCode, header: resp.Header, body: raw}
}

func decode[T any](t *testing.T, r reply) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("decode %q: %v", r.body, err)
	}
	return v
}

func transferTo(iban string, amount int64) TransferRequest {
	return TransferRequest{
		Amount:   amount,
		Currency: "EUR",
		Beneficiary: Beneficiary{
			Name:    "Erika Mustermann",
			IBAN:    iban,
			BIC:     "COBADEFFXXX",
			Country: "DE",
		},
		Reference: "payout-1",
	}
}

// submit posts req under key and checks the status.
func submit(t *testing.T, ts *httptest.Server, key string, req TransferRequest, wantStatus int) Transfer {
	t.Helper()
	r := call(t, http.MethodPost, ts.URL+"/transfers", key, req)
	if r.status != wantStatus {
		t.Fatalf("POST /transfers %s: status %d, want %d; body %s", key, r.status, wantStatus, r.body)
	}
	return decode[Transfer](t, r)
}

func get(t *testing.T, ts *httptest.Server, id string) Transfer {
	t.Helper()
	r := call(t, http.MethodGet, ts.URL+"/transfers/"+id, "", nil)
	if r.status != http.StatusOK {
		t.Fatalf("GET /transfers/%s: status %d; body %s", id, r.status, r.body)
	}
	return decode[Transfer](t, r)
}

func stats(t *testing.T, ts *httptest.Server) Stats {
	t.Helper()
	r := call(t, http.MethodGet, ts.URL+"/transfers/stats", "", nil)
	if r.status != http.StatusOK {
		t.Fatalf("GET /transfers/stats: status %d; body %s", r.status, r.body)
	}
	return decode[Stats](t, r)
}

func TestSubmitValidation(t *testing.T) {
	_, ts := newRail(t, "", newClock())
	valid := transferTo(IBANCompletes, 1000)
	with := func(f func(*TransferRequest)) TransferRequest {
		r := valid
		f(&r)
		return r
	}
	tests := []struct {
		name    string
		key     string
		body    any
		message string
	}{
		{"missing key", "", valid, "idempotency key is required"},
		{"key with a space", "a b", valid, "idempotency key must be printable ASCII without spaces"},
		{"key too long", strings.Repeat("k", 256), valid, "idempotency key must be at most 255 characters"},
		{"zero amount", "k", with(func(r *TransferRequest) { r.Amount = 0 }), "amount must be a positive number of minor units"},
		{"negative amount", "k", with(func(r *TransferRequest) { r.Amount = -1 }), "amount must be a positive number of minor units"},
		{"lower-case currency", "k", with(func(r *TransferRequest) { r.Currency = "eur" }), "currency must be 3 upper-case letters"},
		{"missing reference", "k", with(func(r *TransferRequest) { r.Reference = " " }), "reference is required"},
		{"long reference", "k", with(func(r *TransferRequest) { r.Reference = strings.Repeat("r", 141) }), "reference must be at most 140 characters"},
		{"missing name", "k", with(func(r *TransferRequest) { r.Beneficiary.Name = "" }), "beneficiary.name is required"},
		{"no account", "k", with(func(r *TransferRequest) { r.Beneficiary.IBAN = "" }), "beneficiary.iban or beneficiary.account_number is required"},
		{"iban check digits", "k", with(func(r *TransferRequest) { r.Beneficiary.IBAN = "DE88370400440532013000" }), "beneficiary.iban is not a valid IBAN"},
		{"iban too short", "k", with(func(r *TransferRequest) { r.Beneficiary.IBAN = "DE89" }), "beneficiary.iban is not a valid IBAN"},
		{"account number punctuation", "k", with(func(r *TransferRequest) { r.Beneficiary.IBAN, r.Beneficiary.AccountNumber = "", "12.34" }), "beneficiary.account_number must be 1 to 34 letters or digits"},
		{"bic length", "k", with(func(r *TransferRequest) { r.Beneficiary.BIC = "COBADEF" }), "beneficiary.bic must be 8 or 11 characters: 6 letters, then letters or digits"},
		{"bic digit in bank code", "k", with(func(r *TransferRequest) { r.Beneficiary.BIC = "C0BADEFF" }), "beneficiary.bic must be 8 or 11 characters: 6 letters, then letters or digits"},
		{"country", "k", with(func(r *TransferRequest) { r.Beneficiary.Country = "DEU" }), "beneficiary.country must be 2 upper-case letters"},
		{"malformed json", "k", `{"amount":`, "body must be a JSON object with the documented fields"},
		{"unknown field", "k", `{"amount":1,"iban":"x"}`, "body must be a JSON object with the documented fields"},
		{"amount as string", "k", `{"amount":"10"}`, "body must be a JSON object with the documented fields"},
		{"two objects", "k", `{"amount":1} {}`, "body must hold a single JSON object"},
		{"body over 64 KiB", "k", `{"reference":"` + strings.Repeat("x", 70<<10) + `"}`, "body must be a JSON object with the documented fields"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := call(t, http.MethodPost, ts.URL+"/transfers", tc.key, tc.body)
			if r.status != http.StatusBadRequest {
				t.Fatalf("status = %d, want 400; body %s", r.status, r.body)
			}
			got := decode[errorBody](t, r)
			want := errorBody{Error: "invalid_request", Message: tc.message}
			if got != want {
				t.Errorf("body = %+v, want %+v", got, want)
			}
		})
	}
	if st := stats(t, ts); st.Transfers != 0 {
		t.Errorf("transfers after refusals = %d, want 0", st.Transfers)
	}
}

func TestValidAccountsAccepted(t *testing.T) {
	_, ts := newRail(t, "", newClock())
	tests := []struct {
		name string
		b    Beneficiary
	}{
		{"iban printed with spaces and lower case", Beneficiary{Name: "A", IBAN: "de89 3704 0044 0532 0130 00", Country: "DE"}},
		{"account number with hyphens, no bic", Beneficiary{Name: "A", AccountNumber: "000-123-456", Country: "US"}},
		{"eight-character bic", Beneficiary{Name: "A", IBAN: IBANCompletes, BIC: "COBADEFF", Country: "DE"}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := TransferRequest{Amount: 1, Currency: "USD", Beneficiary: tc.b, Reference: "r"}
			submit(t, ts, "valid-"+string(rune('a'+i)), req, http.StatusAccepted)
		})
	}
}

func TestIdempotency(t *testing.T) {
	clk := newClock()
	_, ts := newRail(t, "", clk)
	req := transferTo(IBANCompletes, 12_345)

	first := submit(t, ts, "pay-1", req, http.StatusAccepted)
	if first.Status != StatusSubmitted || first.Attempt != 1 || first.Amount != 12_345 || first.IdempotencyKey != "pay-1" || !strings.HasPrefix(first.ID, "tr_") {
		t.Fatalf("first = %+v", first)
	}

	r := call(t, http.MethodPost, ts.URL+"/transfers", "pay-1", req)
	if r.status != http.StatusOK || r.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("repeat: status %d replayed %q, want 200 true", r.status, r.header.Get("Idempotent-Replayed"))
	}
	if again := decode[Transfer](t, r); !reflect.DeepEqual(again, first) {
		t.Errorf("repeat = %+v, want %+v", again, first)
	}

	tests := []struct {
		name   string
		change func(*TransferRequest)
	}{
		{"other amount", func(r *TransferRequest) { r.Amount++ }},
		{"other currency", func(r *TransferRequest) { r.Currency = "GBP" }},
		{"other beneficiary", func(r *TransferRequest) { r.Beneficiary.IBAN = IBANAccountClosed }},
		{"other reference", func(r *TransferRequest) { r.Reference = "payout-2" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			other := req
			tc.change(&other)
			r := call(t, http.MethodPost, ts.URL+"/transfers", "pay-1", other)
			if r.status != http.StatusConflict {
				t.Fatalf("status = %d, want 409; body %s", r.status, r.body)
			}
			want := errorBody{Error: "idempotency_conflict", Message: "idempotency key was already used with a different request"}
			if got := decode[errorBody](t, r); got != want {
				t.Errorf("body = %+v, want %+v", got, want)
			}
		})
	}

	clk.Advance(testSettle)
	done := submit(t, ts, "pay-1", req, http.StatusOK)
	if done.ID != first.ID || done.Status != StatusCompleted || done.Attempt != 1 {
		t.Errorf("repeat after completion = %+v, want %s completed in attempt 1", done, first.ID)
	}

	second := submit(t, ts, "pay-2", req, http.StatusAccepted)
	if second.ID == first.ID {
		t.Errorf("a new key reused transfer %s", first.ID)
	}
	st := stats(t, ts)
	if st.Transfers != 2 || st.Submitted != 1 || st.Completed != 1 || st.Paid["EUR"] != 12_345 {
		t.Errorf("stats = %+v, want 2 transfers, 1 submitted, 1 completed, EUR 12345 paid", st)
	}
	if got := st.ByReference["payout-1"]; got.Transfers != 2 || got.Completed != 1 || got.Paid["EUR"] != 12_345 {
		t.Errorf("by reference = %+v", got)
	}
}

func TestTestBeneficiaries(t *testing.T) {
	tests := []struct {
		name        string
		beneficiary Beneficiary
		// unavailable is how many 503 answers come before the rail accepts.
		unavailable   int
		afterSettle   string
		afterPending  string
		failureType   string
		failureReason string
	}{
		{"ordinary IBAN completes", Beneficiary{Name: "A", IBAN: IBANCompletes, Country: "DE"},
			0, StatusCompleted, StatusCompleted, "", ""},
		{"ordinary account number completes", Beneficiary{Name: "A", AccountNumber: "123456789", Country: "US"},
			0, StatusCompleted, StatusCompleted, "", ""},
		{"closed IBAN fails", Beneficiary{Name: "A", IBAN: IBANAccountClosed, Country: "DE"},
			0, StatusFailed, StatusFailed, FailureAccountClosed, "beneficiary account closed"},
		{"closed account number fails", Beneficiary{Name: "A", AccountNumber: "9900000001", Country: "US"},
			0, StatusFailed, StatusFailed, FailureAccountClosed, "beneficiary account closed"},
		{"fail-once IBAN fails its first attempt", Beneficiary{Name: "A", IBAN: IBANFailOnce, Country: "DE"},
			0, StatusFailed, StatusFailed, FailureBankUnavailable, "beneficiary bank did not answer; the transfer may be tried again"},
		{"fail-once account number fails its first attempt", Beneficiary{Name: "A", AccountNumber: "9900000002", Country: "US"},
			0, StatusFailed, StatusFailed, FailureBankUnavailable, "beneficiary bank did not answer; the transfer may be tried again"},
		{"unavailable IBAN answers 503 twice, then completes", Beneficiary{Name: "A", IBAN: IBANUnavailable, Country: "DE"},
			2, StatusCompleted, StatusCompleted, "", ""},
		{"unavailable account number answers 503 twice, then completes", Beneficiary{Name: "A", AccountNumber: "9900000003", Country: "US"},
			2, StatusCompleted, StatusCompleted, "", ""},
		{"pending IBAN stays submitted, then completes", Beneficiary{Name: "A", IBAN: IBANPending, Country: "DE"},
			0, StatusSubmitted, StatusCompleted, "", ""},
		{"pending account number stays submitted, then completes", Beneficiary{Name: "A", AccountNumber: "9900000004", Country: "US"},
			0, StatusSubmitted, StatusCompleted, "", ""},
		{"IBAN decides when both are given", Beneficiary{Name: "A", IBAN: IBANCompletes, AccountNumber: "9900000001", Country: "DE"},
			0, StatusCompleted, StatusCompleted, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := newClock()
			_, ts := newRail(t, "", clk)
			req := TransferRequest{Amount: 5_000, Currency: "EUR", Beneficiary: tc.beneficiary, Reference: "ref"}
			for i := range tc.unavailable {
				r := call(t, http.MethodPost, ts.URL+"/transfers", "key", req)
				if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") != "1" {
					t.Fatalf("submission %d: status %d Retry-After %q, want 503 1", i+1, r.status, r.header.Get("Retry-After"))
				}
				if got := decode[errorBody](t, r); got.Error != "rail_unavailable" {
					t.Fatalf("submission %d: error %q, want rail_unavailable", i+1, got.Error)
				}
				if r := call(t, http.MethodGet, ts.URL+"/transfers?idempotency_key=key", "", nil); r.status != http.StatusNotFound {
					t.Fatalf("after a 503 the rail holds a transfer: status %d", r.status)
				}
			}
			tr := submit(t, ts, "key", req, http.StatusAccepted)
			if tr.Status != StatusSubmitted {
				t.Fatalf("status on submission = %q, want submitted", tr.Status)
			}

			clk.Advance(testSettle - time.Nanosecond)
			if got := get(t, ts, tr.ID); got.Status != StatusSubmitted {
				t.Fatalf("status just before the settle delay = %q, want submitted", got.Status)
			}
			clk.Advance(time.Nanosecond)
			got := get(t, ts, tr.ID)
			if got.Status != tc.afterSettle || got.FailureType != tc.failureType || got.FailureReason != tc.failureReason {
				t.Errorf("after settle delay = %q %q %q, want %q %q %q",
					got.Status, got.FailureType, got.FailureReason, tc.afterSettle, tc.failureType, tc.failureReason)
			}
			clk.Advance(testPending)
			got = get(t, ts, tr.ID)
			if got.Status != tc.afterPending {
				t.Errorf("after pending delay = %q, want %q", got.Status, tc.afterPending)
			}
			if got.Status != StatusSubmitted {
				wantAt := tr.CreatedAt.Add(testSettle)
				if tc.afterSettle == StatusSubmitted {
					wantAt = tr.CreatedAt.Add(testPending)
				}
				if fin := got.Attempts[0].FinishedAt; fin == nil || !fin.Equal(wantAt) || !got.UpdatedAt.Equal(wantAt) {
					t.Errorf("finished at %v, updated at %v, want %v", fin, got.UpdatedAt, wantAt)
				}
			}
			var wantPaid int64
			if tc.afterPending == StatusCompleted {
				wantPaid = 5_000
			}
			if ks := stats(t, ts).ByKey["key"]; ks.Paid != wantPaid || ks.TransferID != tr.ID {
				t.Errorf("stats of key = %+v, want paid %d", ks, wantPaid)
			}
		})
	}
}

func TestResubmission(t *testing.T) {
	tests := []struct {
		name string
		iban string
		// wait before the re-submission: zero re-submits while in flight.
		wait       time.Duration
		wantStatus int
		// after is the transfer's status once the re-submission settled.
		after    string
		attempts int
		paid     int64
	}{
		{"in flight: answered unchanged", IBANCompletes, 0, http.StatusOK, StatusCompleted, 1, 700},
		{"completed: answered unchanged", IBANCompletes, testSettle, http.StatusOK, StatusCompleted, 1, 700},
		{"failed once: a new attempt completes", IBANFailOnce, testSettle, http.StatusAccepted, StatusCompleted, 2, 700},
		{"account closed: a new attempt fails again", IBANAccountClosed, testSettle, http.StatusAccepted, StatusFailed, 2, 0},
		{"fail-once still in flight: answered unchanged, then fails", IBANFailOnce, 0, http.StatusOK, StatusFailed, 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := newClock()
			_, ts := newRail(t, "", clk)
			req := transferTo(tc.iban, 700)
			first := submit(t, ts, "payout/m1/r1", req, http.StatusAccepted)
			clk.Advance(tc.wait)
			again := submit(t, ts, "payout/m1/r1", req, tc.wantStatus)
			if again.ID != first.ID {
				t.Fatalf("re-submission made transfer %s beside %s", again.ID, first.ID)
			}
			clk.Advance(testSettle)
			got := get(t, ts, first.ID)
			if got.Status != tc.after || got.Attempt != tc.attempts || len(got.Attempts) != tc.attempts {
				t.Errorf("after = %q attempt %d (%d recorded), want %q attempt %d", got.Status, got.Attempt, len(got.Attempts), tc.after, tc.attempts)
			}
			// A further re-submission of a completed transfer changes nothing.
			if got.Status == StatusCompleted {
				if last := submit(t, ts, "payout/m1/r1", req, http.StatusOK); last.Attempt != tc.attempts {
					t.Errorf("re-submission of a completed transfer started attempt %d", last.Attempt)
				}
			}
			st := stats(t, ts)
			wantCompleted := 0
			if tc.paid > 0 {
				wantCompleted = 1
			}
			if st.Transfers != 1 || st.Completed != wantCompleted || st.Paid["EUR"] != tc.paid || st.Attempts != tc.attempts {
				t.Errorf("stats = %+v, want 1 transfer, %d completed, EUR %d paid, %d attempts", st, wantCompleted, tc.paid, tc.attempts)
			}
		})
	}
}

func TestFailOnceThenResubmitCompletesOnce(t *testing.T) {
	clk := newClock()
	_, ts := newRail(t, "", clk)
	req := transferTo(IBANFailOnce, 25_000)

	first := submit(t, ts, "k", req, http.StatusAccepted)
	clk.Advance(testSettle)
	failed := get(t, ts, first.ID)
	if failed.Status != StatusFailed || failed.FailureType != FailureBankUnavailable {
		t.Fatalf("first attempt = %q %q, want failed %s", failed.Status, failed.FailureType, FailureBankUnavailable)
	}

	retry := submit(t, ts, "k", req, http.StatusAccepted)
	if retry.ID != first.ID || retry.Status != StatusSubmitted || retry.Attempt != 2 || retry.FailureType != "" {
		t.Fatalf("retry = %+v, want %s submitted in attempt 2", retry, first.ID)
	}
	clk.Advance(testSettle)
	done := get(t, ts, first.ID)
	wantAttempts := []Attempt{
		{Number: 1, Status: StatusFailed, FailureType: FailureBankUnavailable,
			FailureReason: "beneficiary bank did not answer; the transfer may be tried again",
			SubmittedAt:   first.CreatedAt, FinishedAt: new(first.CreatedAt.Add(testSettle))},
		{Number: 2, Status: StatusCompleted, SubmittedAt: first.CreatedAt.Add(testSettle),
			FinishedAt: new(first.CreatedAt.Add(2 * testSettle))},
	}
	if done.Status != StatusCompleted || !reflect.DeepEqual(done.Attempts, wantAttempts) {
		t.Errorf("done = %q, attempts %+v, want completed, %+v", done.Status, done.Attempts, wantAttempts)
	}
	for range 3 {
		submit(t, ts, "k", req, http.StatusOK)
	}
	st := stats(t, ts)
	want := KeyStats{TransferID: first.ID, Status: StatusCompleted, Attempts: 2, Completed: 1, Paid: 25_000, Currency: "EUR"}
	if st.Completed != 1 || st.Paid["EUR"] != 25_000 || st.ByKey["k"] != want {
		t.Errorf("stats = %+v, want one completed EUR 25000 and %+v", st, want)
	}
}

func TestLookups(t *testing.T) {
	_, ts := newRail(t, "", newClock())
	tr := submit(t, ts, "find/me", transferTo(IBANCompletes, 10), http.StatusAccepted)
	tests := []struct {
		name   string
		path   string
		status int
		id     string
		code   string
	}{
		{"by id", "/transfers/" + tr.ID, http.StatusOK, tr.ID, ""},
		{"by key", "/transfers?idempotency_key=find/me", http.StatusOK, tr.ID, ""},
		{"unknown id", "/transfers/tr_nope", http.StatusNotFound, "", "not_found"},
		{"unknown key", "/transfers?idempotency_key=other", http.StatusNotFound, "", "not_found"},
		{"no key", "/transfers", http.StatusBadRequest, "", "invalid_request"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := call(t, http.MethodGet, ts.URL+tc.path, "", nil)
			if r.status != tc.status {
				t.Fatalf("status = %d, want %d; body %s", r.status, tc.status, r.body)
			}
			if tc.id != "" {
				if got := decode[Transfer](t, r); got.ID != tc.id {
					t.Errorf("id = %q, want %q", got.ID, tc.id)
				}
				return
			}
			if got := decode[errorBody](t, r); got.Error != tc.code {
				t.Errorf("error = %q, want %q", got.Error, tc.code)
			}
		})
	}
}

func TestSettleAtOnce(t *testing.T) {
	srv, err := NewServer(Options{Logger: slog.New(slog.DiscardHandler), SettleDelay: -1})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	tr := submit(t, ts, "k", transferTo(IBANCompletes, 1), http.StatusAccepted)
	if tr.Status != StatusSubmitted {
		t.Fatalf("answer = %q, want submitted", tr.Status)
	}
	if got := get(t, ts, tr.ID); got.Status != StatusCompleted {
		t.Errorf("next read = %q, want completed", got.Status)
	}
}

func TestDefaultSettleDelayOnTheRealClock(t *testing.T) {
	srv, err := NewServer(Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	tr := submit(t, ts, "k", transferTo(IBANCompletes, 1), http.StatusAccepted)
	deadline := time.Now().Add(5 * time.Second)
	for get(t, ts, tr.ID).Status == StatusSubmitted {
		if time.Now().After(deadline) {
			t.Fatal("still submitted after 5s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := get(t, ts, tr.ID); got.Status != StatusCompleted || got.UpdatedAt.Sub(got.CreatedAt) != DefaultSettleDelay {
		t.Errorf("got %q after %s, want completed after %s", got.Status, got.UpdatedAt.Sub(got.CreatedAt), DefaultSettleDelay)
	}
}

func TestConcurrentSubmissionsUnderOneKey(t *testing.T) {
	for _, persisted := range []bool{false, true} {
		name := "in memory"
		path := ""
		if persisted {
			name = "with a data file"
			path = filepath.Join(t.TempDir(), "transfers.jsonl")
		}
		t.Run(name, func(t *testing.T) {
			_, ts := newRail(t, path, newClock())
			req := transferTo(IBANCompletes, 999)
			const n = 20
			var wg sync.WaitGroup
			statuses := make([]int, n)
			ids := make([]string, n)
			for i := range n {
				wg.Go(func() {
					raw, _ := json.Marshal(req)
					hr, _ := http.NewRequest(http.MethodPost, ts.URL+"/transfers", bytes.NewReader(raw))
					hr.Header.Set("Idempotency-Key", "same")
					resp, err := http.DefaultClient.Do(hr)
					if err != nil {
						t.Errorf("submission %d: %v", i, err)
						return
					}
					defer resp.Body.Close()
					var tr Transfer
					_ = json.NewDecoder(resp.Body).Decode(&tr)
					statuses[i], ids[i] = resp.StatusCode, tr.ID
				})
			}
			wg.Wait()
			accepted := 0
			for i := range n {
				switch statuses[i] {
				case http.StatusAccepted:
					accepted++
				case http.StatusOK:
				default:
					t.Errorf("submission %d: status %d", i, statuses[i])
				}
				if ids[i] != ids[0] {
					t.Errorf("submission %d: transfer %s, others %s", i, ids[i], ids[0])
				}
			}
			if accepted != 1 {
				t.Errorf("%d submissions answered 202, want 1", accepted)
			}
			if st := stats(t, ts); st.Transfers != 1 {
				t.Errorf("transfers = %d, want 1", st.Transfers)
			}
		})
	}
}

func TestRestartKeepsTransfers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rail", "transfers.jsonl")
	clk := newClock()
	srv, ts := newRail(t, path, clk)

	completed := submit(t, ts, "completed", transferTo(IBANCompletes, 100), http.StatusAccepted)
	retried := submit(t, ts, "retried", transferTo(IBANFailOnce, 200), http.StatusAccepted)
	closed := submit(t, ts, "closed", transferTo(IBANAccountClosed, 300), http.StatusAccepted)
	clk.Advance(testSettle)
	submit(t, ts, "retried", transferTo(IBANFailOnce, 200), http.StatusAccepted) // attempt 2
	pending := submit(t, ts, "pending", transferTo(IBANPending, 400), http.StatusAccepted)
	inFlight := submit(t, ts, "in-flight", transferTo(IBANCompletes, 500), http.StatusAccepted)

	before, err := srv.Transfers()
	if err != nil {
		t.Fatal(err)
	}
	statsBefore := stats(t, ts)
	if statsBefore.Transfers != 5 || statsBefore.Completed != 1 || statsBefore.Failed != 1 || statsBefore.Submitted != 3 {
		t.Fatalf("stats before restart = %+v", statsBefore)
	}
	ts.Close()
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if r, err := srv.Transfers(); err == nil {
		t.Fatalf("Transfers after Close = %d transfers, want an error", len(r))
	}

	srv2, ts2 := newRail(t, path, clk)
	after, err := srv2.Transfers()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(after, before) {
		t.Fatalf("after restart:\n%+v\nwant\n%+v", after, before)
	}
	if got := stats(t, ts2); !reflect.DeepEqual(got, statsBefore) {
		t.Errorf("stats after restart = %+v, want %+v", got, statsBefore)
	}
	// The restarted rail still refuses a second transfer under a key and
	// still decides what was in flight.
	submit(t, ts2, "completed", transferTo(IBANCompletes, 100), http.StatusOK)
	if r := call(t, http.MethodPost, ts2.URL+"/transfers", "completed", transferTo(IBANCompletes, 101)); r.status != http.StatusConflict {
		t.Errorf("changed body after restart: status %d, want 409", r.status)
	}
	clk.Advance(testPending)
	tests := []struct {
		id     string
		status string
	}{
		{completed.ID, StatusCompleted},
		{retried.ID, StatusCompleted},
		{closed.ID, StatusFailed},
		{pending.ID, StatusCompleted},
		{inFlight.ID, StatusCompleted},
	}
	for _, tc := range tests {
		if got := get(t, ts2, tc.id); got.Status != tc.status {
			t.Errorf("%s = %q, want %q", tc.id, got.Status, tc.status)
		}
	}
	st := stats(t, ts2)
	if st.Transfers != 5 || st.Completed != 4 || st.Paid["EUR"] != 100+200+400+500 {
		t.Errorf("stats = %+v, want 5 transfers, 4 completed, EUR 1200 paid", st)
	}

	// A third start reads what the second one wrote.
	ts2.Close()
	if err := srv2.Close(); err != nil {
		t.Fatal(err)
	}
	_, ts3 := newRail(t, path, clk)
	if got := stats(t, ts3); !reflect.DeepEqual(got, st) {
		t.Errorf("stats after second restart = %+v, want %+v", got, st)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("data file mode = %v, want 0600", info.Mode().Perm())
	}
}

func TestDataFileDamage(t *testing.T) {
	tests := []struct {
		name      string
		damage    func(data []byte) []byte
		wantErr   bool
		transfers int
	}{
		{"torn last line is dropped", func(d []byte) []byte { return append(d, `{"id":"tr_x","idem`...) }, false, 2},
		{"blank lines are skipped", func(d []byte) []byte { return append([]byte("\n"), d...) }, false, 2},
		{"a bad line before the end refuses to start", func(d []byte) []byte { return append([]byte("garbage\n"), d...) }, true, 0},
		{"a second transfer under one key refuses to start", func(d []byte) []byte {
			line := bytes.SplitAfter(d, []byte("\n"))[0]
			return append(d, bytes.Replace(line, []byte(`"id":"tr_`), []byte(`"id":"tr_0`), 1)...)
		}, true, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "transfers.jsonl")
			clk := newClock()
			srv, ts := newRail(t, path, clk)
			submit(t, ts, "a", transferTo(IBANCompletes, 1), http.StatusAccepted)
			submit(t, ts, "b", transferTo(IBANCompletes, 2), http.StatusAccepted)
			ts.Close()
			_ = srv.Close()
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, tc.damage(data), 0o600); err != nil {
				t.Fatal(err)
			}
			srv2, err := NewServer(Options{Logger: slog.New(slog.DiscardHandler), DataPath: path, Now: clk.Now})
			if tc.wantErr {
				if err == nil {
					_ = srv2.Close()
					t.Fatal("NewServer accepted a damaged file")
				}
				return
			}
			if err != nil {
				t.Fatalf("NewServer: %v", err)
			}
			defer srv2.Close()
			got, err := srv2.Transfers()
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tc.transfers {
				t.Errorf("transfers = %d, want %d", len(got), tc.transfers)
			}
		})
	}
}

func TestClosedRailAnswers503(t *testing.T) {
	srv, ts := newRail(t, "", newClock())
	tr := submit(t, ts, "k", transferTo(IBANCompletes, 1), http.StatusAccepted)
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/transfers/" + tr.ID, "/transfers?idempotency_key=k", "/transfers/stats"} {
		if r := call(t, http.MethodGet, ts.URL+path, "", nil); r.status != http.StatusServiceUnavailable {
			t.Errorf("GET %s after Close: status %d, want 503", path, r.status)
		}
	}
	if r := call(t, http.MethodPost, ts.URL+"/transfers", "k2", transferTo(IBANCompletes, 1)); r.status != http.StatusServiceUnavailable {
		t.Errorf("POST after Close: status %d, want 503", r.status)
	}
}

func TestLogsNoBeneficiaryData(t *testing.T) {
	var buf bytes.Buffer
	srv, err := NewServer(Options{Logger: slog.New(slog.NewJSONHandler(&buf, nil)), SettleDelay: -1})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	req := transferTo(IBANAccountClosed, 1)
	tr := submit(t, ts, "log-key", req, http.StatusAccepted)
	get(t, ts, tr.ID)
	call(t, http.MethodPost, ts.URL+"/transfers", "log-key", transferTo(IBANCompletes, 1))
	logs := buf.String()
	for _, secret := range []string{req.Beneficiary.Name, req.Beneficiary.IBAN, "9900000001"} {
		if strings.Contains(logs, secret) {
			t.Errorf("log holds %q:\n%s", secret, logs)
		}
	}
	for _, want := range []string{`"idempotency_key":"log-key"`, `"transfer_id":"` + tr.ID + `"`, `"outcome":"idempotency_conflict"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %s:\n%s", want, logs)
		}
	}
}
