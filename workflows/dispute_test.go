package workflows_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/dispute"
	"github.com/paygate/paygate/workflows"
)

var dacts *activities.DisputeActivities

// issuer is the fake acquirer of a dispute under test: it holds the
// dispute, changes it as the merchant answers and as the test decides, and
// counts the ledger's steps and the notifications.
type issuer struct {
	mu      sync.Mutex
	d       connector.Dispute
	onProof func(*connector.Dispute) // what evidence does
	// held, when set, is called after an inquiry read the dispute and
	// before it answers: a slow acquirer.
	held      func()
	ledger    []string
	fees      []int64 // the fee of each ledger step
	notices   []string
	noticeIDs []string
	saved     []activities.DisputeRecord
	// refuseHold has the ledger refuse the hold for its values.
	refuseHold bool
	// askRefusals is how many inquiries the acquirer refuses for good
	// (DisputeRefused), first; asked counts them all.
	askRefusals, asked int
}

func (is *issuer) set(f func(*connector.Dispute)) {
	is.mu.Lock()
	defer is.mu.Unlock()
	f(&is.d)
}

func newDisputeEnv(t *testing.T, is *issuer) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(workflows.Dispute, workflow.RegisterOptions{Name: workflows.DisputeWorkflowType})
	env.RegisterWorkflowWithOptions(func(workflow.Context, workflows.RedeliverInput) (workflows.RedeliverResult, error) {
		return workflows.RedeliverResult{}, nil
	}, workflow.RegisterOptions{Name: workflows.RedeliverWorkflowType})
	env.RegisterActivity(&activities.DisputeActivities{})
	snapshot := func() connector.Dispute { is.mu.Lock(); defer is.mu.Unlock(); return is.d }
	env.OnActivity(dacts.AskDispute, mock.Anything, mock.Anything).Return(
		func(context.Context, activities.DisputeAsk) (connector.Dispute, error) {
			d := snapshot()
			is.mu.Lock()
			held := is.held
			is.asked++
			refuse := is.asked <= is.askRefusals
			is.mu.Unlock()
			if refuse {
				return connector.Dispute{}, temporal.NewNonRetryableApplicationError("connector not configured",
					activities.ErrTypeDisputeRefused, nil)
			}
			if held != nil {
				held()
			}
			return d, nil
		}).Maybe()
	// Like the simulated acquirer, the fake refuses an answer to a dispute
	// that no longer waits for one (409, a final refusal).
	conflict := func(what string) error {
		return temporal.NewNonRetryableApplicationError(what+": acquirer: conflict", activities.ErrTypeDisputeRefused, nil)
	}
	env.OnActivity(dacts.SubmitDisputeEvidence, mock.Anything, mock.Anything).Return(
		func(context.Context, activities.DisputeAnswer) (connector.Dispute, error) {
			if snapshot().Status != "needs_response" {
				return connector.Dispute{}, conflict("submit evidence")
			}
			is.set(func(d *connector.Dispute) {
				d.Status = "under_review"
				if is.onProof != nil {
					is.onProof(d)
				}
			})
			return snapshot(), nil
		}).Maybe()
	env.OnActivity(dacts.AcceptDispute, mock.Anything, mock.Anything).Return(
		func(context.Context, activities.DisputeAsk) (connector.Dispute, error) {
			if s := snapshot().Status; s != "needs_response" && s != "under_review" {
				return connector.Dispute{}, conflict("accept dispute")
			}
			is.set(func(d *connector.Dispute) { d.Status = "lost" })
			return snapshot(), nil
		}).Maybe()
	env.OnActivity(dacts.FindDisputedOrder, mock.Anything, mock.Anything).Return(activities.DisputedOrder{Found: true,
		TransactionID: "1379868670095785984", MerchantID: merchantID, AccountID: accountID, OrderNo: "ORD-1",
		NotifyURL: "https://shop.example/notify"}, nil).Maybe()
	env.OnActivity(dacts.SaveDispute, mock.Anything, mock.Anything).Return(func(_ context.Context, d activities.DisputeRecord) error {
		is.mu.Lock()
		defer is.mu.Unlock()
		is.saved = append(is.saved, d)
		return nil
	}).Maybe()
	for name, fn := range map[string]any{"hold": dacts.HoldDispute, "release": dacts.ReleaseDispute, "take": dacts.TakeDispute} {
		env.OnActivity(fn, mock.Anything, mock.Anything).Return(func(_ context.Context, m activities.DisputeMoney) error {
			is.mu.Lock()
			defer is.mu.Unlock()
			is.fees = append(is.fees, m.Fee)
			if name == "hold" && is.refuseHold {
				is.ledger = append(is.ledger, "hold refused")
				return temporal.NewNonRetryableApplicationError("hold: invalid", activities.ErrTypeDisputeRefused, nil)
			}
			is.ledger = append(is.ledger, name)
			return nil
		}).Maybe()
	}
	env.OnActivity(dacts.RecordDisputeNotice, mock.Anything, mock.Anything).Return(func(_ context.Context, n activities.DisputeNotice) error {
		is.mu.Lock()
		defer is.mu.Unlock()
		is.notices = append(is.notices, n.Fields["event"])
		is.noticeIDs = append(is.noticeIDs, n.NotifyID)
		return nil
	}).Maybe()
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: workflows.DisputeWorkflowID("sim-acquirer", "dp_1"), TaskQueue: workflows.TaskQueue})
	return env
}

