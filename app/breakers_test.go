package app

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/dev/testdb"
	"github.com/paygate/paygate/models"
)

// TestBreakersKeepSeen: while its process runs, a breaker that is not
// closed is marked seen again and again, so the ops view still names it
// days after it opened; the loop ends with its context.
func TestBreakersKeepSeen(t *testing.T) {
	db := testdb.Open(t, "breakers")
	records := models.Records{DB: db}
	opened := time.Now().Add(-72 * time.Hour)
	for _, h := range []models.ConnectorHealth{
		{Connector: "sim-acquirer", Worker: "host/1", State: "open", ChangedAt: opened},
		{Connector: "sim-bank", Worker: "host/1", State: "closed", ChangedAt: opened},
	} {
		if err := records.SetConnectorHealth(t.Context(), &h); err != nil {
			t.Fatal(err)
		}
	}
	b := &breakerRecord{records: records, worker: "host/1", logger: slog.New(slog.DiscardHandler)}
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.keepSeen(ctx, 10*time.Millisecond)
	}()
	seen := func(connector string) time.Time {
		var h models.ConnectorHealth
		if err := db.Where("connector = ? AND worker = ?", connector, "host/1").Take(&h).Error; err != nil {
			t.Fatal(err)
		}
		return h.SeenAt
	}
	// Wait for two marks: the second proves the loop goes on.
	var first time.Time
	for deadline := time.Now().Add(30 * time.Second); ; {
		if s := seen("sim-acquirer"); s.After(opened) {
			if first.IsZero() {
				first = s
			} else if s.After(first) {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the open breaker was not marked seen twice (first mark %v)", first)
		}
		time.Sleep(5 * time.Millisecond)
	}
	stop()
	<-done
	if s := seen("sim-bank"); s.Sub(opened).Abs() > time.Millisecond {
		t.Errorf("the closed breaker was marked seen at %v", s)
	}
}
