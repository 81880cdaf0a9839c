package models_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/paygate/paygate/models"
)

// TestChargeSends: the first note of a key says nothing was sent before,
// every later one that something was; notes older than the cutoff go.
func TestChargeSends(t *testing.T) {
	db, err := models.Open(t.Context(), migratedDB(t), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	steps := []struct {
		name        string
		key         string
		at          time.Time
		wantEarlier bool
	}{
		{"first send", "order/1:authorise", now, false},
		{"the same key again", "order/1:authorise", now, true},
		{"another connector's key", "order/1:authorise/sim-bank", now, false},
		{"an old send", "order/0:authorise", now.Add(-8 * 24 * time.Hour), false},
	}
	for _, s := range steps {
		earlier, err := models.NoteChargeSend(t.Context(), db, s.key, "sim-acquirer", s.at)
		if err != nil || earlier != s.wantEarlier {
			t.Errorf("%s: earlier %v, %v; want %v", s.name, earlier, err, s.wantEarlier)
		}
	}
	if sent, err := models.ChargeSent(t.Context(), db, "order/2:authorise"); err != nil || sent {
		t.Errorf("a key never sent: sent %v, %v", sent, err)
	}
	n, err := models.PruneChargeSends(t.Context(), db, now.Add(-models.ChargeSendsKept))
	if err != nil || n != 1 {
		t.Errorf("pruned %d, %v; want 1", n, err)
	}
	for key, want := range map[string]bool{"order/0:authorise": false, "order/1:authorise": true} {
		if sent, err := models.ChargeSent(t.Context(), db, key); err != nil || sent != want {
			t.Errorf("%s after pruning: sent %v, %v; want %v", key, sent, err, want)
		}
	}
}
