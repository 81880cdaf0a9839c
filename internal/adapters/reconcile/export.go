package reconcile

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/models"
)

// decimal writes minor units of currency as the currency's decimal.
func decimal(minor int64, currency string) string {
	if currency == "" {
		return strconv.FormatInt(minor, 10)
	}
	return money.FromMinor(minor, currency).ExtendedString()
}

// text keeps a free-text cell (an acquirer's reference, a note) from being
// read as a formula by a spreadsheet.
func text(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// WriteTotalsCSV writes the totals per connector, day, source, class and
// currency as CSV, amounts as decimals of their currency.
func WriteTotalsCSV(w io.Writer, totals []models.ReconClassTotal) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"day", "connector", "source", "class", "currency", "count", "gross", "fee", "net"})
	for _, t := range totals {
		_ = cw.Write([]string{t.Day.UTC().Format(time.DateOnly), t.Connector, t.Source, t.Class, t.Currency,
			strconv.FormatInt(t.Count, 10), decimal(t.Gross, t.Currency), decimal(t.Fee, t.Currency), decimal(t.Net, t.Currency)})
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write totals: %w", err)
	}
	return nil
}

// ItemsCSV writes reconciliation items (exceptions, most often) as CSV, a
// page at a time, amounts as decimals of their currency.
type ItemsCSV struct {
	cw *csv.Writer
}

// NewItemsCSV returns an ItemsCSV on w; its header goes with the first
// Write.
func NewItemsCSV(w io.Writer) *ItemsCSV {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"id", "day", "connector", "source", "line", "class", "status", "type", "order_key", "reference",
		"merchant_id", "account_id", "currency", "gross", "fee", "net", "detail", "posted", "post_error", "note", "acted_by", "acted_at"})
	return &ItemsCSV{cw: cw}
}

// Write writes items and flushes them to the writer.
func (c *ItemsCSV) Write(items []models.ReconItem) error {
	for _, it := range items {
		acted := ""
		if it.ActedAt != nil {
			acted = it.ActedAt.UTC().Format(time.RFC3339)
		}
		_ = c.cw.Write([]string{strconv.FormatInt(it.ID, 10), it.Day.UTC().Format(time.DateOnly), it.Connector, it.Source,
			strconv.Itoa(it.LineNo), it.Class, it.Status, it.Type, text(it.OrderKey), text(it.Reference), it.MerchantID, it.AccountID,
			it.Currency, decimal(it.Gross, it.Currency), decimal(it.Fee, it.Currency), decimal(it.Net, it.Currency),
			text(it.Detail), it.Posted, text(it.PostError), text(it.Note), text(it.ActedBy), acted})
	}
	c.cw.Flush()
	if err := c.cw.Error(); err != nil {
		return fmt.Errorf("write items: %w", err)
	}
	return nil
}

// WriteStatementCSV writes a merchant's settlement statement as CSV.
func WriteStatementCSV(w io.Writer, lines []models.StatementLine) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"day", "connector", "type", "currency", "count", "gross", "fee", "net"})
	for _, l := range lines {
		_ = cw.Write([]string{l.Day.UTC().Format(time.DateOnly), l.Connector, l.Type, l.Currency, strconv.FormatInt(l.Count, 10),
			decimal(l.Gross, l.Currency), decimal(l.Fee, l.Currency), decimal(l.Net, l.Currency)})
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write statement: %w", err)
	}
	return nil
}
