package models_test

import (
	"testing"
	"time"

	"github.com/paygate/paygate/models"
)

// TestDisputeEvidenceKeptOnceDatedAnew: a piece is stored once, sealed; the
// same piece sent again is not new but becomes its dispute's newest, so a
// file sent again is sent again; removing an answer's new pieces leaves the
// others and other disputes' alone.
func TestDisputeEvidenceKeptOnceDatedAnew(t *testing.T) {
	db := protectedDB(t)
	ctx := t.Context()
	at := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	piece := func(id, dispute string, minute int) *models.DisputeEvidence {
		return &models.DisputeEvidence{ID: id, DisputeID: dispute, Kind: "file", Name: id + ".pdf", ContentType: "application/pdf",
			Size: 8, Content: []byte("%PDF-" + id), CreatedAt: at.Add(time.Duration(minute) * time.Minute)}
	}
	steps := []struct {
		piece   *models.DisputeEvidence
		wantNew bool
	}{
		{piece("a", "sim:dp_1", 0), true},
		{piece("b", "sim:dp_1", 1), true},
		{piece("a", "sim:dp_1", 2), false}, // a again: now the newest
		{piece("c", "sim:dp_2", 3), true},
	}
	for i, s := range steps {
		isNew, err := models.AddDisputeEvidence(ctx, db, s.piece)
		if err != nil || isNew != s.wantNew {
			t.Fatalf("step %d: new %v, %v; want %v", i, isNew, err, s.wantNew)
		}
	}
	order := func(dispute string) string {
		got, err := models.DisputeEvidenceOf(ctx, db, dispute)
		if err != nil {
			t.Fatal(err)
		}
		out := ""
		for _, e := range got {
			out += e.ID + "=" + string(e.Content) + " "
		}
		return out
	}
	if got := order("sim:dp_1"); got != "b=%PDF-b a=%PDF-a " {
		t.Errorf("evidence of dp_1, oldest first: %q, want b then a", got)
	}
	if err := models.RemoveDisputeEvidence(ctx, db, "sim:dp_1", []string{"b", "c"}); err != nil {
		t.Fatal(err)
	}
	if got, other := order("sim:dp_1"), order("sim:dp_2"); got != "a=%PDF-a " || other != "c=%PDF-c " {
		t.Errorf("after removing b: dp_1 %q, dp_2 %q", got, other)
	}
}
