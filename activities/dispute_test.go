package activities

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/paygate/paygate/internal/domain/connector"
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

func (r refusingAcquirer) SubmitDisputeEvidence(context.Context, string, string) (connector.Dispute, error) {
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
