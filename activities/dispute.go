package activities

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"go.temporal.io/sdk/temporal"

	"github.com/paygate/paygate/internal/adapters/ledger"
	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/dispute"
	"github.com/paygate/paygate/internal/domain/notify"
	"github.com/paygate/paygate/models"
)

// DisputeConnector is a connector whose acquirer raises disputes and takes
// the merchant's answer.
type DisputeConnector interface {
	GetDispute(ctx context.Context, id string) (connector.Dispute, error)
	SubmitDisputeEvidence(ctx context.Context, id string, ev connector.Evidence) (connector.Dispute, error)
	AcceptDispute(ctx context.Context, id string) (connector.Dispute, error)
}

// DisputeRecords is the record as disputes use it (models.Records).
type DisputeRecords interface {
	FindOrderByID(ctx context.Context, transactionID string) (*models.Order, error)
	SaveDispute(ctx context.Context, d *models.Dispute) error
	DisputeEvidenceOf(ctx context.Context, disputeID string) ([]models.DisputeEvidence, error)
	InsertNotification(ctx context.Context, n *models.Notification) error
}

// DisputeLedger holds, releases and takes disputes' money
// (internal/adapters/ledger.Ledger).
type DisputeLedger interface {
	HoldDispute(ctx context.Context, h ledger.DisputeHold) (ledger.Entry, error)
	ReleaseDispute(ctx context.Context, reference string) (ledger.Entry, error)
	TakeDispute(ctx context.Context, reference string, fee int64) (ledger.Entry, error)
}

// DisputeActivities run a dispute's steps: asking the acquirer, the record,
// the ledger and the merchant's notifications.
type DisputeActivities struct {
	Connectors Connectors
	Records    DisputeRecords
	Ledger     DisputeLedger
	Logger     *slog.Logger
}

// ErrTypeDisputeRefused: the acquirer or the ledger refused a dispute step
// for its values; the same step can never succeed.
const ErrTypeDisputeRefused = "DisputeRefused"

// DisputeAsk names a dispute at its connector.
type DisputeAsk struct {
	Connector string
	DisputeID string
}

// AskDispute asks the acquirer where a dispute stands: the only word the
// dispute's workflow takes. Transport errors are retried.
func (a *DisputeActivities) AskDispute(ctx context.Context, in DisputeAsk) (connector.Dispute, error) {
	c, err := a.disputeConnector(in.Connector)
	if err != nil {
		return connector.Dispute{}, err
	}
	d, err := c.GetDispute(ctx, in.DisputeID)
	return d, a.acquirerErr("ask dispute "+in.DisputeID, err)
}

// DisputeAnswer is the merchant's answer to a dispute: its evidence, read
// from the record (where it is sealed) by the activity, never carried in
// the workflow's history.
type DisputeAnswer struct {
	Connector string
	DisputeID string
	// RecordID is the dispute's id in the record, whose evidence is sent.
	RecordID string
}

// SubmitDisputeEvidence sends the merchant's recorded evidence to the
// acquirer: every text, and the newest file of each kind with its bytes (a
// later answer's file of a kind replaces the earlier one).
func (a *DisputeActivities) SubmitDisputeEvidence(ctx context.Context, in DisputeAnswer) (connector.Dispute, error) {
	c, err := a.disputeConnector(in.Connector)
	if err != nil {
		return connector.Dispute{}, err
	}
	evidence, err := a.Records.DisputeEvidenceOf(ctx, in.RecordID)
	if err != nil {
		return connector.Dispute{}, err
	}
	d, err := c.SubmitDisputeEvidence(ctx, in.DisputeID, evidenceOf(evidence))
	return d, a.acquirerErr("submit evidence "+in.DisputeID, err)
}

// evidenceOf is what the acquirer gets of a dispute's recorded evidence,
// oldest first: the texts one a line, and the newest file of each kind, in
// dispute.FileKinds' order. A text file goes as text: acquirers take
// documents and images as files (Stripe refuses text files).
func evidenceOf(recorded []models.DisputeEvidence) connector.Evidence {
	var texts []string
	newest := map[string]models.DisputeEvidence{}
	for _, e := range recorded {
		if e.Kind == "text" || strings.HasPrefix(e.ContentType, "text/plain") {
			texts = append(texts, e.Name+": "+string(e.Content))
			continue
		}
		newest[dispute.FileKind(e.Name)] = e
	}
	out := connector.Evidence{Text: strings.Join(texts, "\n")}
	for _, kind := range dispute.FileKinds {
		if e, ok := newest[kind]; ok {
			out.Files = append(out.Files, connector.EvidenceFile{Kind: kind, Name: e.Name, ContentType: e.ContentType, Content: e.Content})
		}
	}
	return out
}

// AcceptDispute gives the dispute up at the acquirer.
func (a *DisputeActivities) AcceptDispute(ctx context.Context, in DisputeAsk) (connector.Dispute, error) {
	c, err := a.disputeConnector(in.Connector)
	if err != nil {
		return connector.Dispute{}, err
	}
	d, err := c.AcceptDispute(ctx, in.DisputeID)
	return d, a.acquirerErr("accept dispute "+in.DisputeID, err)
}

// DisputedOrder is the order a dispute names, as the record has it.
type DisputedOrder struct {
	Found         bool
	TransactionID string
	MerchantID    string
	AccountID     string
	OrderNo       string
	NotifyURL     string
}

// FindDisputedOrder finds the order a dispute names; Found is false when
// the record has none (a dispute of a charge not ours).
func (a *DisputeActivities) FindDisputedOrder(ctx context.Context, transactionID string) (DisputedOrder, error) {
	o, err := a.Records.FindOrderByID(ctx, transactionID)
	if errors.Is(err, models.ErrNotFound) {
		return DisputedOrder{}, nil
	}
	if err != nil {
		return DisputedOrder{}, err
	}
	return DisputedOrder{Found: true, TransactionID: o.TransactionID, MerchantID: o.MerchantID, AccountID: o.AccountID,
		OrderNo: o.OrderNo, NotifyURL: o.Details.NotifyURL}, nil
}

