package workflows

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/dispute"
	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/notify"
)

// da runs the dispute activities; workflows call them through it.
var da *activities.DisputeActivities

// DisputeInput starts a dispute's workflow: the connector and its dispute
// id, from the acquirer's signed callback.
type DisputeInput struct {
	Connector string
	DisputeID string
	// NotifySchedule is the retry schedule of the merchant's
	// notifications (the default when empty).
	NotifySchedule notify.Schedule
	// WakesPerRun bounds the wakes one run takes before the dispute
	// continues as new (DefaultDisputeWakesPerRun when 0).
	WakesPerRun int `json:",omitempty"`
	// Resume is the dispute as the run before handed it over; nil on
	// the first run.
	Resume *DisputeResume `json:",omitempty"`
}

// DefaultDisputeWakesPerRun bounds the wakes (the acquirer's words, the
// hourly asks, reminders) of one run of a dispute before it continues as
// new, beside Temporal's own suggestion. A dispute can stay open for
// months, asked every hour, and each wake adds about a dozen events: a
// history past Temporal's limit would end the workflow with the money held.
const DefaultDisputeWakesPerRun = 1000

// DisputeResume is what a dispute's next run takes over from the run
// before (changeDisputeContinueAsNew).
type DisputeResume struct {
	Order       activities.DisputedOrder
	State       DisputeState
	Answer      string `json:",omitempty"`
	HoldRefused bool   `json:",omitempty"`
	Created     time.Time
	// Woken: the acquirer's words came that the run before did not ask
	// about; the next run asks first.
	Woken bool `json:",omitempty"`
	// Runs is how many runs came before.
	Runs int
}

// DisputeState is a dispute as its workflow knows it (QueryDisputeState,
// and the answer of its updates).
type DisputeState struct {
	RecordID      string
	TransactionID string
	MerchantID    string
	AccountID     string
	Stage         dispute.Stage
	Status        dispute.Status
	Amount        money.Amount
	Fee           int64
	Reason        string
	EvidenceDue   time.Time
	Held          bool
	Submitted     bool
	Notices       int
}

// disputeWorkflow is one dispute's run.
type disputeWorkflow struct {
	in     DisputeInput
	order  activities.DisputedOrder
	state  DisputeState
	words  workflow.ReceiveChannel
	answer string // "evidence" or "accept" once the merchant answered
	busy   bool
	create time.Time
	// holdRefused: the ledger refused the hold for its values, which do
	// not change, so it is not asked again.
	holdRefused bool
}

// disputeAcquirerOptions: the acquirer is asked until it answers; a refusal
// of its values is final.
var disputeAcquirerOptions = workflow.ActivityOptions{
	StartToCloseTimeout: 30 * time.Second,
	RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 5 * time.Minute,
		NonRetryableErrorTypes: []string{activities.ErrTypeDisputeRefused}},
}