// disputeStep is something that happens to a dispute under test, after
// its start.
type disputeStep struct {
	after  time.Duration
	update string                   // the merchant's answer, or
	issuer func(*connector.Dispute) // the acquirer's move, followed by its callback
	silent bool                     // unless its callback is lost (or still on its way)
}

// TestDisputePaths follows issue 30's proof: "time-skipping workflow tests
// for every path (evidence in time, evidence late, no evidence, accepted,
// won, lost, inquiry that never escalates)". The money is held once the
// acquirer took it back and released or taken on the outcome; each move is
// recorded and notified, with reminders before the deadline.
func TestDisputePaths(t *testing.T) {
	day := 24 * time.Hour
	start := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
	due := start.Add(7 * day)
	chargeback := connector.Dispute{ID: "dp_1", Reference: "1379868670095785984", Amount: 5000, Currency: "USD",
		Reason: "fraudulent", Stage: "chargeback", Status: "needs_response", EvidenceDue: due}
	inquiry := chargeback
	inquiry.Stage = "inquiry"
	decide := func(status string) func(*connector.Dispute) { return func(d *connector.Dispute) { d.Status = status } }
	tests := []struct {
		name    string
		first   connector.Dispute
		proof   func(*connector.Dispute)
		steps   []disputeStep
		final   dispute.Status
		ledger  []string
		notices []string
	}{
		{"evidence in time, won", chargeback, nil, []disputeStep{
			{after: day, update: workflows.UpdateDisputeEvidence},
			{after: 3 * day, issuer: decide("won")},
		}, dispute.Won, []string{"hold", "release"}, []string{"needs_response", "under_review", "won"}},
		{"evidence in time, lost", chargeback, nil, []disputeStep{
			{after: day, update: workflows.UpdateDisputeEvidence},
			{after: 3 * day, issuer: decide("lost")},
		}, dispute.Lost, []string{"hold", "take"}, []string{"needs_response", "under_review", "lost"}},
		{"evidence the acquirer decides at once", chargeback, decide("won"), []disputeStep{
			{after: day, update: workflows.UpdateDisputeEvidence},
		}, dispute.Won, []string{"hold", "release"}, []string{"needs_response", "won"}},
		{"no evidence: reminded twice, lost at the deadline", chargeback, nil, nil,
			dispute.Lost, []string{"hold", "take"}, []string{"needs_response", "reminder", "reminder", "lost"}},
		{"evidence late: the dispute was lost at the deadline", chargeback, nil, []disputeStep{
			{after: 8 * day, update: workflows.UpdateDisputeEvidence},
		}, dispute.Lost, []string{"hold", "take"}, []string{"needs_response", "reminder", "reminder", "lost"}},
		{"accepted by the merchant", chargeback, nil, []disputeStep{
			{after: day, update: workflows.UpdateAcceptDispute},
		}, dispute.Accepted, []string{"hold", "take"}, []string{"needs_response", "accepted"}},
		{"an inquiry that never escalates", inquiry, nil, []disputeStep{
			{after: day, update: workflows.UpdateDisputeEvidence},
			{after: 2 * day, issuer: decide("closed")},
		}, dispute.Closed, nil, []string{"needs_response", "under_review", "closed"}},
		// The acquirer takes a lost inquiry's money back: the dispute holds
		// and takes it.
		{"an inquiry not answered: conceded at the deadline", inquiry, nil, nil,
			dispute.Lost, []string{"hold", "take"}, []string{"needs_response", "reminder", "reminder", "lost"}},
		{"an inquiry accepted by the merchant", inquiry, nil, []disputeStep{
			{after: day, update: workflows.UpdateAcceptDispute},
		}, dispute.Accepted, []string{"hold", "take"}, []string{"needs_response", "accepted"}},
		{"an inquiry won", inquiry, nil, []disputeStep{
			{after: day, update: workflows.UpdateDisputeEvidence},
			{after: 2 * day, issuer: decide("won")},
		}, dispute.Won, nil, []string{"needs_response", "under_review", "won"}},
		{"an inquiry that escalates, then pre-arbitration, then won", inquiry, nil, []disputeStep{
			{after: day, issuer: func(d *connector.Dispute) { d.Stage, d.EvidenceDue = "chargeback", start.Add(10*day) }},
			{after: 2 * day, update: workflows.UpdateDisputeEvidence},
			{after: 3 * day, issuer: func(d *connector.Dispute) {
				d.Stage, d.Status, d.EvidenceDue = "pre_arbitration", "needs_response", start.Add(12*day)
			}},
			{after: 4 * day, update: workflows.UpdateDisputeEvidence},
			{after: 5 * day, issuer: decide("won")},
		}, dispute.Won, []string{"hold", "release"},
			[]string{"needs_response", "needs_response", "under_review", "needs_response", "under_review", "won"}},
		// The acquirer asks for more at the same stage: a new answer is
		// due, taken, and its deadline kept.
		{"asked for more at the same stage, answered again, won", chargeback, nil, []disputeStep{
			{after: day, update: workflows.UpdateDisputeEvidence},
			{after: 2 * day, issuer: func(d *connector.Dispute) { d.Status, d.EvidenceDue = "needs_response", start.Add(10*day) }},
			{after: 3 * day, update: workflows.UpdateDisputeEvidence},
			{after: 4 * day, issuer: decide("won")},
		}, dispute.Won, []string{"hold", "release"},
			[]string{"needs_response", "under_review", "needs_response", "under_review", "won"}},
		{"asked for more at the same stage, not answered: lost at the new deadline", chargeback, nil, []disputeStep{
			{after: day, update: workflows.UpdateDisputeEvidence},
			{after: 2 * day, issuer: func(d *connector.Dispute) { d.Status, d.EvidenceDue = "needs_response", start.Add(10*day) }},
		}, dispute.Lost, []string{"hold", "take"},
			[]string{"needs_response", "under_review", "needs_response", "reminder", "reminder", "lost"}},
		// The acquirer refuses the concession at the deadline (409): the
		// dispute asks it and takes its word, instead of conceding forever.
		{"decided at the acquirer a second before the deadline, its callback late", chargeback, nil, []disputeStep{
			{after: 7*day - time.Second, issuer: decide("won"), silent: true},
		}, dispute.Won, []string{"hold", "release"}, []string{"needs_response", "reminder", "reminder", "won"}},
		{"evidence refused as the acquirer decided meanwhile", chargeback, nil, []disputeStep{
			{after: day, issuer: decide("lost"), silent: true},
			{after: 2 * day, update: workflows.UpdateDisputeEvidence},
		}, dispute.Lost, []string{"hold", "take"}, []string{"needs_response", "lost"}},
		{"an acceptance refused as the acquirer decided meanwhile", chargeback, nil, []disputeStep{
			{after: day, issuer: decide("won"), silent: true},
			{after: 2 * day, update: workflows.UpdateAcceptDispute},
		}, dispute.Won, []string{"hold", "release"}, []string{"needs_response", "won"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			is := &issuer{d: tc.first, onProof: tc.proof}
			env := newDisputeEnv(t, is)
			env.SetStartTime(start)
			var refused int
			for _, s := range tc.steps {
				env.RegisterDelayedCallback(func() {
					if s.issuer != nil {
						is.set(s.issuer)
						if !s.silent {
							env.SignalWorkflow(workflows.SignalDisputeWord, nil)
						}
						return
					}
					env.UpdateWorkflow(s.update, "", &testsuite.TestUpdateCallback{
						OnAccept:   func() {},
						OnReject:   func(error) { refused++ },
						OnComplete: func(any, error) {},
					})
				}, s.after)
			}
			st := runDispute(t, env)
			if st.Status != tc.final || st.Fee != 1500 || st.Amount.Minor != 5000 {
				t.Errorf("final %s fee %d amount %d, want %s 1500 5000", st.Status, st.Fee, st.Amount.Minor, tc.final)
			}
			if !equalStrings(is.ledger, tc.ledger) {
				t.Errorf("ledger steps %v, want %v", is.ledger, tc.ledger)
			}
			if !equalStrings(is.notices, tc.notices) {
				t.Errorf("notifications %v, want %v", is.notices, tc.notices)
			}
			if last := is.saved[len(is.saved)-1]; last.Status != string(tc.final) || last.ID != "sim-acquirer:dp_1" || last.MerchantID != merchantID {
				t.Errorf("last record %+v", last)
			}
			_ = refused // a late answer finds the dispute lost and its workflow closed
		})
	}
}

