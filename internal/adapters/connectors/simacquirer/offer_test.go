package simacquirer

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	sim "github.com/paygate/paygate/internal/dev/simulator"
	"github.com/paygate/paygate/internal/domain/apm"
	"github.com/paygate/paygate/internal/domain/card"
)

// TestOffer: every card brand, and exactly the APMs the simulator's
// provider says it runs, each one of the apm table.
func TestOffer(t *testing.T) {
	o := (&Connector{}).Offer()
	if !slices.Equal(o.CardBrands, card.Brands()) {
		t.Errorf("CardBrands = %v, want %v", o.CardBrands, card.Brands())
	}
	for _, name := range o.APMs {
		if _, ok := apm.Lookup(name); !ok {
			t.Errorf("APM %s is not in the apm table", name)
		}
	}

	srv := sim.NewServer(sim.Options{Logger: slog.New(slog.DiscardHandler), Secret: testSecret})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		srv.Close()
		ts.Close()
	})
	resp, err := http.Get(ts.URL + "/v1/apm/methods")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Methods []struct {
			Method string `json:"method"`
		} `json:"methods"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	var runs []string
	for _, m := range list.Methods {
		runs = append(runs, m.Method)
	}
	slices.Sort(runs)
	if !slices.Equal(o.APMs, runs) {
		t.Errorf("APMs = %v, the simulator's provider runs %v", o.APMs, runs)
	}
}