// Dispute follows one dispute from the acquirer's first word to its
// outcome. Every callback only wakes it (SignalDisputeWord); it asks the
// acquirer and moves by the domain's table. The disputed money and the
// fee are held once the acquirer has taken the money back (every stage but
// an inquiry, and an inquiry once lost), released when won and taken when
// lost or accepted. The merchant is notified of each move and reminded
// before its evidence deadline; evidence arrives by UpdateDisputeEvidence
// (read from the record, never carried here), and a deadline passed
// without it loses the dispute. It never fails because of data: a dispute
// of no order of ours is logged and ends.
func Dispute(ctx workflow.Context, in DisputeInput) (DisputeState, error) {
	w := &disputeWorkflow{in: in, words: workflow.GetSignalChannel(ctx, SignalDisputeWord), create: workflow.Now(ctx)}
	w.state.RecordID = in.Connector + ":" + in.DisputeID
	if r := in.Resume; r != nil {
		w.order, w.state, w.answer, w.holdRefused, w.create = r.Order, r.State, r.Answer, r.HoldRefused, r.Created
		w.in.Resume = nil
	}
	if err := w.registerHandlers(ctx); err != nil {
		return w.state, err
	}
	if in.Resume != nil {
		return w.follow(ctx, in.Resume.Woken, in.Resume.Runs)
	}
	facts, err := w.ask(ctx)
	if err != nil && workflow.GetVersion(ctx, changeDisputeFirstAskAgain, workflow.DefaultVersion, 1) == 1 {
		facts, err = w.askUntilAnswered(ctx)
	}
	var canceled *temporal.CanceledError
	if errors.As(err, &canceled) {
		return w.state, err
	}
	if err != nil {
		return w.state, nil
	}
	actx := workflow.WithActivityOptions(ctx, disputeAcquirerOptions)
	if err := workflow.ExecuteActivity(actx, da.FindDisputedOrder, facts.Reference).Get(ctx, &w.order); err != nil {
		return w.state, err
	}
	if !w.order.Found {
		workflow.GetLogger(ctx).Error("dispute of no order of ours", "dispute", w.state.RecordID, "reference", facts.Reference)
		return w.state, nil
	}
	w.state.TransactionID, w.state.MerchantID, w.state.AccountID = w.order.TransactionID, w.order.MerchantID, w.order.AccountID
	w.state.Amount, w.state.Reason = money.FromMinor(facts.Amount, facts.Currency), facts.Reason
	if fee, err := dispute.Fee(facts.Currency); err == nil {
		w.state.Fee = fee.Minor
	}
	_ = workflow.UpsertTypedSearchAttributes(ctx, SearchDisputeID.ValueSet(w.state.RecordID),
		SearchMerchantID.ValueSet(w.state.MerchantID), SearchAccountID.ValueSet(w.state.AccountID),
		SearchTransactionID.ValueSet(w.state.TransactionID))
	if err := w.apply(ctx, facts); err != nil {
		return w.state, err
	}
	return w.follow(ctx, false, 0)
}

// follow waits for the dispute's words until its outcome; a run resumed
// with words the run before did not ask about (woken) asks first. A run
// that has taken its share of wakes hands over to a new one.
func (w *disputeWorkflow) follow(ctx workflow.Context, woken bool, runs int) (DisputeState, error) {
	if runs > 0 {
		_ = workflow.UpsertTypedSearchAttributes(ctx, SearchDisputeID.ValueSet(w.state.RecordID),
			SearchMerchantID.ValueSet(w.state.MerchantID), SearchAccountID.ValueSet(w.state.AccountID),
			SearchTransactionID.ValueSet(w.state.TransactionID), SearchDisputeStatus.ValueSet(int64(w.state.Status.Code())))
	}
	if woken {
		if facts, err := w.ask(ctx); err == nil {
			if err := w.apply(ctx, facts); err != nil {
				return w.state, err
			}
		}
	}
	limit := cmp.Or(w.in.WakesPerRun, DefaultDisputeWakesPerRun)
	for wakes := 1; !w.state.Status.Final(); wakes++ {
		if err := w.waitForWord(ctx); err != nil {
			return w.state, err
		}
		if w.state.Status.Final() || wakes < limit && !workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			continue
		}
		if workflow.GetVersion(ctx, changeDisputeContinueAsNew, workflow.DefaultVersion, 1) == 1 {
			return w.state, w.continueAsNew(ctx, runs+1)
		}
	}
	return w.state, workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
}

// continueAsNew hands the dispute over to its next run once no answer of
// the merchant is under way; words that came meanwhile have the next run
// ask the acquirer first.
func (w *disputeWorkflow) continueAsNew(ctx workflow.Context, runs int) error {
	if err := workflow.Await(ctx, func() bool { return !w.busy && workflow.AllHandlersFinished(ctx) }); err != nil {
		return err
	}
	woken := false
	for w.words.ReceiveAsync(nil) {
		woken = true
	}
	next := w.in
	next.Resume = &DisputeResume{Order: w.order, State: w.state, Answer: w.answer, HoldRefused: w.holdRefused,
		Created: w.create, Woken: woken, Runs: runs}
	workflow.GetLogger(ctx).Info("dispute continues as new", "dispute", w.state.RecordID, "runs", runs)
	return workflow.NewContinueAsNewError(ctx, DisputeWorkflowType, next)
}

func (w *disputeWorkflow) registerHandlers(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, QueryDisputeState, func() (DisputeState, error) { return w.state, nil }); err != nil {
		return err
	}
	answerable := func(workflow.Context) error {
		if w.state.Status != dispute.NeedsResponse || w.answer != "" {
			return temporal.NewApplicationError("the dispute does not wait for an answer", ErrTypeEntryRefused)
		}
		return nil
	}
	err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateDisputeEvidence, func(ctx workflow.Context) (DisputeState, error) {
		return w.merchantAnswers(ctx, "evidence")
	}, workflow.UpdateHandlerOptions{Validator: answerable})
	if err != nil {
		return err
	}
	return workflow.SetUpdateHandlerWithOptions(ctx, UpdateAcceptDispute, func(ctx workflow.Context) (DisputeState, error) {
		return w.merchantAnswers(ctx, "accept")
	}, workflow.UpdateHandlerOptions{Validator: answerable})
}

