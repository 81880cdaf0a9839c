package workflows

import (
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/internal/domain/notify"
	"github.com/paygate/paygate/internal/domain/payout"
)

// pa names the payout activities; the workflow never dereferences it.
var pa *activities.PayoutActivities

// PayoutInput is what a payout run starts from. A finance re-run starts a
// new run of the same workflow id from the stored payout with Run one
// higher; everything else is the same, so the rail sees the same key.
type PayoutInput struct {
	ID               string
	MerchantID       string
	AccountID        string
	RequestID        string
	TransactionID    string
	ShortReferenceID string
	Instruction      payout.Instruction
	NotifyURL        string
	// Mode is the account's mode when the payout was asked for: a test
	// account's payout goes to the simulated rail only. Empty (payouts
	// started before modes reached payouts) is live.
	Mode string
	// Run is 1 for the merchant's request, n+1 for the n-th re-run.
	Run int
	// NotifySchedule is the retry schedule of the payout's notification.
	NotifySchedule notify.Schedule
	// Charges, set on a re-run of a payout that was priced, are the charges
	// its first run recorded: the re-run sends the rail the same transfer
	// under the same key, even if the operator's rates or fees changed.
	Charges *payout.Charges `json:",omitempty"`
	// RailCallbacks: the rail tells the gateway when a transfer moves
	// (SignalPayoutTransferMoved), so the payout polls it rarely, as a
	// fallback. Runs started before callbacks poll as they did.
	RailCallbacks bool `json:",omitempty"`
	// Shape is the payout code's shape the run was started with
	// (CurrentPayoutShape for a new run, 0 for runs started before shapes):
	// see payoutShapeMerged.
	Shape int `json:",omitempty"`
}

// CurrentPayoutShape is the shape new payout runs are started with.
const CurrentPayoutShape = payoutShapeMerged

// payoutShapeMerged (shape 1) trims a payout's history from 29 events to
// 19: the changes made before it (local rail calls, an unknown submission
// keeping the money reserved, the notification's first attempt made
// inline) are taken without a version marker and its search-attribute
// upsert each; the search attributes the start set are not upserted again;
// the record, price and reservation are one local activity (PayoutOpen),
// and the reservation's settlement or release, the final record and the
// notification's row another (PayoutClose). The engine's work follows the
// events, and each local activity is a round of the workflow task.
const payoutShapeMerged = 1

// payoutSettled are the payout's changes settled by a shape.
var payoutSettled = map[string]settled{
	changePayoutLocalRail:         {payoutShapeMerged, 1},
	changePayoutUnknownSubmission: {payoutShapeMerged, 1},
	changePayoutNotifyInline:      {payoutShapeMerged, 1},
}

// version is workflow.GetVersion for the payout's changes, answered from the
// run's shape when the shape settles the change.
func (w *payoutWorkflow) version(ctx workflow.Context, changeID string, maxSupported workflow.Version) workflow.Version {
	if v, ok := settledVersion(payoutSettled, w.in.Shape, changeID); ok {
		return v
	}
	return workflow.GetVersion(ctx, changeID, workflow.DefaultVersion, maxSupported)
}

// merged reports whether the run takes shape 1's merged steps.
func (w *payoutWorkflow) merged() bool { return w.in.Shape >= payoutShapeMerged }

// PayoutState is the payout as the workflow knows it (QueryPayoutState and
// the workflow's result).
type PayoutState = payout.State