// runDispute runs the dispute dp_1 of the simulated acquirer to its end
// and returns its final state.
func runDispute(t *testing.T, env *testsuite.TestWorkflowEnvironment) workflows.DisputeState {
	t.Helper()
	env.ExecuteWorkflow(workflows.DisputeWorkflowType, workflows.DisputeInput{Connector: "sim-acquirer", DisputeID: "dp_1"})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("workflow error: %v", err)
	}
	var st workflows.DisputeState
	if err := env.GetWorkflowResult(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestDisputeAnswerOlderThanTheEvidence: the acquirer's word wakes the
// dispute and its inquiry is slow; the merchant's evidence moves the
// dispute to under review meanwhile. The inquiry's answer, read before the
// evidence, says "needs response": the dispute asks again rather than move
// back (and tell the merchant twice).
func TestDisputeAnswerOlderThanTheEvidence(t *testing.T) {
	day := 24 * time.Hour
	start := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
	is := &issuer{d: connector.Dispute{ID: "dp_1", Reference: "1379868670095785984", Amount: 5000, Currency: "USD",
		Reason: "fraudulent", Stage: "chargeback", Status: "needs_response", EvidenceDue: start.Add(7 * day)}}
	env := newDisputeEnv(t, is)
	env.SetStartTime(start)
	movedOn := func() bool {
		is.mu.Lock()
		defer is.mu.Unlock()
		return slices.Contains(is.notices, "under_review")
	}
	env.RegisterDelayedCallback(func() {
		is.mu.Lock()
		is.held = func() {
			// Answer once the evidence has been applied (or give up).
			for deadline := time.Now().Add(10 * time.Second); !movedOn() && time.Now().Before(deadline); {
				time.Sleep(5 * time.Millisecond)
			}
		}
		is.mu.Unlock()
		env.SignalWorkflow(workflows.SignalDisputeWord, nil)
	}, day)
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(workflows.UpdateDisputeEvidence, "", &testsuite.TestUpdateCallback{
			OnAccept: func() {}, OnReject: func(err error) { t.Errorf("evidence refused: %v", err) }, OnComplete: func(any, error) {},
		})
	}, day+time.Second)
	env.RegisterDelayedCallback(func() {
		is.set(func(d *connector.Dispute) { d.Status = "won" })
		is.mu.Lock()
		is.held = nil
		is.mu.Unlock()
		env.SignalWorkflow(workflows.SignalDisputeWord, nil)
	}, 2*day)
	env.ExecuteWorkflow(workflows.DisputeWorkflowType, workflows.DisputeInput{Connector: "sim-acquirer", DisputeID: "dp_1"})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("workflow error: %v", err)
	}
	want := []string{"needs_response", "under_review", "won"}
	if !equalStrings(is.notices, want) {
		t.Errorf("notifications %v, want %v", is.notices, want)
	}
}