// AnswerRefusedByAcquirer is the message of a merchant's answer the
// acquirer refused: the dispute moved there, or the acquirer did not take
// the evidence (the caller tells them apart by the dispute's status).
const AnswerRefusedByAcquirer = "the acquirer refused the answer"

// merchantAnswers sends the merchant's evidence, or its acceptance, to the
// acquirer and applies what the acquirer then says.
func (w *disputeWorkflow) merchantAnswers(ctx workflow.Context, answer string) (DisputeState, error) {
	if err := workflow.Await(ctx, func() bool { return !w.busy }); err != nil {
		return w.state, err
	}
	if w.state.Status != dispute.NeedsResponse || w.answer != "" {
		return w.state, temporal.NewApplicationError("the dispute does not wait for an answer", ErrTypeEntryRefused)
	}
	w.busy, w.answer = true, answer
	defer func() { w.busy = false }()
	actx := workflow.WithActivityOptions(ctx, disputeAcquirerOptions)
	var facts connector.Dispute
	var err error
	if answer == "evidence" {
		err = workflow.ExecuteActivity(actx, da.SubmitDisputeEvidence, activities.DisputeAnswer{Connector: w.in.Connector,
			DisputeID: w.in.DisputeID, RecordID: w.state.RecordID}).Get(ctx, &facts)
		w.state.Submitted = err == nil
	} else {
		err = workflow.ExecuteActivity(actx, da.AcceptDispute, activities.DisputeAsk{Connector: w.in.Connector,
			DisputeID: w.in.DisputeID}).Get(ctx, &facts)
	}
	if err != nil {
		w.answer = ""
		if errorType(err) != activities.ErrTypeDisputeRefused ||
			workflow.GetVersion(ctx, changeDisputeRefusedAnswer, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
			return w.state, err
		}
		// The acquirer refused the answer (the dispute moved there, or it
		// took the answer before): the dispute takes what the acquirer now
		// says, and the merchant is told the dispute no longer waits for
		// this answer.
		if facts, err := w.ask(ctx); err == nil {
			if err := w.apply(ctx, facts); err != nil {
				return w.state, err
			}
		}
		return w.state, temporal.NewApplicationError(AnswerRefusedByAcquirer, ErrTypeEntryRefused)
	}
	return w.state, w.apply(ctx, facts)
}

// waitForWord waits for the acquirer's next word, the merchant's answer,
// a reminder or the evidence deadline. A dispute ops cancel ends: its
// timers and inquiries would all return at once, for ever.
func (w *disputeWorkflow) waitForWord(ctx workflow.Context) error {
	if err := ctx.Err(); err != nil {
		return temporal.NewCanceledError("the dispute's workflow was cancelled")
	}
	status := w.state.Status
	due := w.state.EvidenceDue
	var next time.Time
	reminder := false
	if status == dispute.NeedsResponse && w.answer == "" && !due.IsZero() {
		next = due
		if rs := dispute.RemindersBefore(due, workflow.Now(ctx)); len(rs) > 0 {
			next, reminder = rs[0], true
		}
	}
	woken := false
	sel := workflow.NewSelector(ctx)
	sel.AddReceive(w.words, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil); woken = true })
	tctx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	if !next.IsZero() {
		sel.AddFuture(workflow.NewTimer(tctx, max(next.Sub(workflow.Now(ctx)), 0)), func(workflow.Future) {})
	}
	moved := workflow.NewTimer(tctx, time.Hour) // a word lost on the way: ask again now and then
	sel.AddFuture(moved, func(workflow.Future) { woken = true })
	sel.AddFuture(w.changed(tctx, status), func(workflow.Future) {})
	sel.Select(ctx)
	switch {
	case w.state.Status != status || w.state.Status.Final():
		return nil
	case woken:
		facts, err := w.ask(ctx)
		if err == nil && w.state.Status != status && workflow.GetVersion(ctx, changeDisputeStaleAnswer, workflow.DefaultVersion, 1) == 1 {
			// The merchant's answer moved the dispute while the acquirer
			// was asked, so its answer may predate that move (applied, it
			// would move the dispute back and tell the merchant twice):
			// ask again, after the move.
			facts, err = w.ask(ctx)
		}
		if err != nil {
			// The acquirer refused the inquiry (logged): the dispute
			// stands as it is and is asked again later.
			return nil
		}
		return w.apply(ctx, facts)
	case !next.IsZero() && !workflow.Now(ctx).Before(next) && reminder:
		return w.notify(ctx, "reminder")
	case !next.IsZero() && !workflow.Now(ctx).Before(next):
		return w.deadlinePassed(ctx)
	}
	return nil
}

