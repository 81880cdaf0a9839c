package railsim

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// gateway receives the rail's callbacks, answering them with its script's
// statuses in turn (the last from then on).
type gateway struct {
	mu     sync.Mutex
	script []int
	got    []Callback
	sigOK  []bool
	ch     chan struct{}
}

func (g *gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var cb Callback
	_ = json.Unmarshal(body, &cb)
	g.mu.Lock()
	status := g.script[min(len(g.got), len(g.script)-1)]
	g.got = append(g.got, cb)
	g.sigOK = append(g.sigOK, r.Header.Get(SignatureHeader) == Sign("rail-secret", body))
	g.mu.Unlock()
	w.WriteHeader(status)
	g.ch <- struct{}{}
}

// TestCallbacks: with a callback URL, a transfer's attempt is decided at
// its settle time and the gateway told, signed, naming the transfer; a
// callback the gateway could not take is sent again, a 4xx is final. The
// transfer is decided when the callback comes, not only when read.
func TestCallbacks(t *testing.T) {
	tests := []struct {
		name       string
		script     []int
		iban       string
		wantCalls  int
		wantStatus string
	}{
		{"taken at once", []int{http.StatusOK}, IBANCompletes, 1, StatusCompleted},
		{"the gateway down twice, then taking it", []int{http.StatusServiceUnavailable, http.StatusBadGateway, http.StatusOK}, IBANCompletes, 3, StatusCompleted},
		{"refused for good", []int{http.StatusNotFound}, IBANCompletes, 1, StatusCompleted},
		{"a failed transfer is told of too", []int{http.StatusOK}, IBANAccountClosed, 1, StatusFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &gateway{script: tt.script, ch: make(chan struct{}, 16)}
			gw := httptest.NewServer(g)
			t.Cleanup(gw.Close)
			srv, err := NewServer(Options{Logger: slog.New(slog.DiscardHandler), SettleDelay: 20 * time.Millisecond,
				CallbackURL: gw.URL, Secret: "rail-secret"})
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(srv.Handler())
			t.Cleanup(func() { ts.Close(); _ = srv.Close() })
			tr := submit(t, ts, "payout/m1/cb-1", transferTo(tt.iban, 5000), http.StatusAccepted)
			for range tt.wantCalls {
				select {
				case <-g.ch:
				case <-time.After(10 * time.Second):
					t.Fatalf("%d callbacks, want %d", len(g.got), tt.wantCalls)
				}
			}
			g.mu.Lock()
			defer g.mu.Unlock()
			for i, cb := range g.got {
				if cb.TransferID != tr.ID || cb.IdempotencyKey != "payout/m1/cb-1" || !g.sigOK[i] {
					t.Errorf("callback %d: %+v, signed %v", i+1, cb, g.sigOK[i])
				}
			}
			// Decided when told, before anyone reads it.
			srv.mu.Lock()
			status := srv.byID[tr.ID].Status
			srv.mu.Unlock()
			if status != tt.wantStatus {
				t.Errorf("status when told %s, want %s", status, tt.wantStatus)
			}
		})
	}
}

// TestNoCallbacksWithoutAURL: without a callback URL the rail calls nobody
// and decides a transfer when it is read, as before.
func TestNoCallbacksWithoutAURL(t *testing.T) {
	clk := newClock()
	srv, ts := newRail(t, "", clk)
	tr := submit(t, ts, "payout/m1/nocb", transferTo(IBANCompletes, 5000), http.StatusAccepted)
	srv.mu.Lock()
	timers := len(srv.timers)
	srv.mu.Unlock()
	if timers != 0 {
		t.Errorf("%d timers without a callback URL", timers)
	}
	clk.Advance(time.Hour)
	if got := get(t, ts, tr.ID); got.Status != StatusCompleted {
		t.Errorf("status %s after its settle time, want completed", got.Status)
	}
}
