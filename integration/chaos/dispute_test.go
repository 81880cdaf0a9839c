package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/adapters/ledger"
	"github.com/paygate/paygate/internal/dev/simulator"
	"github.com/paygate/paygate/models"
)

// TestDisputeDeadlineAcrossTemporalRestart: a dispute waiting for evidence
// whose deadline passes while the Temporal server is down is lost once the
// server is back (its deadline is a durable timer in the server, not in the
// worker), its money taken, and the ledger true.
func TestDisputeDeadlineAcrossTemporalRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the whole stack and stops its Temporal server")
	}
	t.Parallel()
	s := startStackWith(t, Options{})
	ctx := context.Background()
	rep, err := Run(ctx, s, Plan{Rate: 2, Traffic: 2 * time.Second, Seed: 3, Cards: []string{"4242424242424242"}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed() || rep.Approved == 0 {
		t.Fatalf("the payments before the dispute:\n%s", rep)
	}
	var charge simulator.Charge
	for _, c := range s.Simulator().Charges() {
		if c.CapturedAmount > 0 {
			charge = c
			break
		}
	}
	if charge.ChargeID == "" {
		t.Fatal("no captured charge to dispute")
	}
	const window = 8 * time.Second
	raised := raiseDispute(t, s, map[string]any{"charge_id": charge.ChargeID, "stage": "chargeback",
		"evidence_window_seconds": int64(window / time.Second), "callback_url": s.disputeCallback})
	id := "sim-acquirer:" + raised.DisputeID
	waitDisputeRecord(t, s, id, func(d models.Dispute) bool { return d.Status == "needs_response" && d.Held })

	s.tMu.Lock()
	if err := s.tsrv.Stop(); err != nil {
		s.tMu.Unlock()
		t.Fatalf("stop temporal: %v", err)
	}
	// The deadline passes while the server is down.
	pause(ctx, time.Until(raised.EvidenceDue.Add(2*time.Second)))
	srv, err := s.startTemporal(ctx)
	if err != nil {
		s.tMu.Unlock()
		t.Fatalf("start temporal again: %v", err)
	}
	s.tsrv = srv
	s.tMu.Unlock()

	got := waitDisputeRecord(t, s, id, func(d models.Dispute) bool { return d.Status == "lost" })
	if got.Amount != charge.CapturedAmount || got.Fee != 1500 {
		t.Errorf("lost dispute %+v, want amount %d and fee 1500", got, charge.CapturedAmount)
	}
	// The hold taken: the amount pays the acquirer's side, the fee is the
	// gateway's.
	var held, clearing int64
	db := s.DB.DB.Model(&models.LedgerAccount{}).Select("coalesce(sum(balance), 0)")
	if err := db.Where("kind = ?", models.LedgerDisputeHold).Scan(&held).Error; err != nil || held != 0 {
		t.Errorf("dispute hold %d, %v; want 0", held, err)
	}
	db = s.DB.DB.Model(&models.LedgerAccount{}).Select("coalesce(sum(balance), 0)")
	if err := db.Where("kind = ?", models.LedgerDisputeClearing).Scan(&clearing).Error; err != nil || clearing != charge.CapturedAmount {
		t.Errorf("dispute clearing %d, %v; want %d", clearing, err, charge.CapturedAmount)
	}
	if d := s.Simulator().Disputes(); len(d) != 1 || d[0].Status != simulator.DisputeLost {
		t.Errorf("at the acquirer: %+v", d)
	}
	if v, err := ledger.New(s.DB.DB).Check(ctx); err != nil || len(v) != 0 {
		t.Errorf("ledger check: %+v, %v", v, err)
	}
}

// raiseDispute has the stack's acquirer simulator raise a dispute.
func raiseDispute(t *testing.T, s *Stack, body map[string]any) simulator.Dispute {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, s.SimulatorURL()+"/_sim/disputes", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.simSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var d simulator.Dispute
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&d) != nil {
		t.Fatalf("raise a dispute: HTTP %d", resp.StatusCode)
	}
	if d.CallbackStatus != http.StatusOK {
		t.Fatalf("the dispute's callback was answered %d", d.CallbackStatus)
	}
	return d
}

// waitDisputeRecord waits until the dispute's record is as ok wants it.
func waitDisputeRecord(t *testing.T, s *Stack, id string, ok func(models.Dispute) bool) models.Dispute {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	var last models.Dispute
	for time.Now().Before(deadline) {
		var rows []models.Dispute
		if err := s.DB.DB.Where("id = ?", id).Find(&rows).Error; err == nil && len(rows) == 1 {
			last = rows[0]
			if ok(last) {
				return last
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("dispute %s: %s", id, fmt.Sprintf("%+v", last))
	return last
}