// TestDisputeAnswerRefusedByTheAcquirer: the merchant's answer to a
// dispute the acquirer decided a moment before (its callback still on the
// way) is refused there; the dispute takes the acquirer's word at once,
// and the merchant is told the dispute no longer waits for an answer
// (ErrTypeEntryRefused, the API's I0037), not a system error.
func TestDisputeAnswerRefusedByTheAcquirer(t *testing.T) {
	day := 24 * time.Hour
	start := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		name, update string
		decided      string
		final        dispute.Status
		ledger       []string
	}{
		{"evidence, the dispute lost meanwhile", workflows.UpdateDisputeEvidence, "lost", dispute.Lost, []string{"hold", "take"}},
		{"an acceptance, the dispute won meanwhile", workflows.UpdateAcceptDispute, "won", dispute.Won, []string{"hold", "release"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			is := &issuer{d: connector.Dispute{ID: "dp_1", Reference: "1379868670095785984", Amount: 5000, Currency: "USD",
				Reason: "fraudulent", Stage: "chargeback", Status: "needs_response", EvidenceDue: start.Add(7 * day)}}
			env := newDisputeEnv(t, is)
			env.SetStartTime(start)
			// Decided a minute before the answer, between two of the
			// dispute's hourly inquiries.
			env.RegisterDelayedCallback(func() { is.set(func(d *connector.Dispute) { d.Status = tc.decided }) }, 2*day-time.Minute)
			var answerErr error
			env.RegisterDelayedCallback(func() {
				env.UpdateWorkflow(tc.update, "", &testsuite.TestUpdateCallback{
					OnAccept: func() {}, OnReject: func(err error) { t.Errorf("answer rejected: %v", err) },
					OnComplete: func(_ any, err error) { answerErr = err },
				})
			}, 2*day)
			env.ExecuteWorkflow(workflows.DisputeWorkflowType, workflows.DisputeInput{Connector: "sim-acquirer", DisputeID: "dp_1"})
			if err := env.GetWorkflowError(); err != nil {
				t.Fatalf("workflow error: %v", err)
			}
			var appErr *temporal.ApplicationError
			if !errors.As(answerErr, &appErr) || appErr.Type() != workflows.ErrTypeEntryRefused {
				t.Errorf("the answer ended with %v, want %s", answerErr, workflows.ErrTypeEntryRefused)
			}
			last := is.saved[len(is.saved)-1]
			if last.Status != string(tc.final) || !last.UpdatedAt.Equal(start.Add(2*day)) || !equalStrings(is.ledger, tc.ledger) {
				t.Errorf("last record %s at %s, ledger %v; want %s at %s, %v", last.Status, last.UpdatedAt, is.ledger,
					tc.final, start.Add(2*day), tc.ledger)
			}
		})
	}
}