// changed is ready once the dispute's status is no longer status (an
// update moved it).
func (w *disputeWorkflow) changed(ctx workflow.Context, status dispute.Status) workflow.Future {
	f, set := workflow.NewFuture(ctx)
	workflow.Go(ctx, func(ctx workflow.Context) {
		if workflow.Await(ctx, func() bool { return w.state.Status != status }) == nil {
			set.Set(nil, nil)
		}
	})
	return f
}

// deadlinePassed loses a dispute the merchant did not answer in time: the
// acquirer is told no answer comes.
func (w *disputeWorkflow) deadlinePassed(ctx workflow.Context) error {
	if w.answer != "" || w.busy {
		return nil
	}
	w.answer = "none"
	actx := workflow.WithActivityOptions(ctx, disputeAcquirerOptions)
	var facts connector.Dispute
	if err := workflow.ExecuteActivity(actx, da.AcceptDispute, activities.DisputeAsk{Connector: w.in.Connector,
		DisputeID: w.in.DisputeID}).Get(ctx, &facts); err != nil {
		workflow.GetLogger(ctx).Warn("the acquirer refused the late dispute's loss; asking it", "dispute", w.state.RecordID, "error", err)
		if facts, err = w.ask(ctx); err != nil {
			return nil
		}
	}
	return w.apply(ctx, facts)
}

// firstAskFor is how long a dispute whose first inquiry the acquirer
// refused goes on asking before it gives up: its evidence window, about.
const firstAskFor = 7 * 24 * time.Hour

// askUntilAnswered asks the acquirer again, on its next word and every
// hour, until it answers or firstAskFor has passed. A refusal of the first
// inquiry is often passing (a worker without the connector's settings
// during a deploy, a revoked key replaced, an acquirer whose reads lag its
// callbacks), and the workflow is the dispute's only keeper: the word
// that started it is taken, and later ones only signal it.
func (w *disputeWorkflow) askUntilAnswered(ctx workflow.Context) (connector.Dispute, error) {
	until := workflow.Now(ctx).Add(firstAskFor)
	for {
		if err := ctx.Err(); err != nil {
			// Cancelled by ops: every timer and inquiry would return at once.
			return connector.Dispute{}, temporal.NewCanceledError("the dispute's workflow was cancelled")
		}
		tctx, cancel := workflow.WithCancel(ctx)
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(w.words, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil) })
		sel.AddFuture(workflow.NewTimer(tctx, time.Hour), func(workflow.Future) {})
		sel.Select(ctx)
		cancel()
		facts, err := w.ask(ctx)
		if err == nil || !workflow.Now(ctx).Before(until) {
			if err != nil {
				workflow.GetLogger(ctx).Error("the acquirer refused every inquiry of the dispute; giving up",
					"dispute", w.state.RecordID, "error", err)
			}
			return facts, err
		}
	}
}

// ask asks the acquirer where the dispute stands.
func (w *disputeWorkflow) ask(ctx workflow.Context) (connector.Dispute, error) {
	actx := workflow.WithActivityOptions(ctx, disputeAcquirerOptions)
	var facts connector.Dispute
	err := workflow.ExecuteActivity(actx, da.AskDispute, activities.DisputeAsk{Connector: w.in.Connector, DisputeID: w.in.DisputeID}).Get(ctx, &facts)
	if err != nil {
		workflow.GetLogger(ctx).Error("the acquirer refused the dispute inquiry", "dispute", w.state.RecordID, "error", err)
	}
	return facts, err
}

