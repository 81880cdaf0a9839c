package activities

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/dispute"
	"github.com/paygate/paygate/models"
)

// refusingAcquirer is a connector whose dispute calls all fail with err.
type refusingAcquirer struct {
	Connector
	err error
}

func (r refusingAcquirer) GetDispute(context.Context, string) (connector.Dispute, error) {
	return connector.Dispute{}, r.err
}

func (r refusingAcquirer) SubmitDisputeEvidence(context.Context, string, connector.Evidence) (connector.Dispute, error) {
	return connector.Dispute{}, r.err
}

func (r refusingAcquirer) AcceptDispute(context.Context, string) (connector.Dispute, error) {
	return connector.Dispute{}, r.err
}

type oneConnector struct{ c Connector }

func (o oneConnector) Get(string) (Connector, error) { return o.c, nil }

// TestDisputeCallsFinalOrRetried: the acquirer's refusals of a dispute
// call are final (a conflict with the dispute's state there, such as a
// concession of a dispute decided a moment before, can never succeed and
// was retried for ever), its transport failures retried.
func TestDisputeCallsFinalOrRetried(t *testing.T) {
	tests := []struct {
		name  string
		err   error
		final bool
	}{
		{"refused for its values", fmt.Errorf("accept: %w: 400", connector.ErrRejected), true},
		{"a dispute the acquirer does not know", fmt.Errorf("accept: %w", connector.ErrNotFound), true},
		{"a conflict with the dispute's state (409)", fmt.Errorf("accept: %w: already decided", connector.ErrConflict), true},
		{"the acquirer unavailable", fmt.Errorf("accept: %w: status 503", connector.ErrUnavailable), false},
		{"no answer in time", fmt.Errorf("accept: %w", connector.ErrTimeout), false},
		{"a transport failure", errors.New("dial tcp: connection refused"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := &DisputeActivities{Connectors: oneConnector{refusingAcquirer{err: tc.err}}}
			calls := map[string]func() error{
				"ask": func() error {
					_, err := a.AskDispute(t.Context(), DisputeAsk{Connector: "sim-acquirer", DisputeID: "dp_1"})
					return err
				},
				"accept": func() error {
					_, err := a.AcceptDispute(t.Context(), DisputeAsk{Connector: "sim-acquirer", DisputeID: "dp_1"})
					return err
				},
			}
			for name, call := range calls {
				err := call()
				var appErr *temporal.ApplicationError
				final := errors.As(err, &appErr) && appErr.NonRetryable() && appErr.Type() == ErrTypeDisputeRefused
				if err == nil || final != tc.final {
					t.Errorf("%s: %v, final %t; want final %t", name, err, final, tc.final)
				}
			}
		})
	}
}

// savedDisputes keeps the disputes saved.
type savedDisputes struct {
	DisputeRecords
	saved []models.Dispute
}

func (s *savedDisputes) SaveDispute(_ context.Context, d *models.Dispute) error {
	s.saved = append(s.saved, *d)
	return nil
}

// TestDisputeReasonFitsItsColumn: the acquirer's reason is free text; a
// long one, or one with bytes that are not text, is kept as its column
// holds it instead of leaving the dispute unrecorded (and its merchant
// unable to read or answer it).
func TestDisputeReasonFitsItsColumn(t *testing.T) {
	tests := []struct {
		name, reason, want string
	}{
		{"a short one, as it is", "fraudulent", "fraudulent"},
		{"64 characters, as they are", strings.Repeat("r", 64), strings.Repeat("r", 64)},
		{"65 characters, cut to 64", strings.Repeat("r", 65), strings.Repeat("r", 64)},
		{"a scheme's description", "Cardholder does not recognise the transaction on their statement, code 4863",
			"Cardholder does not recognise the transaction on their statement"},
		{"accented letters count as one each", strings.Repeat("é", 70), strings.Repeat("é", 64)},
		{"a NUL and a line break dropped", "product\x00 not\n received", "product not received"},
		{"bytes that are not UTF-8 replaced", "bad \xff byte", "bad \uFFFD byte"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := &savedDisputes{}
			a := &DisputeActivities{Records: rec}
			if err := a.SaveDispute(t.Context(), DisputeRecord{ID: "sim-acquirer:dp_1", Reason: tc.reason}); err != nil {
				t.Fatal(err)
			}
			if got := rec.saved[0].Reason; got != tc.want {
				t.Errorf("reason %q, want %q", got, tc.want)
			}
		})
	}
}

// TestEvidenceOf: an answer sends every text, one a line, and the newest
// file of each kind with its bytes, in the kinds' order: a later answer's
// receipt replaces the earlier one, and files named after no kind are the
// one uncategorized file.
func TestEvidenceOf(t *testing.T) {
	text := func(name, body string) models.DisputeEvidence {
		return models.DisputeEvidence{Kind: "text", Name: name, Content: []byte(body)}
	}
	file := func(name, body string) models.DisputeEvidence {
		return models.DisputeEvidence{Kind: "file", Name: name, ContentType: "application/pdf", Content: []byte(body)}
	}
	tests := []struct {
		name      string
		recorded  []models.DisputeEvidence
		wantText  string
		wantFiles []string // kind name content
	}{
		{name: "texts alone", recorded: []models.DisputeEvidence{text("tracking", "delivered"), text("note", "signed for")},
			wantText: "tracking: delivered\nnote: signed for"},
		{name: "a file of each kind, in the kinds' order",
			recorded: []models.DisputeEvidence{file("door.png", "photo"), text("tracking", "delivered"), file("Receipt.pdf", "receipt"),
				file("shipping-documentation.pdf", "label")},
			wantText:  "tracking: delivered",
			wantFiles: []string{"receipt Receipt.pdf receipt", "shipping_documentation shipping-documentation.pdf label", "uncategorized_file door.png photo"}},
		{name: "a later receipt replaces the earlier",
			recorded:  []models.DisputeEvidence{file("receipt.pdf", "first"), file("RECEIPT.PDF", "second")},
			wantFiles: []string{"receipt RECEIPT.PDF second"}},
		{name: "a text file goes as text",
			recorded: []models.DisputeEvidence{text("tracking", "delivered"),
				{Kind: "file", Name: "receipt.txt", ContentType: "text/plain; charset=utf-8", Content: []byte("paid 50.00")}},
			wantText: "tracking: delivered\nreceipt.txt: paid 50.00"},
		{name: "of two files of no kind the newer is sent",
			recorded:  []models.DisputeEvidence{file("a.pdf", "one"), file("b.pdf", "two")},
			wantFiles: []string{"uncategorized_file b.pdf two"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := evidenceOf(tc.recorded)
			if got.Text != tc.wantText {
				t.Errorf("text %q, want %q", got.Text, tc.wantText)
			}
			var files []string
			for _, f := range got.Files {
				files = append(files, f.Kind+" "+f.Name+" "+string(f.Content))
			}
			if strings.Join(files, "|") != strings.Join(tc.wantFiles, "|") {
				t.Errorf("files %q, want %q", files, tc.wantFiles)
			}
			for _, f := range got.Files {
				if f.Kind != dispute.FileKind(f.Name) {
					t.Errorf("file %s sent as %s", f.Name, f.Kind)
				}
			}
		})
	}
}