// TestDisputeHoldRefused: a hold the ledger refuses for its values (a
// dispute of nothing, its order refunded in full) leaves the dispute not
// held, in its record too, and its outcome moves no money it never held.
func TestDisputeHoldRefused(t *testing.T) {
	day := 24 * time.Hour
	start := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		update string
		issuer string
		final  dispute.Status
	}{
		{"accepted", workflows.UpdateAcceptDispute, "", dispute.Accepted},
		{"won", workflows.UpdateDisputeEvidence, "won", dispute.Won},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			is := &issuer{d: connector.Dispute{ID: "dp_1", Reference: "1379868670095785984", Amount: 5000, Currency: "USD",
				Reason: "fraudulent", Stage: "chargeback", Status: "needs_response", EvidenceDue: start.Add(7 * day)}, refuseHold: true}
			env := newDisputeEnv(t, is)
			env.SetStartTime(start)
			env.RegisterDelayedCallback(func() {
				env.UpdateWorkflow(tc.update, "", &testsuite.TestUpdateCallback{OnAccept: func() {}, OnReject: func(error) {}, OnComplete: func(any, error) {}})
			}, day)
			if tc.issuer != "" {
				env.RegisterDelayedCallback(func() {
					is.set(func(d *connector.Dispute) { d.Status = tc.issuer })
					env.SignalWorkflow(workflows.SignalDisputeWord, nil)
				}, 2*day)
			}
			env.ExecuteWorkflow(workflows.DisputeWorkflowType, workflows.DisputeInput{Connector: "sim-acquirer", DisputeID: "dp_1"})
			var st workflows.DisputeState
			if err := env.GetWorkflowResult(&st); err != nil {
				t.Fatal(err)
			}
			if st.Held || st.Status != tc.final || !equalStrings(is.ledger, []string{"hold refused"}) {
				t.Errorf("held %t, %s, ledger %v; want not held, %s, only the refused hold", st.Held, st.Status, is.ledger, tc.final)
			}
			for _, r := range is.saved {
				if r.Held {
					t.Errorf("a record says held: %+v", r)
				}
			}
		})
	}
}

