package simulator

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// openAt opens a simulator on the store at path and serves it.
func openAt(t *testing.T, path string, opts Options) (*Server, *httptest.Server) {
	t.Helper()
	opts.DataPath = path
	opts.Logger = slog.New(slog.DiscardHandler)
	srv, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		ts.Close()
		srv.Close()
	})
	return srv, ts
}

// TestStoreSurvivesARestart: every charge and refund, and every answer a
// repeated key gets, are the same after the simulator is opened again on
// its file; a refund pending at the restart settles afterwards.
func TestStoreSurvivesARestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "acquirer.jsonl")
	opts := Options{SettleDelay: 100 * time.Millisecond}
	first, ts := openAt(t, path, opts)

	approved := decode[Charge](t, call(t, "POST", ts.URL+"/v1/charges", chargeBody("k-capture", "4242424242424242", 5000, false)))
	call(t, "POST", ts.URL+"/v1/charges/"+approved.ChargeID+"/capture", captureRequest{IdempotencyKey: "cap-1", Amount: 5000})
	voided := decode[Charge](t, call(t, "POST", ts.URL+"/v1/charges", chargeBody("k-void", "4242424242424242", 700, false)))
	call(t, "POST", ts.URL+"/v1/charges/"+voided.ChargeID+"/void", voidRequest{IdempotencyKey: "void-1"})
	call(t, "POST", ts.URL+"/v1/charges", chargeBody("k-declined", "4000000000000002", 900, true))
	call(t, "POST", ts.URL+"/v1/charges/"+approved.ChargeID+"/refunds", refundRequest{IdempotencyKey: "rf-1", Amount: 1000})
	// An amount ending in 77 stays pending until SettleDelay has passed.
	pending := decode[Refund](t, call(t, "POST", ts.URL+"/v1/charges/"+approved.ChargeID+"/refunds", refundRequest{IdempotencyKey: "rf-2", Amount: 177}))
	if pending.Status != RefundPending {
		t.Fatalf("refund of 1.77 is %s, want pending", pending.Status)
	}
	charges, refunds := first.Charges(), first.Refunds()
	ts.Close()
	first.Close() // before the pending refund settles

	second, ts2 := openAt(t, path, opts)
	if got := second.Charges(); !slices.Equal(got, charges) {
		t.Errorf("charges after the restart:\n%+v\nwant\n%+v", got, charges)
	}
	if got := second.Refunds(); len(got) != len(refunds) || got[1].Status != RefundPending {
		t.Errorf("refunds after the restart: %+v", got)
	}
	tests := []struct {
		name       string
		method     string
		path       string
		body       any
		wantStatus int
		wantCharge string
	}{
		{"a repeated charge gets the same charge", "POST", "/v1/charges", chargeBody("k-capture", "4242424242424242", 5000, false), 200, approved.ChargeID},
		{"the inquiry finds the charge", "GET", "/v1/charges/k-void", nil, 200, voided.ChargeID},
		{"a repeated capture is replayed", "POST", "/v1/charges/" + approved.ChargeID + "/capture", captureRequest{IdempotencyKey: "cap-1", Amount: 5000}, 200, approved.ChargeID},
		{"a new capture of a captured charge is refused", "POST", "/v1/charges/" + approved.ChargeID + "/capture", captureRequest{IdempotencyKey: "cap-2", Amount: 5000}, 409, ""},
		{"a repeated key with another body conflicts", "POST", "/v1/charges", chargeBody("k-capture", "4242424242424242", 5001, false), 409, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := call(t, tc.method, ts2.URL+tc.path, tc.body)
			if a.status != tc.wantStatus {
				t.Fatalf("status %d, want %d: %s", a.status, tc.wantStatus, a.body)
			}
			if tc.wantCharge != "" {
				if c := decode[Charge](t, a); c.ChargeID != tc.wantCharge {
					t.Errorf("charge %s, want %s", c.ChargeID, tc.wantCharge)
				}
			}
		})
	}
	if n := len(second.Charges()); n != len(charges) {
		t.Errorf("%d charges after the repeats, want %d", n, len(charges))
	}
	deadline := time.Now().Add(5 * time.Second)
	for second.Refunds()[1].Status != RefundSucceeded {
		if time.Now().After(deadline) {
			t.Fatal("the refund pending at the restart never settled")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Settled after the restart is also kept: a third opening sees it.
	ts2.Close()
	second.Close()
	third, _ := openAt(t, path, opts)
	if rf := third.Refunds()[1]; rf.Status != RefundSucceeded {
		t.Errorf("after a second restart the refund is %s", rf.Status)
	}
	if c := third.Charges()[0]; c.RefundedAmount != 1177 {
		t.Errorf("refunded amount %d, want 1177", c.RefundedAmount)
	}
}

// TestStoreToleratesATornLastLine: a crash in the middle of a write leaves
// a line without its end, which the next opening drops.
func TestStoreToleratesATornLastLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "acquirer.jsonl")
	first, ts := openAt(t, path, Options{})
	call(t, "POST", ts.URL+"/v1/charges", chargeBody("k-1", "4242424242424242", 100, true))
	ts.Close()
	first.Close()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"t":"charge","charge":{"charge_id":"ch_torn"`)
	f.Close()
	second, ts2 := openAt(t, path, Options{})
	if n := len(second.Charges()); n != 1 {
		t.Fatalf("%d charges, want 1", n)
	}
	// Appends after the repair make whole lines again.
	call(t, "POST", ts2.URL+"/v1/charges", chargeBody("k-2", "4242424242424242", 100, true))
	ts2.Close()
	second.Close()
	third, _ := openAt(t, path, Options{})
	if n := len(third.Charges()); n != 2 {
		t.Fatalf("%d charges after the repair, want 2", n)
	}
}

func TestStoreHoldsNoCardData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "acquirer.jsonl")
	_, ts := openAt(t, path, Options{})
	body := chargeBody("k-1", "4242424242424242", 100, true)
	body.CVV = "739"
	call(t, "POST", ts.URL+"/v1/charges", body)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"4242424242424242", `"739"`, "cvv"} {
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("the store holds %q", secret)
		}
	}
}

func setFaults(t *testing.T, url string, f Faults) answer {
	t.Helper()
	return devCall(t, "POST", url+"/_sim/faults", f)
}

func TestFaults(t *testing.T) {
	tests := []struct {
		name        string
		faults      Faults
		wantStatus  int // of a charge; 0: no answer
		wantCharges int
	}{
		{"none serves", Faults{Mode: FaultNone}, 200, 1},
		{"error answers 503 and charges nothing", Faults{Mode: FaultError, Rate: 1}, 503, 0},
		{"hang answers nothing and charges nothing", Faults{Mode: FaultHang, Rate: 1, ForMS: 5000}, 0, 0},
		{"a rate of 0 serves", Faults{Mode: FaultError, Rate: 0}, 200, 1},
		{"an error for this amount answers 503", Faults{Mode: FaultError, Rate: 1, Amount: 100}, 503, 0},
		{"an error for another amount serves", Faults{Mode: FaultError, Rate: 1, Amount: 101}, 200, 1},
		{"a lie charges and answers 503", Faults{Mode: FaultChargeThenError, Rate: 1}, 503, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, ts := newTestServer(t, Options{EnableFaults: true})
			if a := setFaults(t, ts.URL, tc.faults); a.status != 200 {
				t.Fatalf("set faults: %d %s", a.status, a.body)
			}
			body := mustJSON(t, chargeBody("k-1", "4242424242424242", 100, true))
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+"/v1/charges", bytes.NewReader(body))
			resp, err := http.DefaultClient.Do(req)
			status := 0
			if err == nil {
				status = resp.StatusCode
				resp.Body.Close()
			}
			if status != tc.wantStatus {
				t.Errorf("charge answered %d (%v), want %d", status, err, tc.wantStatus)
			}
			if n := len(srv.Charges()); n != tc.wantCharges {
				t.Errorf("%d charges, want %d", n, tc.wantCharges)
			}
			// Inquiries and lists are never faulted: a test counts with them.
			if a := devCall(t, "GET", ts.URL+"/v1/charges", nil); a.status != 200 {
				t.Errorf("list answered %d under faults", a.status)
			}
		})
	}
}

func TestFaultSettingsAreChecked(t *testing.T) {
	_, ts := newTestServer(t, Options{EnableFaults: true})
	tests := []struct {
		name string
		body any
		want int
	}{
		{"unknown mode", Faults{Mode: "explode", Rate: 1}, 400},
		{"rate above one", Faults{Mode: FaultError, Rate: 1.5}, 400},
		{"negative hang", Faults{Mode: FaultHang, Rate: 1, ForMS: -1}, 400},
		{"negative amount", Faults{Mode: FaultError, Rate: 1, Amount: -1}, 400},
		{"not JSON", "mode=error", 400},
		{"clear", Faults{Mode: FaultNone}, 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if a := devCall(t, "POST", ts.URL+"/_sim/faults", tc.body); a.status != tc.want {
				t.Errorf("status %d, want %d: %s", a.status, tc.want, a.body)
			}
		})
	}
	if got := decode[Faults](t, devCall(t, "GET", ts.URL+"/_sim/faults", nil)); got.Mode != FaultNone {
		t.Errorf("mode %q after clearing", got.Mode)
	}
}

func TestFaultsAreOffUnlessEnabled(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	if a := setFaults(t, ts.URL, Faults{Mode: FaultError, Rate: 1}); a.status != http.StatusNotFound {
		t.Errorf("POST /_sim/faults answered %d, want 404", a.status)
	}
	if a := call(t, "GET", ts.URL+"/healthz", nil); a.status != 200 {
		t.Errorf("healthz answered %d", a.status)
	}
}

func TestIgnoringIdempotencyChargesAgain(t *testing.T) {
	srv, ts := newTestServer(t, Options{IgnoreIdempotency: true})
	for range 2 {
		call(t, "POST", ts.URL+"/v1/charges", chargeBody("k-1", "4242424242424242", 100, true))
	}
	if n := len(srv.Charges()); n != 2 {
		t.Errorf("%d charges for one key with idempotency ignored, want 2", n)
	}
}

func TestSlowCardIsApprovedLate(t *testing.T) {
	srv, ts := newTestServer(t, Options{SlowCardDelay: 300 * time.Millisecond})
	start := time.Now()
	c := decode[Charge](t, call(t, "POST", ts.URL+"/v1/charges", chargeBody("k-1", "4000000000000267", 100, true)))
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Errorf("answered after %v, want at least 300ms", took)
	}
	if c.Status != StatusApproved || len(srv.Charges()) != 1 {
		t.Errorf("charge %+v, %d charges; want one approved", c, len(srv.Charges()))
	}
}
