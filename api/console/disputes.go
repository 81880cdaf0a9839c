package console

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/paygate/paygate/models"
)

// DisputeBook is the record of disputes as the console reads it
// (models.Records).
type DisputeBook interface {
	ConsoleDisputes(ctx context.Context, merchantID, mode string, limit int) ([]models.Dispute, error)
	DisputeRates(ctx context.Context, since time.Time, mode string) ([]models.DisputeRate, error)
}

// errNoDisputes: the console was built without the record of disputes.
var errNoDisputes = errors.New("console: no dispute record configured")

// DefaultDisputeRateWarning is the dispute rate, in basis points of a
// merchant's payments in the last 30 days, above which ops are warned:
// 0.9%, where card schemes start their monitoring programmes.
const DefaultDisputeRateWarning = 90

// disputeDueSoon is how near its deadline a dispute is shown as urgent.
const disputeDueSoon = 48 * time.Hour

// disputeRow is a dispute as the page lists it.
type disputeRow struct {
	models.Dispute
	DueSoon bool
}

// rateRow is a merchant's dispute rate.
type rateRow struct {
	models.DisputeRate
	BasisPoints int64
	Warn        bool
}

// disputesPage lists one mode's disputes, those waiting for evidence first
// by their deadline (a merchant user sees its own), and for ops each
// merchant's dispute rate over the last 30 days, warned above the
// threshold. The dispute test card disputes every capture, so a test
// account's disputes would raise a live merchant's rate: live unasked.
func (s *Server) disputesPage(w http.ResponseWriter, r *http.Request) {
	if s.Disputes == nil {
		s.fail(w, r, "disputes", errNoDisputes)
		return
	}
	u := sessionOf(r.Context()).User
	merchantID := scope(u)
	mode, modes, err := s.pageMode(r, langOf(r), merchantID, "/console/disputes")
	if err != nil {
		s.fail(w, r, "account modes", err)
		return
	}
	list, err := s.Disputes.ConsoleDisputes(r.Context(), merchantID, mode, 200)
	if err != nil {
		s.fail(w, r, "disputes", err)
		return
	}
	now := s.Now()
	d := pageData{Title: t(langOf(r), "disputes"), Mode: mode, Modes: modes}
	for _, x := range list {
		d.Disputes = append(d.Disputes, disputeRow{Dispute: x,
			DueSoon: x.Status == "needs_response" && x.EvidenceDue != nil && x.EvidenceDue.Sub(now) < disputeDueSoon})
	}
	if u.Role == models.RoleOps {
		rates, err := s.Disputes.DisputeRates(r.Context(), now.Add(-30*24*time.Hour), mode)
		if err != nil {
			s.fail(w, r, "dispute rates", err)
			return
		}
		limit := int64(s.DisputeRateWarning)
		if limit <= 0 {
			limit = DefaultDisputeRateWarning
		}
		for _, x := range rates {
			row := rateRow{DisputeRate: x}
			if x.Payments > 0 {
				row.BasisPoints = x.Disputes * 10000 / x.Payments
			}
			row.Warn = x.Disputes > 0 && (x.Payments == 0 || x.Disputes*10000 > limit*x.Payments)
			d.Rates = append(d.Rates, row)
		}
	}
	s.render(w, r, http.StatusOK, "disputes", d)
}