// Payout activity options. Records are short Postgres writes retried for
// a day (a database outage must not fail a payout that moved money);
// rail calls retry a transient rail for about ten minutes before the
// payout is given up as RAIL_UNAVAILABLE.
var (
	// Records, pricing and ledger postings are short local calls: local
	// activities spare them a round trip through the task queue each.
	payoutStoreOptions = workflow.LocalActivityOptions{
		StartToCloseTimeout: 15 * time.Second,
		// Without it a local activity's retries stop at one attempt's
		// start-to-close: a database away for 15 s would end the payout.
		ScheduleToCloseTimeout: 24 * time.Hour,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: 200 * time.Millisecond, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second,
			NonRetryableErrorTypes: []string{activities.ErrTypeRecordRejected, activities.ErrTypePayoutLedgerRefused},
		},
	}
	payoutRailOptions = workflow.ActivityOptions{
		StartToCloseTimeout: 20 * time.Second,
		RetryPolicy:         payoutRailRetry,
	}
	// The same calls as local activities (changePayoutLocalRail): each is
	// one short HTTP call under the payout's idempotency key, so running
	// it inside the workflow task spares the payout a round trip through
	// the task queue per call (a worker that dies re-runs it, safely).
	payoutRailLocalOptions = workflow.LocalActivityOptions{
		StartToCloseTimeout: 20 * time.Second,
		// A local activity's retries stop at its schedule-to-close
		// timeout, which defaults to one attempt's: this one outlasts the
		// 30 attempts (about twelve minutes), as the activity's do.
		ScheduleToCloseTimeout: 15 * time.Minute,
		RetryPolicy:            payoutRailRetry,
	}
	payoutRailRetry = &temporal.RetryPolicy{
		InitialInterval: 200 * time.Millisecond, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second,
		MaximumAttempts:        30,
		NonRetryableErrorTypes: []string{activities.ErrTypePayoutRailRejected},
	}
)

// rail calls the payout rail through activity fn: a local activity from
// changePayoutLocalRail on, an activity on the task queue before.
func (w *payoutWorkflow) rail(ctx workflow.Context, fn, in, out any) error {
	if w.localRail {
		return workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, payoutRailLocalOptions), fn, in).Get(ctx, out)
	}
	return workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, payoutRailOptions), fn, in).Get(ctx, out)
}

// askRail calls the rail through fn as rail does and, when the call's retries
// run out on a rail that does not answer, asks again on a growing durable
// timer (railOutageFirst doubling to railOutageMax) for railOutageHorizon
// (changePayoutRailOutage). Only the rail's word on a transfer may release
// or settle its money, and an outage of more than the retries' quarter of an
// hour is an outage to wait out, not an answer.
func (w *payoutWorkflow) askRail(ctx workflow.Context, fn, in, out any) error {
	err := w.rail(ctx, fn, in, out)
	if err == nil || isRailRejected(err) {
		return err
	}
	if w.version(ctx, changePayoutRailOutage, 1) == workflow.DefaultVersion {
		return err
	}
	giveUp := workflow.Now(ctx).Add(railOutageHorizon)
	for wait := railOutageFirst; workflow.Now(ctx).Before(giveUp); wait = min(2*wait, railOutageMax) {
		workflow.GetLogger(ctx).Warn("payout rail not answering: asking again later", "payout", w.in.ID, "wait", wait, "error", err)
		if serr := workflow.Sleep(ctx, wait); serr != nil {
			return fmt.Errorf("%w (asking again stopped: %w)", err, serr)
		}
		if err = w.rail(ctx, fn, in, out); err == nil || isRailRejected(err) {
			return err
		}
	}
	return err
}

// Asking a rail that does not answer again (askRail).
const (
	railOutageFirst   = time.Minute
	railOutageMax     = time.Hour
	railOutageHorizon = 24 * time.Hour
)

// Polling of a submitted transfer: from payoutPollFirst doubling to
// payoutPollMax. Each poll is a durable timer, so a long wait costs nothing.
const (
	payoutPollFirst = 100 * time.Millisecond
	payoutPollMax   = time.Minute
	// payoutCallbackPollFirst is the first poll when the rail calls back:
	// the rail's word is what usually wakes the payout.
	payoutCallbackPollFirst = 5 * time.Second
)

