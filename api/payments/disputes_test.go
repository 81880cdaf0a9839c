package payments

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/models"
)

// disputeReturns is a connector that also reads disputes: a callback or a
// webhook event whose body starts "dispute " and carries X-Ours names the
// dispute after the word (its reference after a space, for callbacks).
type disputeReturns struct{ returns }

func (disputeReturns) ReadDisputeCallback(body []byte, h http.Header) (connector.DisputeCallback, error) {
	if h.Get("X-Ours") == "" {
		return connector.DisputeCallback{}, connector.ErrCallbackUnsigned
	}
	f := strings.Fields(string(body))
	if len(f) != 3 || f[0] != "dispute" {
		return connector.DisputeCallback{}, connector.ErrCallbackMalformed
	}
	return connector.DisputeCallback{DisputeID: f[1], Reference: f[2]}, nil
}

func (disputeReturns) ReadDisputeWebhook(body []byte, h http.Header) (connector.DisputeCallback, error) {
	if h.Get("X-Ours") == "" {
		return connector.DisputeCallback{}, connector.ErrCallbackUnsigned
	}
	f := strings.Fields(string(body))
	if len(f) < 2 || f[0] != "dispute" {
		return connector.DisputeCallback{}, connector.ErrCallbackIrrelevant
	}
	return connector.DisputeCallback{DisputeID: f[1]}, nil
}

func (disputeReturns) ReadWebhook([]byte, http.Header) (connector.ThreeDSCallback, error) {
	return connector.ThreeDSCallback{}, connector.ErrCallbackIrrelevant
}

type disputeReaders struct{}

func (disputeReaders) Get(string) (CallbackReader, error) { return disputeReturns{}, nil }
func (disputeReaders) Names() []string                    { return []string{"sim-acquirer"} }

// woken disputes.
type words struct{ got []string }

func (w *words) Word(_ context.Context, conn, id string) error {
	w.got = append(w.got, conn+" "+id)
	return nil
}

// paidOrders holds one paid order of sim-acquirer.
type paidOrders struct{ someOrders }

func (paidOrders) FindOrderByID(_ context.Context, tx string) (*models.Order, error) {
	switch tx {
	case "1379868670095785984":
		return &models.Order{TransactionID: tx, Connector: "sim-acquirer", PaymentStatus: status.Paid}, nil
	case "1379868670095785985": // its charge's outcome not recorded yet
		return &models.Order{TransactionID: tx, PaymentStatus: status.Pending}, nil
	case "1379868670095785986": // failed before any charge
		return &models.Order{TransactionID: tx, PaymentStatus: status.Failed}, nil
	case "1379868670095785987": // the record is down
		return nil, errors.New("find order: connection refused")
	case "1379868670095785988": // a reference Postgres cannot hold
		return nil, fmt.Errorf("find order: %w", &pgconn.PgError{Code: "22021"})
	}
	return nil, models.ErrNotFound
}

func (disputeReturns) ReadAPMCallback(body []byte, h http.Header) (connector.APMCallback, error) {
	if h.Get("X-Ours") == "" {
		return connector.APMCallback{}, connector.ErrCallbackUnsigned
	}
	f := strings.Fields(string(body))
	if len(f) != 3 || f[0] != "apm" {
		return connector.APMCallback{}, connector.ErrCallbackMalformed
	}
	return connector.APMCallback{PaymentID: f[1], Reference: f[2]}, nil
}

// TestCallbacksWhenTheRecordFails: a signed callback whose order cannot be
// read for a passing fault is a 503, which the acquirer sends again; only
// an order nobody has is the 404 that tells it to stop.
func TestCallbacksWhenTheRecordFails(t *testing.T) {
	tests := []struct {
		name, path, body string
		want             int
	}{
		{"a dispute while the record is down", "/v1/disputes/callback", "dispute dp_1 1379868670095785987", http.StatusServiceUnavailable},
		{"an APM payment while the record is down", "/v1/apm/callback", "apm ap_1 1379868670095785987", http.StatusServiceUnavailable},
		{"a dispute of an order nobody has", "/v1/disputes/callback", "dispute dp_1 1379868670095785999", http.StatusNotFound},
		{"an APM payment of an order nobody has", "/v1/apm/callback", "apm ap_1 1379868670095785999", http.StatusNotFound},
		{"a reference Postgres cannot hold", "/v1/disputes/callback", "dispute dp_1 1379868670095785988", http.StatusNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := handler(nil)
			w := &words{}
			h.Callbacks, h.Gate.Records, h.Disputes = disputeReaders{}, paidOrders{}, w
			req := httptest.NewRequest(http.MethodPost, tc.path, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Ours", "1")
			rec := httptest.NewRecorder()
			h.Gate.Handler().ServeHTTP(rec, req)
			if rec.Code != tc.want || len(w.got) != 0 {
				t.Errorf("answer %d (%s), woken %v; want %d, nothing woken", rec.Code, rec.Body.String(), w.got, tc.want)
			}
		})
	}
}

// TestDisputeCallbacks: issue 30's "tell us through a signed callback,
// which, like every callback, only wakes the workflow": a signed dispute
// callback or webhook event wakes the dispute it names, at the connector
// of its order; a forged or unknown one wakes nothing.
func TestDisputeCallbacks(t *testing.T) {
	tests := []struct {
		name, path, body string
		ours             bool
		want             int
		woken            []string
	}{
		{"callback", "/v1/disputes/callback", "dispute dp_1 1379868670095785984", true, http.StatusOK, []string{"sim-acquirer dp_1"}},
		{"callback unsigned", "/v1/disputes/callback", "dispute dp_1 1379868670095785984", false, http.StatusUnauthorized, nil},
		{"callback of an order nobody has", "/v1/disputes/callback", "dispute dp_1 1", true, http.StatusNotFound, nil},
		{"callback malformed", "/v1/disputes/callback", "dispute", true, http.StatusBadRequest, nil},
		// The acquirer sends it again on a 503, when the order has its outcome.
		{"callback before the order recorded its charge", "/v1/disputes/callback", "dispute dp_1 1379868670095785985", true, http.StatusServiceUnavailable, nil},
		{"callback of an order that charged nothing", "/v1/disputes/callback", "dispute dp_1 1379868670095785986", true, http.StatusUnauthorized, nil},
		{"webhook event", "/v1/webhooks/sim-acquirer", "dispute dp_2", true, http.StatusOK, []string{"sim-acquirer dp_2"}},
		{"webhook event of something else", "/v1/webhooks/sim-acquirer", "payment", true, http.StatusOK, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := handler(nil)
			w := &words{}
			h.Callbacks, h.Gate.Records, h.Disputes = disputeReaders{}, paidOrders{}, w
			req := httptest.NewRequest(http.MethodPost, tc.path, strings.NewReader(tc.body))
			if tc.ours {
				req.Header.Set("X-Ours", "1")
			}
			rec := httptest.NewRecorder()
			h.Gate.Handler().ServeHTTP(rec, req)
			if rec.Code != tc.want || !slices.Equal(w.got, tc.woken) {
				t.Errorf("answer %d (%s), woken %v; want %d, %v", rec.Code, rec.Body.String(), w.got, tc.want, tc.woken)
			}
		})
	}
}
