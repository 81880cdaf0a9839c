package models_test

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/paygate/paygate/models"
)

// TestEachReconExceptionReadsEveryPage: an export of the queue holds every
// exception the filter selects, a page at a time (it once stopped at the
// first page's 10,000 without a word), from the filter's AfterID on; the
// reader's error stops it.
func TestEachReconExceptionReadsEveryPage(t *testing.T) {
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
	read := func(f models.ReconExceptionFilter) (sizes []int, all []models.ReconItem) {
		t.Helper()
		err := models.EachReconException(t.Context(), db, f, func(p []models.ReconItem) error {
			sizes = append(sizes, len(p))
			all = append(all, p...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return sizes, all
	}
	sizes, all := read(models.ReconExceptionFilter{})
	if !slices.Equal(sizes, []int{3, 3, 1}) || len(all) != 7 {
		t.Fatalf("pages %v, %d exceptions; want all 7 in pages of 3, 3, 1", sizes, len(all))
	}
	one, err := models.ReconExceptions(t.Context(), db, models.ReconExceptionFilter{Limit: 100})
	if err != nil || len(one) != 3 {
		t.Errorf("one read: %d, %v; want a page of 3", len(one), err)
	}
	if sizes, after := read(models.ReconExceptionFilter{AfterID: all[1].ID}); !slices.Equal(sizes, []int{3, 2}) || after[0].ID != all[2].ID {
		t.Errorf("after the second: pages %v; want the last 5 in pages of 3, 2", sizes)
	}
	stop := errors.New("the reader stops")
	calls := 0
	err = models.EachReconException(t.Context(), db, models.ReconExceptionFilter{}, func([]models.ReconItem) error {
		calls++
		return stop
	})
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("a reader's error: %v after %d pages; want it after one", err, calls)
	}
}