// apply moves the dispute to what the acquirer says, as the table allows:
// the money held, released or taken, the record written and the merchant
// notified.
func (w *disputeWorkflow) apply(ctx workflow.Context, facts connector.Dispute) error {
	stage, status, ok := dispute.Read(facts.Stage, facts.Status)
	if !ok {
		workflow.GetLogger(ctx).Warn("dispute words not understood", "dispute", w.state.RecordID, "stage", facts.Stage, "status", facts.Status)
		return nil
	}
	if (status == dispute.Lost) && w.answer == "accept" {
		status = dispute.Accepted
	}
	from := w.state.Status
	if from != "" {
		if err := dispute.Check(from, status); err != nil {
			workflow.GetLogger(ctx).Warn("dispute move refused", "dispute", w.state.RecordID, "error", err)
			return nil
		}
	}
	if from == status && w.state.Stage == stage && (status != dispute.NeedsResponse || w.state.EvidenceDue.Equal(facts.EvidenceDue)) {
		return nil
	}
	escalated := w.state.Stage != "" && stage != w.state.Stage
	w.state.Stage, w.state.Status = stage, status
	w.state.EvidenceDue = time.Time{}
	if status == dispute.NeedsResponse {
		w.state.EvidenceDue = facts.EvidenceDue
		switch {
		case escalated:
			w.answer = "" // a new stage asks for a new answer
		case from == dispute.UnderReview && w.answer != "" &&
			workflow.GetVersion(ctx, changeDisputeAskedAgain, workflow.DefaultVersion, 1) == 1:
			// The acquirer asks for more at the same stage: the answer
			// given is not the one now due.
			w.answer = ""
		}
	}
	// The acquirer's own fee is what the merchant pays, passed through,
	// until the hold fixes it (dispute.Fee's default where none is
	// reported). Facts recorded before acquirers reported fees have none,
	// so their histories replay as they ran.
	if facts.FeeKnown && !w.state.Held && workflow.GetVersion(ctx, changeDisputeAcquirerFee, workflow.DefaultVersion, 1) == 1 {
		w.state.Fee = facts.Fee
	}
	if !w.holdRefused && dispute.NeedsHold(w.state.Held, stage, status) && (stage != dispute.Inquiry ||
		workflow.GetVersion(ctx, changeDisputeInquiryLost, workflow.DefaultVersion, 1) == 1) {
		posted, err := w.post(ctx, da.HoldDispute)
		if err != nil {
			return err
		}
		// A hold the ledger refused is not held: the record says so, and
		// the outcome moves nothing it does not hold.
		if !posted && workflow.GetVersion(ctx, changeDisputeHoldRefused, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
			posted = true
		}
		w.state.Held, w.holdRefused = posted, !posted
	}
	switch dispute.Settle(w.state.Held, status) {
	case dispute.Release:
		if _, err := w.post(ctx, da.ReleaseDispute); err != nil {
			return err
		}
	case dispute.Take:
		if _, err := w.post(ctx, da.TakeDispute); err != nil {
			return err
		}
	}
	if err := w.save(ctx); err != nil {
		return err
	}
	_ = workflow.UpsertTypedSearchAttributes(ctx, SearchDisputeStatus.ValueSet(int64(status.Code())))
	return w.notify(ctx, string(status))
}

// disputeLedgerOptions: a ledger step is retried until the database takes
// it; a refusal of its values is final.
var disputeLedgerOptions = workflow.ActivityOptions{
	StartToCloseTimeout: 10 * time.Second,
	RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute,
		NonRetryableErrorTypes: []string{activities.ErrTypeDisputeRefused}},
}

// post runs one ledger step (an activity of da) of the dispute's money and
// reports whether it posted. A step the ledger refuses for its values is
// logged for ops: the dispute goes on, as a workflow never fails because
// of data.
func (w *disputeWorkflow) post(ctx workflow.Context, step any) (bool, error) {
	actx := workflow.WithActivityOptions(ctx, disputeLedgerOptions)
	err := workflow.ExecuteActivity(actx, step, activities.DisputeMoney{Reference: w.state.RecordID, OrderKey: w.state.TransactionID,
		MerchantID: w.state.MerchantID, AccountID: w.state.AccountID, Currency: w.state.Amount.Currency,
		Amount: w.state.Amount.Minor, Fee: w.state.Fee}).Get(ctx, nil)
	if errorType(err) == activities.ErrTypeDisputeRefused {
		workflow.GetLogger(ctx).Error("the ledger refused a dispute step", "dispute", w.state.RecordID, "error", err)
		return false, nil
	}
	return err == nil, err
}

