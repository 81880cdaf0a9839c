package simbank

import (
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/recon"
)

// settlementHeader is the first line the bank's report must have.
var settlementHeader = []string{"line", "payment_id", "merchant_ref", "type", "gross", "fee", "net", "currency", "batch"}

// maxSettlementBytes bounds a day's report: 200,000 lines of ~120 bytes.
const maxSettlementBytes = 24 << 20

// Settlement reads the bank's settlement report of a day (GET
// /gw/v2/settlements/{date}, CSV with decimal amounts) as the matching
// engine's lines, amounts in minor units.
func (c *Client) Settlement(ctx context.Context, day time.Time) ([]recon.Line, error) {
	date := day.UTC().Format(time.DateOnly)
	what := "settlement " + date
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.baseURL.String()+apiPrefix+"/settlements/"+date, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: build request: %w", what, err)
	}
	req.Header.Set("Accept", "text/csv")
	status, raw, err := failures.Exchange(ctx, c.http, req, maxSettlementBytes, what)
	if err != nil {
		return nil, err
	}
	if status < 200 || status > 299 {
		kind := connector.ErrRejected
		if status >= 500 {
			kind = connector.ErrUnavailable
		}
		return nil, fmt.Errorf("%s: %w: status %d", what, kind, status)
	}
	rows, err := csv.NewReader(strings.NewReader(string(raw))).ReadAll()
	if err != nil || len(rows) == 0 || !slices.Equal(rows[0], settlementHeader) {
		return nil, fmt.Errorf("%s: %w: not the bank's report", what, recon.ErrBadReport)
	}
	out := make([]recon.Line, 0, len(rows)-1)
	for i, row := range rows[1:] {
		l, err := settlementLine(row)
		if err != nil {
			return nil, fmt.Errorf("%s: line %d: %w: %v", what, i+1, recon.ErrBadReport, err)
		}
		out = append(out, l)
	}
	return out, nil
}

// settlementLine reads one row: amounts in the row's currency.
func settlementLine(row []string) (recon.Line, error) {
	no, err := strconv.Atoi(row[0])
	if err != nil {
		return recon.Line{}, fmt.Errorf("line number %q", row[0])
	}
	cur := row[7]
	var amounts [3]int64
	for j, field := range row[4:7] {
		neg := strings.HasPrefix(field, "-")
		a, err := money.Parse(strings.TrimPrefix(field, "-"), cur)
		if err != nil {
			return recon.Line{}, fmt.Errorf("amount %q in %s", field, cur)
		}
		amounts[j] = a.Minor
		if neg {
			amounts[j] = -a.Minor
		}
	}
	typ := map[string]recon.LineType{"CAPTURE": recon.Capture, "REFUND": recon.Refund}[row[3]]
	if typ == "" {
		return recon.Line{}, fmt.Errorf("type %q", row[3])
	}
	return recon.Line{No: no, Reference: row[1], OrderKey: row[2], Type: typ, Gross: amounts[0], Fee: amounts[1], Net: amounts[2],
		Currency: cur, Batch: row[8]}, nil
}
