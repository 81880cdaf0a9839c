package simacquirer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/paygate/paygate/internal/domain/recon"
)

// maxSettlementBytes bounds a day's report: some 400,000 lines. The
// client's bound for other answers (1 MiB) cut a day of 7,000 lines.
const maxSettlementBytes = 64 << 20

// settlementLine is one line of the acquirer's settlement report as it
// sends it.
type settlementLine struct {
	No        int    `json:"no"`
	Reference string `json:"reference"`
	OrderKey  string `json:"order_key"`
	Type      string `json:"type"`
	Gross     int64  `json:"gross"`
	Fee       int64  `json:"fee"`
	Net       int64  `json:"net"`
	Currency  string `json:"currency"`
	Batch     string `json:"batch"`
}

// Settlement reads the acquirer's settlement report of a day (GET
// /v1/settlements/{date}): what it paid for the captures and took back for
// the refunds it settled that day, in the matching engine's terms.
func (c *Connector) Settlement(ctx context.Context, day time.Time) ([]recon.Line, error) {
	date := day.UTC().Format(time.DateOnly)
	var rep struct {
		Lines []settlementLine `json:"lines"`
	}
	err := c.client.doUpTo(ctx, "settlement "+date, http.MethodGet, "/v1/settlements/"+date, nil, &rep, maxSettlementBytes)
	if err != nil {
		var syntax *json.SyntaxError
		var typ *json.UnmarshalTypeError
		if errors.As(err, &syntax) || errors.As(err, &typ) || errors.Is(err, errAnswerTooLong) {
			// An answer that is not the report reads the same next time.
			return nil, fmt.Errorf("%w: %w", recon.ErrBadReport, err)
		}
		return nil, err
	}
	out := make([]recon.Line, 0, len(rep.Lines))
	for _, l := range rep.Lines {
		out = append(out, recon.Line{No: l.No, Reference: l.Reference, OrderKey: l.OrderKey, Type: recon.LineType(l.Type),
			Gross: l.Gross, Fee: l.Fee, Net: l.Net, Currency: l.Currency, Batch: l.Batch})
	}
	return out, nil
}