// save writes the dispute's record.
func (w *disputeWorkflow) save(ctx workflow.Context) error {
	d := activities.DisputeRecord{ID: w.state.RecordID, Connector: w.in.Connector, ConnectorRef: w.in.DisputeID,
		WorkflowID: workflow.GetInfo(ctx).WorkflowExecution.ID, TransactionID: w.state.TransactionID,
		MerchantID: w.state.MerchantID, AccountID: w.state.AccountID, OrderNo: w.order.OrderNo,
		Currency: w.state.Amount.Currency, Amount: w.state.Amount.Minor, Fee: w.state.Fee, Reason: w.state.Reason,
		Stage: string(w.state.Stage), Status: string(w.state.Status), Held: w.state.Held,
		CreatedAt: w.create, UpdatedAt: workflow.Now(ctx)}
	if !w.state.EvidenceDue.IsZero() {
		due := w.state.EvidenceDue
		d.EvidenceDue = &due
	}
	lctx := workflow.WithLocalActivityOptions(ctx, storeOptions)
	err := workflow.ExecuteLocalActivity(lctx, da.SaveDispute, d).Get(ctx, nil)
	if errorType(err) == activities.ErrTypeRecordRejected {
		workflow.GetLogger(ctx).Error("dispute not recorded", "dispute", w.state.RecordID, "error", err)
		return nil
	}
	return err
}

// notify records a notification of the dispute (kind: its new status, or
// "reminder") and hands it to a Redeliver child that outlives this run.
func (w *disputeWorkflow) notify(ctx workflow.Context, kind string) error {
	if w.order.NotifyURL == "" {
		return nil
	}
	w.state.Notices++
	id := fmt.Sprintf("dp-%s-%02d", w.in.DisputeID, w.state.Notices)
	if len(id) > 40 {
		if workflow.GetVersion(ctx, changeDisputeNoticeID, workflow.DefaultVersion, 1) == 1 {
			// A dispute id too long for the column (a UUID's 36) is named
			// by its digest, so the notice's number is kept and each
			// notice has an id of its own.
			id = fmt.Sprintf("dp-%s-%02d", disputeDigest(w.in.DisputeID), w.state.Notices)
		} else {
			id = id[:40]
		}
	}
	due := ""
	if !w.state.EvidenceDue.IsZero() {
		due = w.state.EvidenceDue.UTC().Format(time.RFC3339)
	}
	fields := map[string]string{
		notify.NotifyTypeField: notify.TypeDispute, "notify_id": id, "event": kind,
		"merchant_id": w.state.MerchantID, "account_id": w.state.AccountID, "transaction_id": w.state.TransactionID,
		"order_no": w.order.OrderNo, "dispute_id": w.state.RecordID, "stage": string(w.state.Stage),
		"status": string(w.state.Status), "reason": w.state.Reason, "currency": w.state.Amount.Currency,
		"amount": w.state.Amount.String(), "fee": money.FromMinor(w.state.Fee, w.state.Amount.Currency).String(),
		"evidence_due_by": due,
	}
	lctx := workflow.WithLocalActivityOptions(ctx, storeOptions)
	if err := workflow.ExecuteLocalActivity(lctx, da.RecordDisputeNotice, activities.DisputeNotice{NotifyID: id,
		TransactionID: w.state.TransactionID, MerchantID: w.state.MerchantID, AccountID: w.state.AccountID,
		OrderNo: w.order.OrderNo, URL: w.order.NotifyURL, Fields: fields}).Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Error("dispute notification not recorded", "dispute", w.state.RecordID, "error", err)
		return nil
	}
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID: "notify/" + id, ParentClosePolicy: enumspb.PARENT_CLOSE_POLICY_ABANDON,
	})
	child := workflow.ExecuteChildWorkflow(cctx, RedeliverWorkflowType, RedeliverInput{NotifyIDs: []string{id}, Schedule: w.in.NotifySchedule})
	if err := child.GetChildWorkflowExecution().Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Error("dispute notification not started", "dispute", w.state.RecordID, "error", err)
	}
	return nil
}

// disputeDigest names a dispute id in 24 hex digits of its SHA-256.
func disputeDigest(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:12])
}