// payoutNotifyOptions run a payout notification's first attempt: one try
// of at most 5 s, no retries: a notification not acknowledged goes to the
// Redeliver workflow's schedule.
var payoutNotifyOptions = workflow.LocalActivityOptions{
	// Short: a slow or dead notify_url must not hold a workflow-task slot
	// the worker's payments need; it is the Redeliver workflow's to wait on.
	StartToCloseTimeout: 5 * time.Second,
	RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
}

// payoutWorkflow is one run's state.
type payoutWorkflow struct {
	in    PayoutInput
	state PayoutState
	// localRail: the rail is called by local activities (changePayoutLocalRail).
	localRail bool
}

// Payout runs one payout: record it, price it (quote and fee), reserve the
// payer's money in the ledger, wait for payment_date, submit the transfer to
// the rail under the workflow id as idempotency key, poll until the rail
// completes or fails it, settle or release the reservation, record every
// status, and notify the merchant of the outcome. A payout that fails for
// its data ends FAILED with a failure type; the workflow itself does not
// fail for data.
func Payout(ctx workflow.Context, in PayoutInput) (PayoutState, error) {
	if in.Run < 1 {
		in.Run = 1
	}
	w := &payoutWorkflow{in: in, state: PayoutState{Status: payout.StatusNew}}
	w.localRail = w.version(ctx, changePayoutLocalRail, 1) == 1
	if err := workflow.SetQueryHandler(ctx, QueryPayoutState, func() (PayoutState, error) { return w.state, nil }); err != nil {
		return w.state, err
	}
	if !w.merged() {
		// A run of shape 1 has them from its start (flows.payoutStartOptions).
		w.searchAttributes(ctx)
	}
	if done, err := w.open(ctx); done || err != nil {
		return w.state, err
	}

	if err := w.awaitPaymentDate(ctx); err != nil {
		fctx := ctx
		if temporal.IsCanceledError(err) && workflow.GetVersion(ctx, changePayoutCancelRelease, workflow.DefaultVersion, 1) == 1 {
			// Cancelled while it waited: on the cancelled context the
			// release and the record would fail at once, and the money
			// would stay reserved.
			fctx, _ = workflow.NewDisconnectedContext(ctx)
		}
		return w.finish(fctx, payout.FailureUnknown, "payout cancelled before its payment date", true)
	}

	t, err := w.submit(ctx)
	if errors.Is(err, errTransferUnknown) {
		// As when the rail stops answering about a transfer it accepted
		// (below): the money stays reserved, for ops to resolve.
		workflow.GetLogger(ctx).Error("payout outcome unknown", "payout", in.ID, "error", err)
		return w.state, err
	}
	if err != nil {
		return w.finish(ctx, payout.FailureRailRejected, "the payout rail refused the transfer: "+failureReason(err), true)
	}
	if !t.Found {
		return w.finish(ctx, payout.FailureRailUnavailable, payout.FailureRailUnavailable.Reason(), true)
	}
	w.state.RailTransferID = t.ID
	if err := w.record(ctx, payout.StatusSubmitted, nil, t.ID); err != nil {
		return w.state, err
	}

	t, err = w.poll(ctx, t)
	if err != nil {
		// The rail no longer answers about a transfer it accepted: the
		// outcome is unknown, so the money stays reserved for ops to
		// resolve rather than be released for a payout that may have paid.
		workflow.GetLogger(ctx).Error("payout outcome unknown", "payout", in.ID, "error", err)
		return w.state, err
	}
	if t.Status == activities.TransferFailed {
		return w.finish(ctx, t.FailureType, t.FailureReason, true)
	}
	w.state.Status = payout.StatusCompleted
	return w.close(ctx, true, true)
}

