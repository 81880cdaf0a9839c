package models_test

import (
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/paygate/paygate/models"
)

// TestAllReconExceptionsReadsEveryPage: an export of the queue holds every
// exception the filter selects, across pages (it stopped at the first
// page's 10,000 without a word), from the filter's AfterID on.
func TestAllReconExceptionsReadsEveryPage(t *testing.T) {
	db, err := models.Open(t.Context(), migratedDB(t), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	page := models.ReconExceptionPage
	models.ReconExceptionPage = 3
	t.Cleanup(func() { models.ReconExceptionPage = page })
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	var items []models.ReconItem
	for i := 1; i <= 7; i++ {
		items = append(items, models.ReconItem{Connector: "sim-bank", Day: day, ItemKey: fmt.Sprintf("line/%d", i), Source: models.ReconSourceLine,
			LineNo: i, Type: "capture", Currency: "EUR", Class: "missing_here", Status: models.ReconOpen})
	}
	if err := models.SaveReconRun(t.Context(), db, &models.ReconRun{Connector: "sim-bank", Day: day, RanAt: time.Now()}, items); err != nil {
		t.Fatal(err)
	}
	all, err := models.AllReconExceptions(t.Context(), db, models.ReconExceptionFilter{})
	if err != nil || len(all) != 7 {
		t.Fatalf("%d exceptions, %v; want all 7 across pages of 3", len(all), err)
	}
	one, err := models.ReconExceptions(t.Context(), db, models.ReconExceptionFilter{Limit: 100})
	if err != nil || len(one) != 3 {
		t.Errorf("one read: %d, %v; want a page of 3", len(one), err)
	}
	after, err := models.AllReconExceptions(t.Context(), db, models.ReconExceptionFilter{AfterID: all[1].ID})
	if err != nil || len(after) != 5 || after[0].ID != all[2].ID {
		t.Errorf("after the second: %d, %v; want the last 5", len(after), err)
	}
}