// TestDisputeFirstInquiryRefused: a dispute whose first inquiry the
// acquirer refuses for good (the worker without the connector's settings
// in a deploy, a key being replaced) asks again on the next word and every
// hour for a week, instead of ending with the dispute unheld and every
// later callback taken for nothing.
func TestDisputeFirstInquiryRefused(t *testing.T) {
	start := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		refusals int
		word     time.Duration // a callback this long after the start (0: none)
		status   dispute.Status
		ledger   []string
		answered time.Duration // when the acquirer's answer was applied (0: never)
	}{
		{"answered on the third hour's inquiry", 3, 0, dispute.NeedsResponse, []string{"hold"}, 3 * time.Hour},
		{"answered when the next callback comes", 1, 10 * time.Minute, dispute.NeedsResponse, []string{"hold"}, 10 * time.Minute},
		{"refused for a week: given up", 1000, 0, "", nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			is := &issuer{d: connector.Dispute{ID: "dp_1", Reference: "1379868670095785984", Amount: 5000, Currency: "USD",
				Reason: "fraudulent", Stage: "chargeback", Status: "needs_response", EvidenceDue: start.Add(30 * 24 * time.Hour)},
				askRefusals: tc.refusals}
			env := newDisputeEnv(t, is)
			env.SetStartTime(start)
			if tc.word > 0 {
				env.RegisterDelayedCallback(func() { env.SignalWorkflow(workflows.SignalDisputeWord, nil) }, tc.word)
			}
			var st workflows.DisputeState
			env.RegisterDelayedCallback(func() {
				v, err := env.QueryWorkflow(workflows.QueryDisputeState)
				if err == nil {
					_ = v.Get(&st)
				}
				is.mu.Lock()
				defer is.mu.Unlock()
				if st.Status != tc.status || !equalStrings(is.ledger, tc.ledger) {
					t.Errorf("after 8 days: %q, ledger %v; want %q, %v", st.Status, is.ledger, tc.status, tc.ledger)
				}
			}, 8*24*time.Hour)
			env.ExecuteWorkflow(workflows.DisputeWorkflowType, workflows.DisputeInput{Connector: "sim-acquirer", DisputeID: "dp_1"})
			switch {
			case tc.answered == 0 && (is.asked != 1+7*24 || len(is.saved) != 0):
				t.Errorf("asked %d times, %d records; want 169 (the first, then hourly for a week), none", is.asked, len(is.saved))
			case tc.answered > 0 && (len(is.saved) == 0 || !is.saved[0].UpdatedAt.Equal(start.Add(tc.answered))):
				t.Errorf("records %+v; the first want at %s", is.saved, start.Add(tc.answered))
			}
		})
	}
}

// TestDisputeCancelled: a dispute's workflow ops cancel ends as cancelled
// (it spun before: every timer and inquiry of a cancelled workflow returns
// at once), its money left as it stands for ops to settle.
func TestDisputeCancelled(t *testing.T) {
	start := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
	is := &issuer{d: connector.Dispute{ID: "dp_1", Reference: "1379868670095785984", Amount: 5000, Currency: "USD",
		Reason: "fraudulent", Stage: "chargeback", Status: "needs_response", EvidenceDue: start.Add(7 * 24 * time.Hour)}}
	env := newDisputeEnv(t, is)
	env.SetStartTime(start)
	env.SetTestTimeout(20 * time.Second)
	env.RegisterDelayedCallback(env.CancelWorkflow, 24*time.Hour)
	env.ExecuteWorkflow(workflows.DisputeWorkflowType, workflows.DisputeInput{Connector: "sim-acquirer", DisputeID: "dp_1"})
	var canceled *temporal.CanceledError
	if err := env.GetWorkflowError(); !errors.As(err, &canceled) {
		t.Errorf("workflow error %v, want cancelled", err)
	}
	if !equalStrings(is.ledger, []string{"hold"}) {
		t.Errorf("ledger %v, want the hold only", is.ledger)
	}
}

// TestDisputeCancelledWhileAskingAgain: a dispute cancelled while it asks
// again after a refused first inquiry ends as cancelled (it would spin: a
// cancelled workflow's timers and inquiries return at once).
func TestDisputeCancelledWhileAskingAgain(t *testing.T) {
	start := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
	is := &issuer{d: connector.Dispute{ID: "dp_1", Reference: "1379868670095785984", Amount: 5000, Currency: "USD",
		Reason: "fraudulent", Stage: "chargeback", Status: "needs_response", EvidenceDue: start.Add(30 * 24 * time.Hour)},
		askRefusals: 1000}
	env := newDisputeEnv(t, is)
	env.SetStartTime(start)
	env.RegisterDelayedCallback(env.CancelWorkflow, 90*time.Minute)
	env.ExecuteWorkflow(workflows.DisputeWorkflowType, workflows.DisputeInput{Connector: "sim-acquirer", DisputeID: "dp_1"})
	var canceled *temporal.CanceledError
	if err := env.GetWorkflowError(); !errors.As(err, &canceled) {
		t.Errorf("workflow error %v, want cancelled", err)
	}
	if is.asked != 2 || len(is.ledger) != 0 {
		t.Errorf("asked %d times, ledger %v; want twice (the first, then at the hour), nothing held", is.asked, is.ledger)
	}
}