// open records the run's start, prices it and reserves its money. It
// reports done when the run has ended (a price or a reservation refused,
// the payout finished FAILED) and the error that ends the run, if any.
func (w *payoutWorkflow) open(ctx workflow.Context) (done bool, err error) {
	in := w.in
	sctx := workflow.WithLocalActivityOptions(ctx, payoutStoreOptions)
	start := activities.PayoutRecordStartInput{
		ID: in.ID, MerchantID: in.MerchantID, AccountID: in.AccountID, RequestID: in.RequestID,
		TransactionID: in.TransactionID, ShortReferenceID: in.ShortReferenceID, Instruction: in.Instruction,
		NotifyURL: in.NotifyURL, Mode: in.Mode, Run: in.Run, At: workflow.Now(ctx),
	}
	if w.merged() {
		var opened activities.PayoutOpenResult
		err := workflow.ExecuteLocalActivity(sctx, pa.PayoutOpen, activities.PayoutOpenInput{
			Start: start, Charges: in.Charges, Reference: w.reference()}).Get(ctx, &opened)
		if err == nil && opened.ShortReferenceID != "" {
			// Another payout held the reference drawn: the rail and the
			// merchant's notification get the one recorded.
			w.in.ShortReferenceID = opened.ShortReferenceID
		}
		switch {
		case errorType(err) == activities.ErrTypePayoutReserveFailed:
			_, err := w.finish(ctx, payout.FailureUnknown, "funds could not be reserved: "+failureReason(err), w.releaseUnreserved(ctx))
			return true, err
		case err != nil:
			// Without its record the payout does not exist for the
			// merchant; nothing has moved, so the run ends here.
			workflow.GetLogger(ctx).Error("payout not recorded", "payout", in.ID, "error", err)
			return true, err
		case opened.FailureType != "":
			_, err := w.finish(ctx, opened.FailureType, opened.FailureReason, false)
			return true, err
		}
		w.state.Charges = &opened.Charges
		switch {
		case opened.ReserveRefused != "":
			_, err := w.finish(ctx, payout.FailureUnknown, "funds could not be reserved: "+opened.ReserveRefused, w.releaseUnreserved(ctx))
			return true, err
		case opened.Insufficient:
			_, err := w.finish(ctx, payout.FailureInsufficientFunds, payout.FailureInsufficientFunds.Reason(), false)
			return true, err
		}
		return false, nil
	}

	if err := workflow.ExecuteLocalActivity(sctx, pa.PayoutRecordStart, start).Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Error("payout not recorded", "payout", in.ID, "error", err)
		return true, err
	}
	var priced activities.PayoutPriceResult
	if in.Charges != nil {
		priced.Charges = *in.Charges
	} else if err := workflow.ExecuteLocalActivity(sctx, pa.PayoutPrice,
		activities.PayoutPriceInput{Instruction: in.Instruction, At: workflow.Now(ctx)}).Get(ctx, &priced); err != nil {
		_, err := w.finish(ctx, payout.FailureUnknown, failureReason(err), false)
		return true, err
	}
	if priced.FailureType != "" {
		_, err := w.finish(ctx, priced.FailureType, priced.FailureReason, false)
		return true, err
	}
	w.state.Charges = &priced.Charges
	if err := w.record(ctx, payout.StatusNew, w.state.Charges, ""); err != nil {
		return true, err
	}
	ch := priced.Charges
	var reserved activities.PayoutReserveResult
	err = workflow.ExecuteLocalActivity(sctx, pa.PayoutReserve, activities.PayoutReserveInput{
		Reference: w.reference(), MerchantID: in.MerchantID, AccountID: in.AccountID,
		Currency: ch.Transfer.Currency, Amount: ch.Transfer.Minor, Fee: ch.Fee.Minor,
	}).Get(ctx, &reserved)
	switch {
	case err != nil:
		_, err := w.finish(ctx, payout.FailureUnknown, "funds could not be reserved: "+failureReason(err), w.releaseUnreserved(ctx))
		return true, err
	case reserved.Insufficient:
		_, err := w.finish(ctx, payout.FailureInsufficientFunds, payout.FailureInsufficientFunds.Reason(), false)
		return true, err
	}
	return false, nil
}

