package simacquirer

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sim "github.com/paygate/paygate/internal/dev/simulator"
	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/recon"
)

// TestSettlement reads the simulator's report of the day after a sale:
// the capture, less the contracted fee, in the matching engine's terms.
func TestSettlement(t *testing.T) {
	srv, client := newEnv(t, sim.Options{}, 5*time.Second)
	c := &Connector{client: client}
	ch, err := c.Charge(t.Context(), connector.ChargeRequest{IdempotencyKey: "k-1", Reference: "1379868670095785984",
		Card: connector.Card{Number: cardVisa, ExpiryMonth: "12", ExpiryYear: "2030", CVV: "123"}, Amount: 10000, Currency: "EUR", Capture: true})
	if err != nil || !ch.Approved() {
		t.Fatalf("sale = %+v, %v", ch, err)
	}
	day := srv.Charges()[0].CapturedAt.UTC().Truncate(24 * time.Hour)
	lines, err := c.Settlement(t.Context(), day.AddDate(0, 0, 1))
	want := recon.Line{No: 1, Reference: ch.ID, OrderKey: "1379868670095785984", Type: recon.Capture, Gross: 10000, Fee: 320, Net: 9680,
		Currency: "EUR", Batch: "B" + day.AddDate(0, 0, 1).Format("20060102")}
	if err != nil || len(lines) != 1 || lines[0] != want {
		t.Errorf("settlement = %+v, %v; want [%+v]", lines, err, want)
	}
	if none, err := c.Settlement(t.Context(), day); err != nil || len(none) != 0 {
		t.Errorf("the day of the sale settles %+v, %v; want nothing (T+1)", none, err)
	}
}

// TestSettlementReportsAsServed: a report longer than the client's bound
// for other answers (1 MiB, which cut a day of 7,000 lines) is read whole,
// and an answer that is not a report is one that cannot be read
// (recon.ErrBadReport), not an outage retried for a day.
func TestSettlementReportsAsServed(t *testing.T) {
	big := func() []byte {
		var b strings.Builder
		b.WriteString(`{"date":"2026-11-20","lines":[`)
		for i := 1; i <= 12000; i++ {
			if i > 1 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"no":%d,"reference":"ch_%07d","order_key":"13798686700957%05d","type":"capture","gross":10000,"fee":320,"net":9680,"currency":"EUR","batch":"B20261120"}`, i, i, i)
		}
		b.WriteString(`]}`)
		return []byte(b.String())
	}()
	tests := []struct {
		name      string
		body      []byte
		wantLines int
		wantBad   bool
	}{
		{"a report of 12,000 lines", big, 12000, false},
		{"not JSON", []byte("<html>maintenance</html>"), 0, true},
		{"a line of the wrong shape", []byte(`{"lines":[{"no":"one"}]}`), 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.body) > maxResponseBytes && tc.wantLines == 0 {
				t.Fatal("the case means a short answer")
			}
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(tc.body)
			}))
			t.Cleanup(ts.Close)
			client, err := NewClient(ts.URL, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			lines, err := (&Connector{client: client}).Settlement(t.Context(), time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC))
			if tc.wantBad {
				if !errors.Is(err, recon.ErrBadReport) {
					t.Fatalf("err = %v, want ErrBadReport", err)
				}
				return
			}
			if err != nil || len(lines) != tc.wantLines || lines[len(lines)-1].No != tc.wantLines {
				t.Fatalf("%d lines, %v; want %d", len(lines), err, tc.wantLines)
			}
		})
	}
	if len(big) <= maxResponseBytes {
		t.Fatalf("the big report is %d bytes, not above the client's %d", len(big), maxResponseBytes)
	}
}