// DisputeRecord is a dispute as its workflow records it (models.Dispute).
type DisputeRecord struct {
	ID, Connector, ConnectorRef, WorkflowID       string
	TransactionID, MerchantID, AccountID, OrderNo string
	Currency                                      string
	Amount, Fee                                   int64
	Reason, Stage, Status                         string
	EvidenceDue                                   *time.Time
	Held                                          bool
	CreatedAt, UpdatedAt                          time.Time
}

// SaveDispute writes the dispute as its workflow knows it. The reason is
// the acquirer's free text: it is kept to what its column holds, as text,
// rather than leave the dispute unrecorded (and unanswerable) for it.
func (a *DisputeActivities) SaveDispute(ctx context.Context, d DisputeRecord) error {
	return storeError(a.Records.SaveDispute(ctx, &models.Dispute{ID: d.ID, Connector: d.Connector, ConnectorRef: d.ConnectorRef,
		WorkflowID: d.WorkflowID, TransactionID: d.TransactionID, MerchantID: d.MerchantID, AccountID: d.AccountID,
		OrderNo: d.OrderNo, Currency: d.Currency, Amount: d.Amount, Fee: d.Fee, Reason: recordText(d.Reason, models.DisputeReasonSize), Stage: d.Stage,
		Status: d.Status, EvidenceDue: d.EvidenceDue, Held: d.Held, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt}))
}

// recordText is s as a varchar(n) column takes it: valid UTF-8, no
// control characters, at most n characters.
func recordText(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	if utf8.RuneCountInString(s) > n {
		s = string([]rune(s)[:n])
	}
	return s
}

// DisputeMoney is a dispute's money: what the ledger holds under
// Reference (the dispute's record id).
type DisputeMoney struct {
	Reference  string
	OrderKey   string
	MerchantID string
	AccountID  string
	Currency   string
	Amount     int64
	Fee        int64
}

// HoldDispute holds the dispute's amount and fee (ledger.HoldDispute).
func (a *DisputeActivities) HoldDispute(ctx context.Context, in DisputeMoney) error {
	_, err := a.Ledger.HoldDispute(ctx, ledger.DisputeHold{Reference: in.Reference, OrderKey: in.OrderKey,
		MerchantID: in.MerchantID, AccountID: in.AccountID, Currency: in.Currency, Amount: in.Amount, Fee: in.Fee})
	return a.ledgerErr("hold", in.Reference, err)
}

// ReleaseDispute gives a won dispute's hold back.
func (a *DisputeActivities) ReleaseDispute(ctx context.Context, in DisputeMoney) error {
	_, err := a.Ledger.ReleaseDispute(ctx, in.Reference)
	return a.ledgerErr("release", in.Reference, err)
}

// TakeDispute makes a lost dispute's hold final: the amount to the
// acquirer, the fee to the gateway.
func (a *DisputeActivities) TakeDispute(ctx context.Context, in DisputeMoney) error {
	_, err := a.Ledger.TakeDispute(ctx, in.Reference, in.Fee)
	return a.ledgerErr("take", in.Reference, err)
}

// DisputeNotice is one notification of a dispute to the merchant.
type DisputeNotice struct {
	NotifyID      string
	TransactionID string
	MerchantID    string
	AccountID     string
	OrderNo       string
	URL           string
	Fields        map[string]string
}

// RecordDisputeNotice records a dispute's notification before its
// delivery; a repeat finds it recorded.
func (a *DisputeActivities) RecordDisputeNotice(ctx context.Context, in DisputeNotice) error {
	err := a.Records.InsertNotification(ctx, &models.Notification{NotifyID: in.NotifyID, TransactionID: in.TransactionID,
		MerchantID: in.MerchantID, AccountID: in.AccountID, OrderNo: in.OrderNo, Seq: 1, NotifyType: notify.TypeDispute,
		URL: in.URL, Fields: in.Fields, Status: notify.Pending, CreatedAt: time.Now()})
	return storeError(err)
}

func (a *DisputeActivities) disputeConnector(name string) (DisputeConnector, error) {
	c, err := a.Connectors.Get(name)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError("connector not configured", ErrTypeDisputeRefused, err)
	}
	dc, ok := c.(DisputeConnector)
	if !ok {
		return nil, temporal.NewNonRetryableApplicationError(name+" raises no disputes", ErrTypeDisputeRefused, nil)
	}
	return dc, nil
}

// acquirerErr keeps transport failures retryable and makes the acquirer's
// refusals final: a refusal of the values, a dispute it does not know, and
// a conflict with the dispute's state there (decided a moment ago, or an
// answer it already took), which no retry can change.
func (a *DisputeActivities) acquirerErr(what string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, connector.ErrRejected) || errors.Is(err, connector.ErrNotFound) || errors.Is(err, connector.ErrConflict) {
		return temporal.NewNonRetryableApplicationError(what+": "+err.Error(), ErrTypeDisputeRefused, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// ledgerErr makes the ledger's refusals of a posting's values final.
func (a *DisputeActivities) ledgerErr(step, reference string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, ledger.ErrInvalid) || errors.Is(err, ledger.ErrReferenceConflict) || errors.Is(err, ledger.ErrDisputeClosed) ||
		errors.Is(err, ledger.ErrDisputeNotHeld) {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("dispute %s %s: %v", step, reference, err), ErrTypeDisputeRefused, err)
	}
	return fmt.Errorf("dispute %s %s: %w", step, reference, err)
}