// releaseUnreserved reports whether a run whose reservation was refused or
// failed releases it all the same: an earlier attempt of the run may have
// made it (a worker that died after the commit, the retry priced anew and
// refused as a conflict), and nothing else would ever release it. Releasing
// a reservation never made changes nothing.
func (w *payoutWorkflow) releaseUnreserved(ctx workflow.Context) bool {
	return w.version(ctx, changePayoutReleaseUnreserved, 1) != workflow.DefaultVersion
}

// reference is the ledger reservation of this run. Each run reserves anew,
// so it carries the run number: a re-run after a released reservation is a
// new reservation, not a repeat of the closed one.
func (w *payoutWorkflow) reference() string {
	return payout.ReservationReference(w.in.ID, w.in.Run)
}

// awaitPaymentDate waits, SCHEDULED, until the payout's payment_date.
func (w *payoutWorkflow) awaitPaymentDate(ctx workflow.Context) error {
	wait := w.in.Instruction.PaymentDate.Sub(workflow.Now(ctx))
	if wait <= 0 {
		return nil
	}
	w.state.Status = payout.StatusScheduled
	if err := w.record(ctx, payout.StatusScheduled, nil, ""); err != nil {
		return err
	}
	w.searchAttributes(ctx)
	return workflow.Sleep(ctx, wait)
}

// submit hands the transfer to the rail. It first learns the transfer's
// latest attempt under the key (one of an earlier run, when this is a
// re-run), so that retries of the submission after a timeout or a worker
// crash never start a second attempt of this run. A transfer the rail never
// accepted despite the retries comes back with Found false.
func (w *payoutWorkflow) submit(ctx workflow.Context) (activities.PayoutTransfer, error) {
	var prior activities.PayoutTransfer
	if err := w.askRail(ctx, pa.PayoutFindTransfer, activities.PayoutFindInput{IdempotencyKey: w.in.ID, Mode: w.in.Mode}, &prior); err != nil {
		if isRailRejected(err) {
			return prior, err
		}
		if w.version(ctx, changePayoutRailOutage, 1) == workflow.DefaultVersion {
			return activities.PayoutTransfer{}, nil
		}
		// No answer for a day. This look is not proof that nothing was
		// submitted: the rail calls are local activities, and a worker that
		// died after the rail took the transfer, before its workflow task
		// completed, left no trace of the submission in the history, so
		// this look is then run again. Releasing could pay the money twice.
		return activities.PayoutTransfer{}, fmt.Errorf("%w: %w", errTransferUnknown, err)
	}
	in := w.in.Instruction
	ch := w.state.Charges
	b := in.Request.Beneficiary
	var bank payout.BankDetails
	if b != nil {
		bank = b.BankDetails
	}
	req := activities.PayoutSubmitInput{
		IdempotencyKey: w.in.ID,
		Mode:           w.in.Mode,
		Amount:         ch.BeneficiaryReceives.Minor,
		Currency:       ch.BeneficiaryReceives.Currency,
		Beneficiary: activities.PayoutBeneficiary{Name: bank.AccountName, IBAN: string(in.IBAN),
			BIC: string(in.BIC), Country: bank.BankCountryCode},
		Reference:    w.in.ShortReferenceID,
		PriorAttempt: prior.Attempt,
	}
	if in.IBAN == "" {
		req.Beneficiary.AccountNumber = bank.AccountNumber.String()
	}
	var t activities.PayoutTransfer
	err := w.rail(ctx, pa.PayoutSubmit, req, &t)
	if err == nil {
		return t, nil
	}
	if isRailRejected(err) {
		return t, err
	}
	// The retries ran out on a rail that did not answer: the last
	// submission may still have been accepted, so ask once more before
	// giving up.
	var found activities.PayoutTransfer
	if ferr := w.askRail(ctx, pa.PayoutFindTransfer, activities.PayoutFindInput{IdempotencyKey: w.in.ID, Mode: w.in.Mode}, &found); ferr != nil {
		if w.version(ctx, changePayoutUnknownSubmission, 1) == workflow.DefaultVersion {
			return activities.PayoutTransfer{}, nil
		}
		// Nor does it answer whether it took the transfer: it may pay it,
		// so the money must stay reserved.
		return activities.PayoutTransfer{}, fmt.Errorf("%w: %w", errTransferUnknown, ferr)
	}
	taken := func() bool {
		return found.Found && (found.Status != activities.TransferFailed || found.Attempt > prior.Attempt)
	}
	if taken() {
		return found, nil
	}
	if w.version(ctx, changePayoutLookAgain, 1) == workflow.DefaultVersion {
		return activities.PayoutTransfer{}, nil
	}
	// A submission still on its way may land after that first look (the
	// rail does not refuse requests past their deadline): the money stays
	// reserved while the rail is asked again, an hour in all.
	var ferr error
	done, err := onLateLooks(ctx, func() (bool, bool) {
		found = activities.PayoutTransfer{}
		if ferr = w.askRail(ctx, pa.PayoutFindTransfer, activities.PayoutFindInput{IdempotencyKey: w.in.ID, Mode: w.in.Mode}, &found); ferr != nil {
			return false, true
		}
		return taken(), false
	})
	switch {
	case err != nil:
		return activities.PayoutTransfer{}, fmt.Errorf("%w: %w", errTransferUnknown, err)
	case ferr != nil:
		return activities.PayoutTransfer{}, fmt.Errorf("%w: %w", errTransferUnknown, ferr)
	case done:
		return found, nil
	}
	return activities.PayoutTransfer{}, nil
}