// TestDisputeContinuesAsNew: a dispute that has taken its run's share of
// wakes (the hourly asks of a dispute open for months) continues as new
// with what it knows; the next run takes the merchant's answer and the
// outcome without holding or notifying again, and a run handed words the
// run before did not ask about asks first.
func TestDisputeContinuesAsNew(t *testing.T) {
	day := 24 * time.Hour
	start := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
	is := &issuer{d: connector.Dispute{ID: "dp_1", Reference: "1379868670095785984", Amount: 5000, Currency: "USD",
		Reason: "fraudulent", Stage: "chargeback", Status: "needs_response", EvidenceDue: start.Add(7 * day)}}
	env := newDisputeEnv(t, is)
	env.SetStartTime(start)
	env.ExecuteWorkflow(workflows.DisputeWorkflowType, workflows.DisputeInput{Connector: "sim-acquirer", DisputeID: "dp_1", WakesPerRun: 3})
	var can *workflow.ContinueAsNewError
	if err := env.GetWorkflowError(); !errors.As(err, &can) {
		t.Fatalf("first run ended with %v, want continue-as-new", err)
	}
	var next workflows.DisputeInput
	if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &next); err != nil {
		t.Fatal(err)
	}
	r := next.Resume
	if r == nil || r.Runs != 1 || r.State.Status != dispute.NeedsResponse || !r.State.Held || r.State.Fee != 1500 ||
		r.Order.TransactionID != "1379868670095785984" || r.Answer != "" || !r.Created.Equal(start) || next.WakesPerRun != 3 {
		t.Fatalf("handed over %+v (input %+v)", r, next)
	}
	if !equalStrings(is.ledger, []string{"hold"}) || !equalStrings(is.notices, []string{"needs_response"}) {
		t.Fatalf("first run: ledger %v, notices %v", is.ledger, is.notices)
	}

	tests := []struct {
		name    string
		woken   bool
		steps   []disputeStep
		ledger  []string
		notices []string
	}{
		{"the next run takes the answer and the outcome", false, []disputeStep{
			{after: day, update: workflows.UpdateDisputeEvidence},
			{after: 2 * day, issuer: func(d *connector.Dispute) { d.Status = "won" }},
		}, []string{"release"}, []string{"under_review", "won"}},
		{"a run handed unasked words asks first", true, nil, []string{"release"}, []string{"won"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			is2 := &issuer{d: is.d}
			if tc.woken {
				is2.d.Status = "won" // decided, its callback taken by the run before
			}
			env := newDisputeEnv(t, is2)
			env.SetStartTime(start.Add(3 * time.Hour))
			for _, s := range tc.steps {
				env.RegisterDelayedCallback(func() {
					if s.issuer != nil {
						is2.set(s.issuer)
						env.SignalWorkflow(workflows.SignalDisputeWord, nil)
						return
					}
					env.UpdateWorkflow(s.update, "", &testsuite.TestUpdateCallback{
						OnAccept: func() {}, OnReject: func(err error) { t.Errorf("answer refused: %v", err) },
						OnComplete: func(any, error) {},
					})
				}, s.after)
			}
			in := next
			resume := *next.Resume
			resume.Woken = tc.woken
			in.Resume, in.WakesPerRun = &resume, 0
			env.ExecuteWorkflow(workflows.DisputeWorkflowType, in)
			if err := env.GetWorkflowError(); err != nil {
				t.Fatalf("next run: %v", err)
			}
			var st workflows.DisputeState
			if err := env.GetWorkflowResult(&st); err != nil {
				t.Fatal(err)
			}
			if st.Status != dispute.Won || !st.Held || st.Notices != 1+len(tc.notices) {
				t.Errorf("final %+v", st)
			}
			if !equalStrings(is2.ledger, tc.ledger) || !equalStrings(is2.notices, tc.notices) {
				t.Errorf("next run: ledger %v, notices %v; want %v and %v", is2.ledger, is2.notices, tc.ledger, tc.notices)
			}
			if last := is2.saved[len(is2.saved)-1]; last.Status != "won" || !last.CreatedAt.Equal(start) {
				t.Errorf("last record %+v", last)
			}
		})
	}
}

