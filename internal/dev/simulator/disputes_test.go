package simulator

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
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
	raise := devCall(t, http.MethodPost, ts.URL+"/_sim/disputes", map[string]any{"reference": ch.Reference, "callback_url": receiver.URL})
	d := decode[Dispute](t, raise)
	id = d.DisputeID
	if d.Status != DisputeNeedsResponse || d.Stage != DisputeChargeback || d.Amount != 5000 || d.Reason != "fraudulent" ||
		!d.EvidenceDue.After(time.Now().Add(6*24*time.Hour)) {
		t.Fatalf("raised %+v", d)
	}
	steps := []step{
		{"read", http.MethodGet, "/v1/disputes/" + id, nil, false, http.StatusOK, DisputeNeedsResponse},
		{"evidence", http.MethodPost, "/v1/disputes/" + id + "/evidence", map[string]string{"text": "receipt"}, false, http.StatusOK, DisputeUnderReview},
		{"evidence again", http.MethodPost, "/v1/disputes/" + id + "/evidence", map[string]string{"text": "more"}, false, http.StatusConflict, ""},
		{"escalated", http.MethodPost, "/_sim/disputes/" + id + "/decide", map[string]string{"outcome": "pre_arbitration"}, true, http.StatusOK, DisputeNeedsResponse},
		{"winning evidence", http.MethodPost, "/v1/disputes/" + id + "/evidence", map[string]string{"text": "x " + WinningEvidence}, false, http.StatusOK, DisputeWon},
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