// errTransferUnknown is submit's error when the rail answered neither the
// submission nor the question whether it took it.
var errTransferUnknown = errors.New("the rail did not say whether it took the transfer")

// failureReason is what the merchant reads of an activity's error: its own
// message, without Temporal's wrapping (activity type, event ids, the
// worker's host name).
func failureReason(err error) string {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		return appErr.Message()
	}
	var timeout *temporal.TimeoutError
	if errors.As(err, &timeout) {
		return "no answer in time"
	}
	return err.Error()
}

// isRailRejected reports whether err is the rail's refusal of the request.
func isRailRejected(err error) bool {
	var app *temporal.ApplicationError
	return errors.As(err, &app) && app.Type() == activities.ErrTypePayoutRailRejected
}

// poll reads the transfer on a growing durable timer until the rail has
// decided it. With rail callbacks the rail's word wakes it sooner; the word
// is a rumour, so it only makes the payout ask the rail, and the timer,
// longer then, is the fallback for a word that never comes.
func (w *payoutWorkflow) poll(ctx workflow.Context, t activities.PayoutTransfer) (activities.PayoutTransfer, error) {
	wait := payoutPollFirst
	var moved workflow.ReceiveChannel
	if w.in.RailCallbacks {
		wait = payoutCallbackPollFirst
		moved = workflow.GetSignalChannel(ctx, SignalPayoutTransferMoved)
	}
	for t.Status == activities.TransferSubmitted {
		if err := w.waitForRail(ctx, wait, moved); err != nil {
			return t, err
		}
		wait = min(2*wait, payoutPollMax)
		if err := w.askRail(ctx, pa.PayoutGetTransfer, activities.PayoutGetInput{TransferID: t.ID, PayoutID: w.in.ID, Mode: w.in.Mode}, &t); err != nil {
			return t, err
		}
	}
	return t, nil
}

// waitForRail waits for the next poll, or for the rail's word on moved
// (nil: none comes) when it comes first; every word waiting is taken, as
// one poll answers them all.
func (w *payoutWorkflow) waitForRail(ctx workflow.Context, wait time.Duration, moved workflow.ReceiveChannel) error {
	if moved == nil {
		return workflow.Sleep(ctx, wait)
	}
	tctx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	timer := workflow.NewTimer(tctx, wait)
	var timerErr error
	sel := workflow.NewSelector(ctx)
	sel.AddFuture(timer, func(f workflow.Future) { timerErr = f.Get(ctx, nil) })
	sel.AddReceive(moved, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil) })
	sel.Select(ctx)
	for moved.ReceiveAsync(nil) {
	}
	if timerErr != nil && !temporal.IsCanceledError(timerErr) {
		return timerErr
	}
	return ctx.Err()
}

