package simulator

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestDisputeLifecycle: the test rig raises a dispute of a captured
// charge; every move posts a signed callback naming the dispute; evidence
// with the test words decides it; a decided dispute takes no more.
func TestDisputeLifecycle(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	rc, receiver := newReceiver(t, http.StatusOK)
	ch := decode[Charge](t, call(t, http.MethodPost, ts.URL+"/v1/charges", chargeBody("dispute-1", "4242424242424242", 5000, true)))
	type step struct {
		name, method, path string
		body               any
		dev                bool
		status             int
		want               string // the dispute's status after
	}
	var id string
	// A receipt of the size the gateway takes (512 KiB), nine of them
	// within the answer's bound.
	receipt := append([]byte("%PDF-1.4 the receipt"), make([]byte, 512<<10-20)...)
	receiptFile := map[string]string{"kind": "receipt", "name": "r.pdf", "content_type": "application/pdf",
		"content_base64": base64.StdEncoding.EncodeToString(receipt)}
	raise := devCall(t, http.MethodPost, ts.URL+"/_sim/disputes", map[string]any{"reference": ch.Reference, "callback_url": receiver.URL})
	d := decode[Dispute](t, raise)
	id = d.DisputeID
	if d.Status != DisputeNeedsResponse || d.Stage != DisputeChargeback || d.Amount != 5000 || d.Reason != "fraudulent" || d.Fee != chargebackFee ||
		!d.EvidenceDue.After(time.Now().Add(6*24*time.Hour)) {
		t.Fatalf("raised %+v", d)
	}
	steps := []step{
		{"read", http.MethodGet, "/v1/disputes/" + id, nil, false, http.StatusOK, DisputeNeedsResponse},
		{"evidence", http.MethodPost, "/v1/disputes/" + id + "/evidence", map[string]string{"text": "receipt"}, false, http.StatusOK, DisputeUnderReview},
		{"evidence again", http.MethodPost, "/v1/disputes/" + id + "/evidence", map[string]string{"text": "more"}, false, http.StatusConflict, ""},
		{"escalated", http.MethodPost, "/_sim/disputes/" + id + "/decide", map[string]string{"outcome": "pre_arbitration"}, true, http.StatusOK, DisputeNeedsResponse},
		{"two receipts", http.MethodPost, "/v1/disputes/" + id + "/evidence", map[string]any{"text": "x", "files": []map[string]string{
			receiptFile, receiptFile}}, false, http.StatusBadRequest, ""},
		{"a file without its bytes", http.MethodPost, "/v1/disputes/" + id + "/evidence", map[string]any{"text": "x", "files": []map[string]string{
			{"kind": "receipt", "name": "r.pdf", "content_base64": "not base64!"}}}, false, http.StatusBadRequest, ""},
		{"winning evidence", http.MethodPost, "/v1/disputes/" + id + "/evidence", map[string]any{"text": "x " + WinningEvidence,
			"files": []map[string]string{receiptFile}}, false, http.StatusOK, DisputeWon},
		{"accepted after the end", http.MethodPost, "/v1/disputes/" + id + "/accept", struct{}{}, false, http.StatusConflict, ""},
		{"an inquiry's close of a chargeback", http.MethodPost, "/_sim/disputes/" + id + "/decide", map[string]string{"outcome": "closed"}, true, http.StatusConflict, ""},
		{"no such dispute", http.MethodGet, "/v1/disputes/dp_none", nil, false, http.StatusNotFound, ""},
		{"the rig without its secret", http.MethodPost, "/_sim/disputes", map[string]any{"reference": ch.Reference}, false, http.StatusUnauthorized, ""},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			var a answer
			if s.dev {
				a = devCall(t, s.method, ts.URL+s.path, s.body)
			} else {
				a = call(t, s.method, ts.URL+s.path, s.body)
			}
			if a.status != s.status {
				t.Fatalf("HTTP %d %s, want %d", a.status, a.body, s.status)
			}
			if s.want != "" {
				if got := decode[Dispute](t, a); got.Status != s.want {
					t.Errorf("status %s, want %s", got.Status, s.want)
				}
			}
		})
	}
	// The winning answer's file arrived whole.
	sum := sha256.Sum256(receipt)
	if got := decode[Dispute](t, call(t, http.MethodGet, ts.URL+"/v1/disputes/"+id, nil)); len(got.EvidenceFiles) != 1 ||
		got.EvidenceFiles[0] != (EvidenceFileSeen{Kind: "receipt", Name: "r.pdf", Size: len(receipt), SHA256: hex.EncodeToString(sum[:])}) {
		t.Errorf("evidence files %+v, want the receipt", got.EvidenceFiles)
	}
	// raised, evidence, escalated, winning evidence: four moves, four callbacks.
	cbs := rc.callbacks()
	if len(cbs) != 4 {
		t.Fatalf("%d callbacks, want 4", len(cbs))
	}
	for _, cb := range cbs {
		mac := hmac.New(sha256.New, []byte(defaultSecret))
		mac.Write(cb.body)
		var body disputeCallback
		if cb.signature != hex.EncodeToString(mac.Sum(nil)) || json.Unmarshal(cb.body, &body) != nil || body.DisputeID != id ||
			body.Reference != ch.Reference {
			t.Errorf("callback %s signed %s", cb.body, cb.signature)
		}
	}
}

