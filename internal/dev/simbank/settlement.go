package simbank

import (
	"encoding/csv"
	"net/http"
	"strconv"
	"time"

	"github.com/paygate/paygate/internal/domain/money"
)

// sim-bank's settlement, unlike the first simulator's JSON, is a CSV file
// as many banks send it: one line per capture of the day before (T+1) and
// per refund it paid that day, amounts as decimals in the currency's major
// unit, its fee 0.25 plus 1.50% of a capture (rounded half up). A capture's
// amount seeds a discrepancy by its last two digits, as in the first
// simulator: ..91 never settled, ..92 a cent short, ..93 settled twice,
// ..94 a fee 0.50 above, ..95 beside a line of a payment nobody made.

// The bank's contracted fee, in minor units and basis points.
const (
	FeeFixed       = 25
	FeeBasisPoints = 150
)

// SettlementHeader is the first line of the report.
var SettlementHeader = []string{"line", "payment_id", "merchant_ref", "type", "gross", "fee", "net", "currency", "batch"}

func fee(gross int64) int64 { return FeeFixed + (gross*FeeBasisPoints*2+10000)/20000 }

// Settlement is the report of date as rows, the header first.
func (s *Server) Settlement(date time.Time) [][]string {
	day := date.UTC().Truncate(24 * time.Hour)
	of := day.AddDate(0, 0, -1)
	batch := "SB" + day.Format("20060102")
	rows := [][]string{SettlementHeader}
	add := func(id, ref, typ string, gross, fee int64, currency string) {
		dec := func(minor int64) string { return money.FromMinor(minor, currency).String() }
		net := gross - fee
		if typ == "REFUND" {
			net = -gross
		}
		rows = append(rows, []string{strconv.Itoa(len(rows)), id, ref, typ, dec(gross), dec(fee), dec(net), currency, batch})
	}
	onDay := func(t time.Time) bool { return t.UTC().Truncate(24 * time.Hour).Equal(of) }
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.payments {
		if p.CapturedAt.IsZero() || !onDay(p.CapturedAt) || p.Captured == 0 {
			continue
		}
		gross, f := p.Captured, fee(p.Captured)
		switch p.Captured % 100 {
		case 91:
			continue
		case 92:
			gross--
		case 94:
			f += 50
		}
		add(p.PaymentID, p.MerchantRef, "CAPTURE", gross, f, p.Currency)
		switch p.Captured % 100 {
		case 93:
			add(p.PaymentID, p.MerchantRef, "CAPTURE", gross, f, p.Currency)
		case 95:
			add("pay_unknown_"+p.PaymentID, "unknown-"+p.MerchantRef, "CAPTURE", 500, fee(500), p.Currency)
		}
	}
	for _, r := range s.refunds {
		if r.State != RefundDone || r.SettledAt == nil || !onDay(*r.SettledAt) {
			continue
		}
		ref := ""
		if p := s.paymentsByID[r.PaymentID]; p != nil {
			ref = p.MerchantRef
		}
		add(r.RefundID, ref, "REFUND", r.Amount, 0, r.Currency)
	}
	return rows
}

// handleSettlement answers GET /gw/v2/settlements/{date} (YYYY-MM-DD) as CSV.
func (s *Server) handleSettlement(w http.ResponseWriter, r *http.Request) {
	date, err := time.Parse(time.DateOnly, r.PathValue("date"))
	if err != nil {
		http.Error(w, "date must be YYYY-MM-DD", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/csv")
	_ = csv.NewWriter(w).WriteAll(s.Settlement(date))
}
