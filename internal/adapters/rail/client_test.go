package rail

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/dev/ports"
	"github.com/paygate/paygate/internal/dev/railsim"
)

// newEnv starts a rail simulator that decides every transfer at once (the
// answer to a submission is still "submitted"; the next read sees the
// outcome) and returns a client for it.
func newEnv(t *testing.T, timeout time.Duration) (*railsim.Server, *Client) {
	t.Helper()
	srv, err := railsim.NewServer(railsim.Options{Logger: slog.New(slog.DiscardHandler), SettleDelay: -1})
	if err != nil {
		t.Fatalf("NewServer: %v", err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		ts.Close()
		_ = srv.Close()
	})
	c, err := NewClient(ts.URL, timeout)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	return srv, c
}

func payTo(key, iban string, amount int64) SubmitRequest {
	return SubmitRequest{
		IdempotencyKey: key,
		Amount:         amount,
		Currency:       "EUR",
		Beneficiary:    Beneficiary{Name: "Erika Mustermann", IBAN: iban, BIC: "COBADEFFXXX", Country: "DE"},
		Reference:      "ref-" + key,
	}
}

func TestNewClient(t *testing.T) {
	tests := []struct {
		name        string
		url         string
		timeout     time.Duration
		wantErr     bool
		wantTimeout time.Duration
		wantBase    string
	}{
		{"default timeout", "http://127.0.0.1:8092", 0, false, 10 * time.Second, "http://127.0.0.1:8092"},
		{"explicit timeout and trailing slash", "https://rail.example/api/", 3 * time.Second, false, 3 * time.Second, "https://rail.example/api"},
		{"negative timeout", "http://127.0.0.1:8092", -time.Second, true, 0, ""},
		{"no scheme", "127.0.0.1:8092", 0, true, 0, ""},
		{"ftp scheme", "ftp://rail.example", 0, true, 0, ""},
		{"no host", "http:///path", 0, true, 0, ""},
		{"user info", "http://u:p@rail.example", 0, true, 0, ""},
		{"query", "http://rail.example/?a=b", 0, true, 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewClient(tc.url, tc.timeout)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("NewClient(%q) = %v, want an error", tc.url, c.baseURL)
				}
				return
			}
			if err != nil {
				t.Fatalf("NewClient: %v", err)
			}
			if c.http.Timeout != tc.wantTimeout || c.baseURL.String() != tc.wantBase {
				t.Errorf("timeout %s base %s, want %s %s", c.http.Timeout, c.baseURL, tc.wantTimeout, tc.wantBase)
			}
		})
	}
}