// TestDisputeTestCard: a capture of 4000000000000259 is disputed on its
// own after DisputeAfter, other cards never.
func TestDisputeTestCard(t *testing.T) {
	rc, receiver := newReceiver(t, http.StatusOK)
	_, ts := newTestServer(t, Options{DisputeAfter: 10 * time.Millisecond, DisputeCallbackURL: receiver.URL})
	disputed := decode[Charge](t, call(t, http.MethodPost, ts.URL+"/v1/charges", chargeBody("dc-1", "4000000000000259", 700, true)))
	call(t, http.MethodPost, ts.URL+"/v1/charges", chargeBody("dc-2", "4242424242424242", 800, true))
	deadline := time.Now().Add(5 * time.Second)
	for len(rc.callbacks()) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cbs := rc.callbacks()
	var body disputeCallback
	if len(cbs) != 1 || json.Unmarshal(cbs[0].body, &body) != nil || body.Reference != disputed.Reference {
		t.Fatalf("callbacks %d, first %s; want one for the dispute card's charge", len(cbs), cbs)
	}
	if d := decode[Dispute](t, call(t, http.MethodGet, ts.URL+"/v1/disputes/"+body.DisputeID, nil)); d.Amount != 700 {
		t.Errorf("dispute %+v", d)
	}
}

// scriptedReceiver answers callbacks with the statuses of its script in
// turn, the last one from then on.
type scriptedReceiver struct {
	mu     sync.Mutex
	script []int
	got    int
}

func (sr *scriptedReceiver) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	sr.mu.Lock()
	defer sr.mu.Unlock()
	w.WriteHeader(sr.script[min(sr.got, len(sr.script)-1)])
	sr.got++
}

// settledCallback waits until the dispute's callback is taken or given up.
func settledCallback(t *testing.T, srv *Server, id string) Dispute {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		for _, d := range srv.Disputes() {
			if d.DisputeID == id && !d.CallbackPending {
				return d
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("dispute %s: callback still pending", id)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestDisputeCallbackRetried: a callback the gateway could not take (no
// answer, a 5xx) is sent again until it is taken; a 4xx is the gateway's
// final word.
func TestDisputeCallbackRetried(t *testing.T) {
	tests := []struct {
		name         string
		script       []int
		wantStatus   int
		wantAttempts int
	}{
		{"taken at once", []int{http.StatusOK}, http.StatusOK, 1},
		{"down twice, then taken", []int{http.StatusServiceUnavailable, http.StatusBadGateway, http.StatusOK}, http.StatusOK, 3},
		{"refused for good", []int{http.StatusNotFound, http.StatusOK}, http.StatusNotFound, 1},
		{"down, then refused", []int{http.StatusInternalServerError, http.StatusUnauthorized}, http.StatusUnauthorized, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, ts := newTestServer(t, Options{})
			receiver := httptest.NewServer(&scriptedReceiver{script: tt.script})
			t.Cleanup(receiver.Close)
			ch := decode[Charge](t, call(t, http.MethodPost, ts.URL+"/v1/charges", chargeBody("retry-1", "4242424242424242", 5000, true)))
			d := decode[Dispute](t, devCall(t, http.MethodPost, ts.URL+"/_sim/disputes", map[string]any{"reference": ch.Reference, "callback_url": receiver.URL}))
			if d.CallbackAttempts != 1 || d.CallbackStatus != tt.script[0] {
				t.Errorf("raised with callback %d after %d attempts, want %d after 1", d.CallbackStatus, d.CallbackAttempts, tt.script[0])
			}
			got := settledCallback(t, srv, d.DisputeID)
			if got.CallbackStatus != tt.wantStatus || got.CallbackAttempts != tt.wantAttempts {
				t.Errorf("callback %d after %d attempts, want %d after %d", got.CallbackStatus, got.CallbackAttempts, tt.wantStatus, tt.wantAttempts)
			}
		})
	}
}

// TestDisputesSurviveARestart: disputes are kept in the store; one whose
// callback the gateway had not taken is sent again after the restart, and
// a capture of the dispute card not yet disputed is disputed then.
func TestDisputesSurviveARestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "acquirer.jsonl")
	down := httptest.NewServer(&scriptedReceiver{script: []int{http.StatusServiceUnavailable}})
	t.Cleanup(down.Close)
	first, ts := openAt(t, path, Options{})
	ch := decode[Charge](t, call(t, http.MethodPost, ts.URL+"/v1/charges", chargeBody("restart-1", "4242424242424242", 5000, true)))
	d := decode[Dispute](t, devCall(t, http.MethodPost, ts.URL+"/_sim/disputes", map[string]any{"reference": ch.Reference, "callback_url": down.URL}))
	// The dispute card, captured while nobody is told of disputes.
	card := decode[Charge](t, call(t, http.MethodPost, ts.URL+"/v1/charges", chargeBody("restart-2", "4000000000000259", 700, true)))
	ts.Close()
	first.Close()

	// The gateway is up again at the same address: the callback now goes
	// through.
	up := &scriptedReceiver{script: []int{http.StatusOK}}
	down.Config.Handler = up
	second, _ := openAt(t, path, Options{DisputeAfter: time.Millisecond, DisputeCallbackURL: down.URL})
	got := settledCallback(t, second, d.DisputeID)
	if got.CallbackStatus != http.StatusOK || got.CallbackAttempts < 2 || got.Amount != 5000 || got.Status != DisputeNeedsResponse {
		t.Errorf("after the restart %+v", got)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var byCard []Dispute
		for _, d := range second.Disputes() {
			if d.ChargeID == card.ChargeID {
				byCard = append(byCard, d)
			}
		}
		if len(byCard) == 1 {
			if d := settledCallback(t, second, byCard[0].DisputeID); d.CallbackStatus != http.StatusOK || d.Amount != 700 {
				t.Errorf("the dispute card's dispute %+v", d)
			}
			break
		}
		if len(byCard) > 1 || time.Now().After(deadline) {
			t.Fatalf("the dispute card's charge has %d disputes, want 1", len(byCard))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
