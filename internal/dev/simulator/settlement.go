package simulator

import (
	"cmp"
	"net/http"
	"slices"
	"time"
)

// The acquirer's settlement: each day it pays the captures of the day
// SettlementDays before, less its fee (FeeFixed plus FeeBasisPoints of the
// gross, rounded half up), takes back that day's settled refunds and
// disputes' chargebacks (the amount and its fee), and gives back the amount
// of disputes won after their chargeback that day. A
// capture's amount in minor units seeds a discrepancy by its last two
// digits, as the test cards seed outcomes:
//
//	..91  never settled
//	..92  settled a cent short
//	..93  settled twice (a duplicate line)
//	..94  a fee 50 above the schedule
//	..95  settled, and a line of a transaction nobody made beside it
const (
	settleNever     = 91
	settleCentShort = 92
	settleTwice     = 93
	settleFeeAbove  = 94
	settleUnknown   = 95
)

// The acquirer's contracted fee and delay, unless Options say otherwise.
const (
	defaultFeeFixed       = 30
	defaultFeeBasisPoints = 290
	defaultSettlementDays = 1
)

// SettlementLine is one line of a day's settlement report.
type SettlementLine struct {
	No        int    `json:"no"`
	Reference string `json:"reference"` // the charge or refund id
	OrderKey  string `json:"order_key"` // the gateway's reference of the charge
	Type      string `json:"type"`      // capture, refund or chargeback
	Gross     int64  `json:"gross"`
	Fee       int64  `json:"fee"`
	Net       int64  `json:"net"`
	Currency  string `json:"currency"`
	Batch     string `json:"batch"`
}

// SettlementReport is what GET /v1/settlements/{date} answers.
type SettlementReport struct {
	Date  string           `json:"date"`
	Lines []SettlementLine `json:"lines"`
}

// settlementTerms are the acquirer's delay (T+days) and contracted fee.
type settlementTerms struct {
	days                     int
	feeFixed, feeBasisPoints int64
}

// fee is the contracted fee of a capture of gross.
func (s *Server) fee(gross int64) int64 {
	return s.settlement.feeFixed + (gross*s.settlement.feeBasisPoints*2+10000)/20000
}

// Settlement is the settlement report of date: the captures and settled
// refunds of the day SettlementDays before, in the order they happened.
func (s *Server) Settlement(date time.Time) SettlementReport {
	day := date.UTC().Truncate(24 * time.Hour)
	of := day.AddDate(0, 0, -s.settlement.days)
	batch := "B" + day.Format("20060102")
	rep := SettlementReport{Date: day.Format(time.DateOnly), Lines: []SettlementLine{}}
	add := func(l SettlementLine) {
		l.No, l.Batch = len(rep.Lines)+1, batch
		rep.Lines = append(rep.Lines, l)
	}
	onDay := func(t time.Time) bool { return t.UTC().Truncate(24 * time.Hour).Equal(of) }
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.charges {
		if c.CapturedAt.IsZero() || !onDay(c.CapturedAt) || c.CapturedAmount == 0 {
			continue
		}
		l := SettlementLine{Reference: c.ChargeID, OrderKey: c.Reference, Type: "capture", Gross: c.CapturedAmount,
			Fee: s.fee(c.CapturedAmount), Currency: c.Currency}
		switch c.CapturedAmount % 100 {
		case settleNever:
			continue
		case settleCentShort:
			l.Gross--
		case settleFeeAbove:
			l.Fee += 50
		}
		l.Net = l.Gross - l.Fee
		add(l)
		switch c.CapturedAmount % 100 {
		case settleTwice:
			add(l)
		case settleUnknown:
			add(SettlementLine{Reference: "ch_unknown_" + c.ChargeID, OrderKey: "unknown-" + c.Reference, Type: "capture",
				Gross: 500, Fee: s.fee(500), Net: 500 - s.fee(500), Currency: c.Currency})
		}
	}
	for _, r := range s.refunds {
		if r.Status != RefundSucceeded || r.SettledAt == nil || !onDay(*r.SettledAt) {
			continue
		}
		c := s.chargesByID[r.ChargeID]
		ref := ""
		if c != nil {
			ref = c.Reference
		}
		add(SettlementLine{Reference: r.RefundID, OrderKey: ref, Type: "refund", Gross: r.Amount, Net: -r.Amount, Currency: r.Currency})
	}
	// Disputes: the amount taken back with the chargeback fee, and given
	// back when won, in the order they happened.
	type move struct {
		at time.Time
		l  SettlementLine
	}
	var moves []move
	for _, d := range s.disputes {
		if !d.DebitedAt.IsZero() && onDay(d.DebitedAt) {
			moves = append(moves, move{d.DebitedAt, SettlementLine{Reference: d.DisputeID, OrderKey: d.Reference, Type: "chargeback",
				Gross: d.Amount, Fee: chargebackFee, Net: -d.Amount - chargebackFee, Currency: d.Currency}})
		}
		if !d.ReinstatedAt.IsZero() && onDay(d.ReinstatedAt) {
			moves = append(moves, move{d.ReinstatedAt, SettlementLine{Reference: d.DisputeID, OrderKey: d.Reference, Type: "chargeback",
				Gross: -d.Amount, Net: d.Amount, Currency: d.Currency}})
		}
	}
	slices.SortStableFunc(moves, func(a, b move) int {
		return cmp.Or(a.at.Compare(b.at), cmp.Compare(a.l.Reference, b.l.Reference), cmp.Compare(b.l.Gross, a.l.Gross))
	})
	for _, m := range moves {
		add(m.l)
	}
	return rep
}

// handleSettlement answers GET /v1/settlements/{date} (YYYY-MM-DD).
func (s *Server) handleSettlement(w http.ResponseWriter, r *http.Request) {
	date, err := time.Parse(time.DateOnly, r.PathValue("date"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", "date must be YYYY-MM-DD")
		return
	}
	writeJSON(w, http.StatusOK, s.Settlement(date))
}