// finish ends the payout FAILED: the reservation released when there is
// one, the status recorded and the merchant notified.
func (w *payoutWorkflow) finish(ctx workflow.Context, ft payout.FailureType, reason string, release bool) (PayoutState, error) {
	w.state = w.state.Failed(ft, reason)
	return w.close(ctx, false, release)
}

// close ends the run with the status in w.state: the reservation settled
// (settle) or released (release, when there is one to release), the status
// recorded, the search attributes upserted and the merchant notified. A run
// of shape 1 closes the reservation, records the status and stores the
// notification in one local activity; when that fails, the steps are taken
// one by one as a run of shape 0 takes them.
func (w *payoutWorkflow) close(ctx workflow.Context, settle, release bool) (PayoutState, error) {
	sctx := workflow.WithLocalActivityOptions(ctx, payoutStoreOptions)
	if w.merged() {
		in := activities.PayoutCloseInput{Settle: settle,
			Record: w.recordInput(ctx, w.state.Status, nil, ""), Notification: w.notification()}
		if settle || release {
			in.Reference = w.reference()
		}
		err := workflow.ExecuteLocalActivity(sctx, pa.PayoutClose, in).Get(ctx, nil)
		if err == nil {
			w.searchAttributes(ctx)
			return w.state, w.deliver(ctx)
		}
		workflow.GetLogger(ctx).Error("payout not closed in one step: taking its steps one by one", "payout", w.in.ID, "error", err)
	}
	switch {
	case settle:
		if err := workflow.ExecuteLocalActivity(sctx, pa.PayoutSettle,
			activities.PayoutReservationInput{Reference: w.reference()}).Get(ctx, nil); err != nil {
			workflow.GetLogger(ctx).Error("payout settle refused", "payout", w.in.ID, "error", err)
		}
	case release:
		if err := workflow.ExecuteLocalActivity(sctx, pa.PayoutRelease,
			activities.PayoutReservationInput{Reference: w.reference()}).Get(ctx, nil); err != nil {
			workflow.GetLogger(ctx).Error("payout release refused", "payout", w.in.ID, "error", err)
		}
	}
	if err := w.record(ctx, w.state.Status, nil, ""); err != nil {
		return w.state, err
	}
	w.searchAttributes(ctx)
	return w.state, w.notify(ctx)
}

// record writes the payout's status (and the charges or rail id learnt).
func (w *payoutWorkflow) record(ctx workflow.Context, st payout.Status, ch *payout.Charges, railID string) error {
	w.state.Status = st
	sctx := workflow.WithLocalActivityOptions(ctx, payoutStoreOptions)
	err := workflow.ExecuteLocalActivity(sctx, pa.PayoutRecord, w.recordInput(ctx, st, ch, railID)).Get(ctx, nil)
	if err != nil {
		workflow.GetLogger(ctx).Error("payout status not recorded", "payout", w.in.ID, "status", st, "error", err)
	}
	return err
}

// recordInput is the record of status st and what the step learnt.
func (w *payoutWorkflow) recordInput(ctx workflow.Context, st payout.Status, ch *payout.Charges, railID string) activities.PayoutRecordInput {
	return activities.PayoutRecordInput{ID: w.in.ID, Status: st, FailureType: w.state.FailureType,
		FailureReason: w.state.FailureReason, Charges: ch, RailTransferID: railID, At: workflow.Now(ctx)}
}

