package payouts

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/api/apitest"
	"github.com/paygate/paygate/api/flows"
	"github.com/paygate/paygate/internal/adapters/rail"
	"github.com/paygate/paygate/models"
)

// knownPayout is a record that holds one payout.
type knownPayout struct{ api.Records }

func (knownPayout) FindPayout(_ context.Context, id string) (*models.Payout, error) {
	if id == "payout/m1/"+requestID {
		return &models.Payout{ID: id}, nil
	}
	return nil, models.ErrPayoutNotFound
}

// waker records the payouts it was asked to wake and answers err.
type waker struct {
	woken []string
	err   error
}

func (w *waker) TransferMoved(_ context.Context, id string) error {
	w.woken = append(w.woken, id)
	return w.err
}

// TestRailCallback: the rail's signed word wakes the recorded payout it
// names, and nothing else; each refusal with its status.
func TestRailCallback(t *testing.T) {
	const secret = "rail-secret-0123456789"
	sign := func(body string) string { return rail.SignCallback(secret, []byte(body)) }
	good := `{"transfer_id":"tr_1","idempotency_key":"payout/m1/` + requestID + `"}`
	tests := []struct {
		name      string
		secret    string
		body      string
		signature string
		wakeErr   error
		want      int
		wantWoken int
	}{
		{"a signed word wakes the payout", secret, good, sign(good), nil, http.StatusOK, 1},
		{"the payout ended already", secret, good, sign(good), flows.ErrPayoutNotRunning, http.StatusOK, 1},
		{"Temporal unreachable: the rail tries again", secret, good, sign(good), errors.New("unavailable"), http.StatusServiceUnavailable, 1},
		{"callbacks not configured", "", good, sign(good), nil, http.StatusNotFound, 0},
		{"a bad signature", secret, good, sign(good + " "), nil, http.StatusUnauthorized, 0},
		{"no signature", secret, good, "", nil, http.StatusUnauthorized, 0},
		{"not a payout's key", secret, `{"transfer_id":"tr_1","idempotency_key":"order/1"}`,
			sign(`{"transfer_id":"tr_1","idempotency_key":"order/1"}`), nil, http.StatusBadRequest, 0},
		{"an unknown payout", secret, `{"transfer_id":"tr_1","idempotency_key":"payout/m1/other"}`,
			sign(`{"transfer_id":"tr_1","idempotency_key":"payout/m1/other"}`), nil, http.StatusNotFound, 0},
		{"not JSON", secret, `tr_1`, sign(`tr_1`), nil, http.StatusBadRequest, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gate := apitest.Gate(apitest.Accounts{}, knownPayout{})
			w := &waker{err: tt.wakeErr}
			gate.Capabilities = []api.Capability{&Handler{Gate: gate, Rail: w, RailSecret: tt.secret}}
			req := httptest.NewRequest(http.MethodPost, "/v1/payout/rail-callback", bytes.NewBufferString(tt.body))
			req.Header.Set("Content-Type", "application/json")
			if tt.signature != "" {
				req.Header.Set(rail.SignatureHeader, tt.signature)
			}
			rec := httptest.NewRecorder()
			gate.Handler().ServeHTTP(rec, req)
			if rec.Code != tt.want || len(w.woken) != tt.wantWoken {
				t.Errorf("HTTP %d (%s), woke %v; want %d, %d woken", rec.Code, rec.Body, w.woken, tt.want, tt.wantWoken)
			}
			if tt.wantWoken == 1 && w.woken[0] != "payout/m1/"+requestID {
				t.Errorf("woke %v", w.woken)
			}
		})
	}
}