func TestSubmitGetFindByKey(t *testing.T) {
	tests := []struct {
		name        string
		iban        string
		wantStatus  string
		failureType string
	}{
		{"completes", railsim.IBANCompletes, StatusCompleted, ""},
		{"account closed", railsim.IBANAccountClosed, StatusFailed, railsim.FailureAccountClosed},
		{"fails once", railsim.IBANFailOnce, StatusFailed, railsim.FailureBankUnavailable},
		{"pending", railsim.IBANPending, StatusSubmitted, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, c := newEnv(t, 0)
			ctx := context.Background()
			req := payTo("payout/m1/"+strings.ReplaceAll(tc.name, " ", "-"), tc.iban, 4_200)
			tr, err := c.Submit(ctx, req)
			if err != nil {
				t.Fatalf("Submit: %v", err)
			}
			if tr.Status != StatusSubmitted || tr.Amount != 4_200 || tr.Currency != "EUR" || tr.IdempotencyKey != req.IdempotencyKey || tr.Attempt != 1 || tr.Final() {
				t.Fatalf("Submit = %+v", tr)
			}
			got, err := c.Get(ctx, tr.ID)
			if err != nil {
				t.Fatalf("Get: %v", err)
			}
			if got.Status != tc.wantStatus || got.FailureType != tc.failureType || got.Completed() != (tc.wantStatus == StatusCompleted) || got.Failed() != (tc.wantStatus == StatusFailed) {
				t.Errorf("Get = %q %q, want %q %q", got.Status, got.FailureType, tc.wantStatus, tc.failureType)
			}
			found, err := c.FindByKey(ctx, req.IdempotencyKey)
			if err != nil {
				t.Fatalf("FindByKey: %v", err)
			}
			if found.ID != tr.ID || found.Status != got.Status {
				t.Errorf("FindByKey = %s %q, want %s %q", found.ID, found.Status, tr.ID, got.Status)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	_, c := newEnv(t, 0)
	ctx := context.Background()
	if _, err := c.Submit(ctx, payTo("used", railsim.IBANCompletes, 100)); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		call       func() error
		want       error
		retryable  bool
		statusCode int // 0: not an answer of the rail
		code       string
	}{
		{"same key, other amount", func() error { _, err := c.Submit(ctx, payTo("used", railsim.IBANCompletes, 101)); return err },
			ErrConflict, false, http.StatusConflict, "idempotency_conflict"},
		{"invalid IBAN", func() error {
			_, err := c.Submit(ctx, payTo("bad-iban", "DE00370400440532013000", 100))
			return err
		}, ErrRejected, false, http.StatusBadRequest, "invalid_request"},
		{"zero amount", func() error { _, err := c.Submit(ctx, payTo("zero", railsim.IBANCompletes, 0)); return err },
			ErrRejected, false, http.StatusBadRequest, "invalid_request"},
		{"unavailable rail", func() error { _, err := c.Submit(ctx, payTo("busy", railsim.IBANUnavailable, 100)); return err },
			ErrUnavailable, true, http.StatusServiceUnavailable, "rail_unavailable"},
		{"unknown id", func() error { _, err := c.Get(ctx, "tr_unknown"); return err },
			ErrNotFound, false, http.StatusNotFound, "not_found"},
		{"unknown key", func() error { _, err := c.FindByKey(ctx, "never-used"); return err },
			ErrNotFound, false, http.StatusNotFound, "not_found"},
		{"empty key on submit", func() error { _, err := c.Submit(ctx, payTo("", railsim.IBANCompletes, 1)); return err },
			ErrRejected, false, 0, ""},
		{"empty id", func() error { _, err := c.Get(ctx, ""); return err }, ErrRejected, false, 0, ""},
		{"empty key on find", func() error { _, err := c.FindByKey(ctx, ""); return err }, ErrRejected, false, 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if Retryable(err) != tc.retryable {
				t.Errorf("Retryable(%v) = %t, want %t", err, Retryable(err), tc.retryable)
			}
			var re *Error
			if tc.statusCode == 0 {
				if errors.As(err, &re) {
					t.Errorf("err = %#v, want no answer of the rail", re)
				}
				return
			}
			if !errors.As(err, &re) {
				t.Fatalf("err = %v, want an *Error", err)
			}
			if re.StatusCode != tc.statusCode || re.Code != tc.code {
				t.Errorf("answer = %d %q, want %d %q", re.StatusCode, re.Code, tc.statusCode, tc.code)
			}
		})
	}
}

func TestUnavailableMarkerIsRetriedToOneTransfer(t *testing.T) {
	srv, c := newEnv(t, 0)
	ctx := context.Background()
	req := payTo("retry-me", railsim.IBANUnavailable, 3_000)
	var (
		tr    Transfer
		err   error
		tries int
	)
	// This is the loop an activity's retry policy runs.
	for tries = 1; tries <= 5; tries++ {
		tr, err = c.Submit(ctx, req)
		if !Retryable(err) {
			break
		}
	}
	if err != nil {
		t.Fatalf("Submit after %d tries: %v", tries, err)
	}
	if tries != railsim.UnavailableAnswers+1 {
		t.Errorf("accepted on try %d, want %d", tries, railsim.UnavailableAnswers+1)
	}
	if got, err := c.Get(ctx, tr.ID); err != nil || got.Status != StatusCompleted {
		t.Fatalf("Get = %q, %v; want completed", got.Status, err)
	}
	st, err := c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Transfers != 1 || st.Completed != 1 || st.Paid["EUR"] != 3_000 {
		t.Errorf("stats = %+v, want one completed transfer of EUR 3000", st)
	}
	if direct, err := srv.Stats(); err != nil || direct.Completed != 1 {
		t.Errorf("server stats = %+v, %v", direct, err)
	}
}

func TestFailOnceThenResubmitCompletesOnce(t *testing.T) {
	_, c := newEnv(t, 0)
	ctx := context.Background()
	req := payTo("payout/m1/fail-once", railsim.IBANFailOnce, 9_900)

	first, err := c.Submit(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	failed, err := c.Get(ctx, first.ID)
	if err != nil || !failed.Failed() || failed.FailureType != railsim.FailureBankUnavailable {
		t.Fatalf("first attempt = %+v, %v; want failed", failed, err)
	}
	// The re-run: the same key, the same body.
	rerun, err := c.Submit(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if rerun.ID != first.ID || rerun.Attempt != 2 || rerun.Status != StatusSubmitted {
		t.Fatalf("re-run = %+v, want %s attempt 2 submitted", rerun, first.ID)
	}
	done, err := c.FindByKey(ctx, req.IdempotencyKey)
	if err != nil || !done.Completed() || len(done.Attempts) != 2 {
		t.Fatalf("after re-run = %+v, %v; want completed after 2 attempts", done, err)
	}
	// Another re-run of the completed payout changes nothing.
	again, err := c.Submit(ctx, req)
	if err != nil || again.Attempt != 2 || !again.Completed() {
		t.Fatalf("second re-run = %+v, %v; want the completed transfer unchanged", again, err)
	}
	st, err := c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := KeyStats{TransferID: first.ID, Status: StatusCompleted, Attempts: 2, Completed: 1, Paid: 9_900, Currency: "EUR"}
	if st.ByKey[req.IdempotencyKey] != want || st.Paid["EUR"] != 9_900 {
		t.Errorf("stats = %+v, want %+v and EUR 9900 paid", st, want)
	}
}

func TestConcurrentSubmitOneTransfer(t *testing.T) {
	_, c := newEnv(t, 0)
	ctx := context.Background()
	req := payTo("race", railsim.IBANCompletes, 1_234)
	const n = 20
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			tr, err := c.Submit(ctx, req)
			if err != nil {
				t.Errorf("Submit %d: %v", i, err)
				return
			}
			ids[i] = tr.ID
		})
	}
	wg.Wait()
	for i := range n {
		if ids[i] != ids[0] {
			t.Errorf("submission %d got transfer %s, others %s", i, ids[i], ids[0])
		}
	}
	st, err := c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Transfers != 1 || st.Completed != 1 || st.Paid["EUR"] != 1_234 {
		t.Errorf("stats = %+v, want one completed transfer of EUR 1234", st)
	}
}

