package app

import (
	"context"

	"github.com/paygate/paygate/api/flows"
	"github.com/paygate/paygate/internal/adapters/payoutrerun"
	"github.com/paygate/paygate/models"
)

// PayoutReruns returns finance's re-run service: it starts each re-run with
// flows.StartPayoutRun, a new run of the payout's own workflow id.
func (g *Gateway) PayoutReruns() *payoutrerun.Service {
	start := func(ctx context.Context, p *models.Payout) (string, error) {
		return flows.StartPayoutRun(ctx, g.Temporal, p, g.Config.NotifySchedule, g.Config.Payouts.RailCallbackSecret != "")
	}
	return payoutrerun.New(g.DB, start, g.Logger.With("component", "payout-rerun"))
}