// TestDisputeNoticeIDsOfALongDisputeID: a dispute whose id is too long for
// a notice id with its number (a UUID) has each notice named by the id's
// digest and the notice's number: every notice has an id of its own,
// within the column's 40 characters.
func TestDisputeNoticeIDsOfALongDisputeID(t *testing.T) {
	const long = "2f1c9a7e-5b3d-4c8e-9f0a-6d2b7e4c1a93"
	day := 24 * time.Hour
	start := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
	is := &issuer{d: connector.Dispute{ID: long, Reference: "1379868670095785984", Amount: 5000, Currency: "USD",
		Reason: "fraudulent", Stage: "chargeback", Status: "needs_response", EvidenceDue: start.Add(7 * day)}}
	env := newDisputeEnv(t, is)
	env.SetStartTime(start)
	env.RegisterDelayedCallback(func() {
		is.set(func(d *connector.Dispute) { d.Status = "lost" })
		env.SignalWorkflow(workflows.SignalDisputeWord, nil)
	}, 10*day)
	env.ExecuteWorkflow(workflows.DisputeWorkflowType, workflows.DisputeInput{Connector: "sim-acquirer", DisputeID: long})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("workflow error: %v", err)
	}
	if len(is.noticeIDs) < 2 {
		t.Fatalf("notices %v, want at least two", is.noticeIDs)
	}
	seen := map[string]bool{}
	for i, id := range is.noticeIDs {
		if len(id) > 40 || seen[id] || !strings.HasSuffix(id, fmt.Sprintf("-%02d", i+1)) {
			t.Errorf("notice %d id %q (all %v): want its own, numbered, at most 40 characters", i+1, id, is.noticeIDs)
		}
		seen[id] = true
	}
}

// TestDisputeFeePassedThrough: the merchant pays the acquirer's own fee for
// a dispute, as the acquirer reports it, fixed by the hold; where it
// reports none, 15 major units of the dispute's currency.
func TestDisputeFeePassedThrough(t *testing.T) {
	day := 24 * time.Hour
	start := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
	due := start.Add(7 * day)
	chargeback := connector.Dispute{ID: "dp_1", Reference: "1379868670095785984", Amount: 5000, Currency: "USD",
		Reason: "fraudulent", Stage: "chargeback", Status: "needs_response", EvidenceDue: due}
	withFee := func(d connector.Dispute, fee int64) connector.Dispute { d.Fee, d.FeeKnown = fee, true; return d }
	yen := withFee(chargeback, 2239)
	yen.Amount, yen.Currency = 1000, "JPY"
	inquiry := chargeback
	inquiry.Stage = "inquiry"
	tests := []struct {
		name  string
		first connector.Dispute
		steps []disputeStep
		fees  []int64 // of the hold and the take
		fee   int64   // the dispute's, at its end
	}{
		{"no fee reported: 15.00", chargeback, nil, []int64{1500, 1500}, 1500},
		{"no fee reported in yen: 15", func() connector.Dispute { d := chargeback; d.Amount, d.Currency = 1000, "JPY"; return d }(),
			nil, []int64{15, 15}, 15},
		{"the acquirer's fee in yen", yen, nil, []int64{2239, 2239}, 2239},
		{"an inquiry's fee, reported when it escalates", inquiry, []disputeStep{
			{after: day, issuer: func(d *connector.Dispute) { d.Stage, d.Fee, d.FeeKnown = "chargeback", 1800, true }},
		}, []int64{1800, 1800}, 1800},
		{"a fee reported after the hold does not change it", withFee(chargeback, 1500), []disputeStep{
			{after: day, issuer: func(d *connector.Dispute) { d.Fee = 2000 }},
		}, []int64{1500, 1500}, 1500},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			is := &issuer{d: tc.first}
			env := newDisputeEnv(t, is)
			env.SetStartTime(start)
			for _, s := range tc.steps {
				env.RegisterDelayedCallback(func() {
					is.set(s.issuer)
					env.SignalWorkflow(workflows.SignalDisputeWord, nil)
				}, s.after)
			}
			st := runDispute(t, env)
			// Not answered, the dispute is lost at its deadline: held, then taken.
			if st.Status != dispute.Lost || st.Fee != tc.fee || !equalStrings(is.ledger, []string{"hold", "take"}) ||
				fmt.Sprint(is.fees) != fmt.Sprint(tc.fees) {
				t.Errorf("status %s fee %d, ledger %v with fees %v; want lost, %d, hold and take with %v", st.Status, st.Fee, is.ledger,
					is.fees, tc.fee, tc.fees)
			}
		})
	}
}