func TestTransportErrors(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(2 * time.Second):
		}
	}))
	defer slow.Close()
	garbled := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		_, _ = w.Write([]byte("<html>bad gateway</html>"))
	}))
	defer garbled.Close()
	closed, err := ports.Closed()
	if err != nil {
		t.Fatal(err)
	}
	defer closed.Close()
	refused := "http://" + closed.Addr()

	canceled, cancel := context.WithCancel(context.Background())
	cancel()

	tests := []struct {
		name      string
		url       string
		timeout   time.Duration
		ctx       context.Context
		want      error
		retryable bool
	}{
		{"connection refused", refused, time.Second, context.Background(), ErrUnavailable, true},
		{"no answer in time", slow.URL, 50 * time.Millisecond, context.Background(), ErrTimeout, true},
		{"caller's deadline", slow.URL, time.Minute, func() context.Context {
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			t.Cleanup(cancel)
			return ctx
		}(), ErrTimeout, true},
		{"caller canceled", slow.URL, time.Minute, canceled, context.Canceled, false},
		{"5xx without a JSON body", garbled.URL, time.Second, context.Background(), ErrUnavailable, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewClient(tc.url, tc.timeout)
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Submit(tc.ctx, payTo("k", railsim.IBANCompletes, 1))
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if Retryable(err) != tc.retryable {
				t.Errorf("Retryable = %t, want %t", Retryable(err), tc.retryable)
			}
		})
	}
}

func TestNothingPrintsTheBeneficiary(t *testing.T) {
	req := payTo("k", railsim.IBANCompletes, 1)
	tr := Transfer{ID: "tr_1", Beneficiary: req.Beneficiary}
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("submit", "request", req, "transfer", tr.Beneficiary)
	outputs := map[string]string{
		"String":    req.Beneficiary.String(),
		"%v":        fmt.Sprintf("%v", req),
		"%+v":       fmt.Sprintf("%+v", tr),
		"%#v":       fmt.Sprintf("%#v", req.Beneficiary),
		"slog JSON": logged.String(),
	}
	for name, out := range outputs {
		for _, secret := range []string{req.Beneficiary.Name, req.Beneficiary.IBAN} {
			if strings.Contains(out, secret) {
				t.Errorf("%s shows %q: %s", name, secret, out)
			}
		}
		if !strings.Contains(out, "****3000") {
			t.Errorf("%s lacks the masked account: %s", name, out)
		}
	}
	if want := `"request":{"idempotency_key":"k","amount":1,"currency":"EUR","reference":"ref-k","beneficiary":{"account":"****3000","bic":"COBADEFFXXX","country":"DE"}}`; !strings.Contains(logged.String(), want) {
		t.Errorf("log = %s, want it to hold %s", logged.String(), want)
	}
}