// searchAttributes keeps the payout findable in the Temporal UI.
func (w *payoutWorkflow) searchAttributes(ctx workflow.Context) {
	err := workflow.UpsertTypedSearchAttributes(ctx,
		SearchMerchantID.ValueSet(w.in.MerchantID),
		SearchAccountID.ValueSet(w.in.AccountID),
		SearchRequestID.ValueSet(w.in.RequestID),
		SearchTransactionID.ValueSet(w.in.TransactionID),
		SearchPayoutStatus.ValueSet(string(w.state.Status)),
		SearchFailureType.ValueSet(string(w.state.FailureType)),
	)
	if err != nil {
		workflow.GetLogger(ctx).Warn("payout search attributes", "payout", w.in.ID, "error", err)
	}
}

// notification is the row of the payout's notification of its final
// outcome, nil when the merchant gave no notify_url.
func (w *payoutWorkflow) notification() *activities.RecordNotificationInput {
	if w.in.NotifyURL == "" {
		return nil
	}
	id := payout.NotifyID(w.in.TransactionID, w.in.Run)
	w.state.NotifyID = id
	fields := w.state.NotificationFields(w.in.Instruction, payout.Notice{NotifyID: id, MerchantID: w.in.MerchantID,
		AccountID: w.in.AccountID, TransactionID: w.in.TransactionID, ShortReferenceID: w.in.ShortReferenceID})
	return &activities.RecordNotificationInput{
		NotifyID: id, TransactionID: w.in.TransactionID, MerchantID: w.in.MerchantID, AccountID: w.in.AccountID,
		Seq: w.in.Run, Type: activities.NotifyTypePayout, URL: w.in.NotifyURL, Fields: fields,
	}
}

// notify records the payout's notification of its final outcome and
// delivers it (deliver).
func (w *payoutWorkflow) notify(ctx workflow.Context) error {
	n := w.notification()
	if n == nil {
		return nil
	}
	err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, storeOptions), a.RecordNotification, *n).Get(ctx, nil)
	if err != nil {
		workflow.GetLogger(ctx).Error("payout notification not recorded", "payout", w.in.ID, "error", err)
		return err
	}
	return w.deliver(ctx)
}

// deliver makes the first attempt to deliver the payout's recorded
// notification; one not acknowledged goes to a Redeliver child workflow
// that outlives this run, so the payout is final (and may be re-run) while
// the merchant's notify_url is still being retried on the durable schedule
// orders use.
func (w *payoutWorkflow) deliver(ctx workflow.Context) error {
	id := w.state.NotifyID
	if w.in.NotifyURL == "" || id == "" {
		return nil
	}
	attempted := 0
	if w.version(ctx, changePayoutNotifyInline, 1) == 1 {
		// Most receivers acknowledge at once: one attempt here spares the
		// payout a child workflow (its start, its tasks, its activity) on
		// the engine. Only a notification still owed goes on to the
		// durable schedule of its own workflow.
		var res activities.DeliverResult
		lctx := workflow.WithLocalActivityOptions(ctx, payoutNotifyOptions)
		err := workflow.ExecuteLocalActivity(lctx, a.DeliverNotification, activities.DeliverInput{NotifyID: id, Attempt: 1}).Get(ctx, &res)
		if err == nil && res.Delivered {
			return nil
		}
		if err != nil {
			workflow.GetLogger(ctx).Warn("payout notification attempt failed", "payout", w.in.ID, "notify_id", id, "error", err)
		}
		attempted = 1
	}
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:        "notify/" + id,
		ParentClosePolicy: enumspb.PARENT_CLOSE_POLICY_ABANDON,
	})
	child := workflow.ExecuteChildWorkflow(cctx, RedeliverWorkflowType,
		RedeliverInput{NotifyIDs: []string{id}, Schedule: w.in.NotifySchedule, Attempted: attempted})
	// Waiting for the child to start is what makes it survive this run.
	if err := child.GetChildWorkflowExecution().Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Error("payout notification not started", "payout", w.in.ID, "error", err)
	}
	return nil
}
