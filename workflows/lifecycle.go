package workflows

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/order"
	"github.com/paygate/paygate/internal/domain/refund"
	"github.com/paygate/paygate/internal/domain/status"
)

// Windows are an order's deadlines, from the account's settings
// (order.Windows).
type Windows = order.Windows

// Default windows (docs/design.md §1).
const (
	DefaultReviewWindow        = order.DefaultReviewWindow
	DefaultAuthorisationWindow = order.DefaultAuthorisationWindow
	DefaultRefundWindow        = order.DefaultRefundWindow
)

// Polling of a pending refund at the acquirer: quick at first, then rarely.
const (
	refundPollFirst = time.Second
	refundPollMax   = time.Hour
)

var acquirerOpOptions = workflow.LocalActivityOptions{
	StartToCloseTimeout: 30 * time.Second,
	RetryPolicy: &temporal.RetryPolicy{
		InitialInterval:        200 * time.Millisecond,
		BackoffCoefficient:     2,
		MaximumInterval:        10 * time.Second,
		MaximumAttempts:        8,
		NonRetryableErrorTypes: []string{activities.ErrTypeAcquirerRejected},
	},
}

// lifecycle keeps the order open while operations are possible and runs its
// deadlines: review, authorisation expiry, end of the refund window.
//
// A paid order whose run has grown long (runFull) ends the run with
// errRunFull once its state allows; the caller continues it as new.
func (w *orderWorkflow) lifecycle(ctx workflow.Context) error {
	w.continues = w.in.Resume != nil ||
		w.version(ctx, changeContinueAsNew, 1) != workflow.DefaultVersion
	for {
		kind, restarts := w.in.Kind, false
		if w.st.Status == status.Pending && w.version(ctx, changeShopperWindow, 1) != workflow.DefaultVersion {
			// The shopper sent on (to the challenge, to the provider)
			// starts the window again; one at the APM provider has the
			// APM window, also when the payment page sent them there.
			restarts = true
			if w.in.APM != nil {
				kind = KindAPM
			}
		}
		deadline := w.st.Deadline(kind, w.in.Windows)
		if deadline.Final {
			// Wait for pending refunds to settle and for the notifications
			// to be delivered (or given up), then end.
			return workflow.Await(ctx, func() bool { return w.inFlight == 0 && w.notificationsIdle() })
		}
		lapse := w.lapseOf(deadline.Lapse)
		current := w.st.Status
		remaining := deadline.Remaining(w.st.Since, workflow.Now(ctx))
		// Only a paid order takes operations long enough to fill a run;
		// the other states end or move within their deadlines.
		refundable := deadline.Refundable
		if refundable && remaining > 0 && w.closesIdle() {
			// No timer: the window's end is checked when an operation
			// reopens the order (takeState).
			if err := workflow.Await(ctx, func() bool {
				return w.st.Status != current || w.runFull(ctx) || w.quiet(ctx)
			}); err != nil {
				return err
			}
			switch {
			case w.st.Status != current:
				continue
			case w.runFull(ctx):
				return errRunFull
			}
			if w.closeIdle(ctx) {
				return errIdle
			}
			continue
		}
		moved := true
		since := w.st.Since
		if remaining > 0 {
			var err error
			moved, err = workflow.AwaitWithTimeout(ctx, remaining, func() bool {
				return w.st.Status != current || refundable && w.runFull(ctx) || restarts && !w.st.Since.Equal(since)
			})
			if err != nil {
				return err
			}
		}
		if moved && w.st.Status == current && refundable {
			return errRunFull
		}
		if moved {
			continue
		}
		if lapse == nil {
			// The refund window is over: refunds now need a new process.
			return workflow.Await(ctx, func() bool { return w.inFlight == 0 && w.notificationsIdle() })
		}
		if err := w.lockLoaded(ctx); err != nil {
			return err
		}
		// An operation may have moved the order while we waited for the
		// lock, or sent the shopper on, which starts the window again.
		var err error
		if w.st.Status == current && !(restarts && !w.st.Since.Equal(since)) {
			err = lapse(ctx)
		}
		w.lock.Unlock()
		if illegalMove(err) {
			// The deadline's move was refused and changed nothing (see
			// checkMove). It would only be refused again, so the order
			// waits, as it stands, for another step to move it.
			if err := workflow.Await(ctx, func() bool { return w.st.Status != current }); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
	}
}

// lapseOf is what the order does when a deadline of kind l passes; nil
// for the end of the refund window, after which the order just ends.
func (w *orderWorkflow) lapseOf(l order.Lapse) func(workflow.Context) error {
	switch l {
	case order.LapseShopper:
		return w.shopperLapsed
	case order.LapseReview:
		return w.reviewLapsed
	case order.LapseAuthorisation:
		return w.authorisationLapsed
	}
	return nil
}

func (w *orderWorkflow) reviewLapsed(ctx workflow.Context) error {
	workflow.GetLogger(ctx).Info("review window lapsed: order rejected")
	res, err := w.reject(ctx)
	if err != nil {
		return err
	}
	return w.notify(ctx, NotifyReview, res.Code(), nil)
}

func (w *orderWorkflow) authorisationLapsed(ctx workflow.Context) error {
	workflow.GetLogger(ctx).Info("authorisation window lapsed: voiding")
	if err := w.void(ctx); err != nil {
		if w.version(ctx, changeUnknownOutcomes, 1) == workflow.DefaultVersion {
			return err
		}
		captured, err := w.afterFailedVoid(ctx, err)
		if err != nil {
			return err
		}
		if captured > 0 {
			// A capture the acquirer made but whose answer never
			// reached the order.
			workflow.GetLogger(ctx).Warn("the acquirer had captured the authorisation: order paid", "captured", captured)
			return w.carryOut(ctx)(w.st.CaptureDone(captured, w.in.Currency))
		}
	}
	return w.carryOut(ctx)(w.st.Expired())
}

// afterFailedVoid asks the acquirer what became of an authorisation whose
// void at the end of its window failed, so that the order ends as the
// acquirer has it rather than failing. It returns the amount the acquirer
// captured (a capture whose answer was lost), or 0 once the authorisation
// is released: voided, or refused a void while not captured (lapsed at the
// acquirer). While the acquirer gives no answer, the void is sent again on a
// growing durable timer; the error is only the workflow's cancellation.
func (w *orderWorkflow) afterFailedVoid(ctx workflow.Context, voidErr error) (int64, error) {
	wait := refundPollFirst
	for {
		workflow.GetLogger(ctx).Warn("void at the end of the authorisation window failed: asking the acquirer", "error", voidErr)
		found, err := w.askCharge(ctx)
		switch {
		case err != nil:
			// No word on the charge: it may still stand.
		case found.Found && found.Outcome.CapturedAmount > 0:
			return found.Outcome.CapturedAmount, nil
		case found.Found && !found.Outcome.Voided && acquirerRefused(voidErr) && !found.Final &&
			w.version(ctx, changeVoidRefusedLookAgain, 1) != workflow.DefaultVersion:
			// A void refused while the charge looks authorised: every
			// acquirer here refuses a void only of a charge captured or
			// voided, so the look is behind (Stripe's search). It is
			// asked again before the order says expired.
			return w.lookAgainAfterRefusedVoid(ctx)
		case !found.Found || found.Outcome.Voided || acquirerRefused(voidErr):
			return 0, nil
		}
		if err := workflow.Sleep(ctx, wait); err != nil {
			return 0, err
		}
		wait = min(wait*2, refundPollMax)
		if voidErr = w.void(ctx); voidErr == nil {
			return 0, nil
		}
	}
}

// lookAgainAfterRefusedVoid asks about a charge whose void was refused
// while its inquiry showed it authorised, after each of lateLooks, and
// returns the amount captured once a look shows it, or 0 when every look
// shows it uncaptured (released at the acquirer, as the refusal said); its
// error is only the workflow's cancellation.
func (w *orderWorkflow) lookAgainAfterRefusedVoid(ctx workflow.Context) (int64, error) {
	var captured int64
	_, err := onLateLooks(ctx, func() (bool, bool) {
		found, err := w.askCharge(ctx)
		switch {
		case err != nil:
			return false, false
		case found.Found && found.Outcome.CapturedAmount > 0:
			captured = found.Outcome.CapturedAmount
			return true, false
		}
		return false, !found.Found || found.Outcome.Voided
	})
	return captured, err
}

// accepted ends the workflow task of the update being handled before its
// first step outside the workflow (acceptFirst).
func (w *orderWorkflow) accepted(ctx workflow.Context) error {
	return acceptFirst(ctx, w.version(ctx, changeAcceptedFirst, 1))
}

// registerOperations installs the capture, cancel, review and refund updates.
func (w *orderWorkflow) registerOperations(ctx workflow.Context) error {
	for _, h := range []struct {
		name      string
		handler   any
		validator any
	}{
		{UpdateCapture, w.capture, w.validateCapture},
		{UpdateCancel, w.cancel, w.validateCancel},
		{UpdateReview, w.review, w.validateReview},
		{UpdateRefund, w.refund, w.validateRefund},
	} {
		if err := workflow.SetUpdateHandlerWithOptions(ctx, h.name, h.handler, workflow.UpdateHandlerOptions{Validator: h.validator}); err != nil {
			return err
		}
	}
	return nil
}

// standing is what the operation rules (internal/domain/order) need of the
// order now.
func (w *orderWorkflow) standing() order.Standing {
	s := w.st.Standing(order.Entry{TransactionID: w.in.TransactionID, OrderNo: w.in.OrderNo, Currency: w.in.Currency, Amount: w.in.Amount})
	s.AwaitsShopper = w.awaitsShopper()
	return s
}

// awaitsShopper reports whether the order is pending for its shopper: at
// the 3-D Secure challenge, at the APM provider, or, on the payment page,
// for a card.
func (w *orderWorkflow) awaitsShopper() bool {
	return w.st.Status == status.Pending &&
		(w.st.ThreeDS.Awaiting || w.st.APM.Awaiting || w.in.Kind == KindCheckout && w.st.Card.Token == "")
}

// refused is the error a validator rejects an entry with, when a rule
// refuses it.
func refused(c *codes.Code) error {
	if c == nil {
		return nil
	}
	return temporal.NewApplicationError(c.Message, ErrTypeEntryRefused, c.ID)
}

// refuse is the error a validator rejects an entry with for its own
// reason: code with detail.
func refuse(code codes.Code, detail string) error {
	c := code.With(detail)
	return refused(&c)
}

func (w *orderWorkflow) validateCapture(ctx workflow.Context, req CaptureRequest) error {
	if checked, err := w.entryGate(); checked {
		return err
	}
	return refused(w.standing().CheckCapture(order.Entry(req.Entry), req.CaptureAmount))
}

func (w *orderWorkflow) capture(ctx workflow.Context, req CaptureRequest) (OperationResult, error) {
	if err := w.lockLoaded(ctx); err != nil {
		return OperationResult{}, err
	}
	defer w.lock.Unlock()
	// Another operation may have run while this one waited for the lock.
	if err := w.validateCapture(ctx, req); err != nil {
		return refusedResult(err, w.st.Status), nil
	}
	if err := w.accepted(ctx); err != nil {
		return OperationResult{}, err
	}
	amount := w.standing().CaptureAmount(req.CaptureAmount)
	in := activities.CaptureInput{Connector: w.chargeConnector(), ChargeID: w.st.ChargeID,
		IdempotencyKey: w.key("capture"), Amount: amount, Currency: w.in.Currency}
	var out activities.CaptureOutcome
	err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, acquirerOpOptions), a.CaptureCharge, in).Get(ctx, &out)
	if err != nil && !acquirerRefused(err) && w.version(ctx, changeOperationUnanswered, 1) != workflow.DefaultVersion {
		// The acquirer may have captured: the capture is not answered
		// until it says, and the lock keeps the window's void away.
		out.CapturedAmount, err = w.captureUnanswered(ctx, in, err)
	}
	if err != nil {
		return w.acquirerFailed(ctx, err)
	}
	if err := w.carryOut(ctx)(w.st.CaptureDone(out.CapturedAmount, w.in.Currency)); err != nil {
		return w.stepFailed(err)
	}
	return w.done(), nil
}

func (w *orderWorkflow) validateCancel(ctx workflow.Context, req CancelRequest) error {
	if checked, err := w.entryGate(); checked {
		return err
	}
	return refused(w.standing().CheckCancel(order.Entry(req.Entry)))
}

func (w *orderWorkflow) cancel(ctx workflow.Context, req CancelRequest) (OperationResult, error) {
	if err := w.lockLoaded(ctx); err != nil {
		return OperationResult{}, err
	}
	defer w.lock.Unlock()
	if err := w.validateCancel(ctx, req); err != nil {
		return refusedResult(err, w.st.Status), nil
	}
	if err := w.accepted(ctx); err != nil {
		return OperationResult{}, err
	}
	if w.st.Status == status.Pending {
		return w.cancelPending(ctx)
	}
	if w.st.Status == status.HeldForReview {
		// Nothing was authorised yet.
		if _, err := w.reject(ctx); err != nil {
			return w.stepFailed(err)
		}
		if err := w.notify(ctx, NotifyCancel, codes.OK, nil); err != nil {
			return OperationResult{}, err
		}
		return w.done(), nil
	}
	if err := w.void(ctx); err != nil {
		if acquirerRefused(err) || w.version(ctx, changeOperationUnanswered, 1) == workflow.DefaultVersion {
			return w.acquirerFailed(ctx, err)
		}
		// The acquirer may have released the authorisation: the cancel is
		// not answered until it says.
		captured, err := w.voidUnanswered(ctx, err)
		switch {
		case captured > 0:
			// A capture the acquirer made but whose answer was lost: the
			// order is paid, and it can no longer be cancelled.
			if err := w.carryOut(ctx)(w.st.CaptureDone(captured, w.in.Currency)); err != nil {
				return w.stepFailed(err)
			}
			c := codes.InvalidState.With("the acquirer had captured the payment")
			return OperationResult{Status: EntryRefused, ResultCode: c.ID, ResultMessage: c.Message, PaymentStatus: w.st.Status}, nil
		case err != nil:
			return w.acquirerFailed(ctx, err)
		}
	}
	if err := w.carryOut(ctx)(w.st.Voided()); err != nil {
		return w.stepFailed(err)
	}
	return w.done(), nil
}

// captureUnanswered learns what became of a capture the acquirer answered
// neither way (sendErr): it is sent again with its key on a growing durable
// timer until the acquirer answers. A refusal then may be of a capture the
// first send made (an acquirer that forgot the key refuses a second capture),
// so the charge is asked about. It returns the captured amount, or the
// refusal; its other error is only the workflow's cancellation.
func (w *orderWorkflow) captureUnanswered(ctx workflow.Context, in activities.CaptureInput, sendErr error) (int64, error) {
	lctx := workflow.WithLocalActivityOptions(ctx, acquirerOpOptions)
	var captured int64
	workflow.GetLogger(ctx).Warn("capture unanswered: sent again later", "error", sendErr)
	err := onGrowingTimer(ctx, func() bool {
		var out activities.CaptureOutcome
		if sendErr = workflow.ExecuteLocalActivity(lctx, a.CaptureCharge, in).Get(ctx, &out); sendErr == nil {
			captured = out.CapturedAmount
			return true
		}
		if !w.refusedAfterUnanswered(ctx, "capture", sendErr) {
			return false
		}
		charge, err := w.askCharge(ctx)
		if err != nil {
			return false
		}
		captured = charge.Outcome.CapturedAmount
		if charge.Found && captured > 0 {
			sendErr = nil
		}
		return true
	})
	if err != nil {
		return 0, err
	}
	if sendErr != nil {
		return 0, sendErr
	}
	return captured, nil
}

// voidUnanswered learns what became of a void the acquirer answered neither
// way (sendErr), as captureUnanswered does for a capture. It returns nil once
// the authorisation is voided, the amount the acquirer had captured, or the
// refusal; its other error is only the workflow's cancellation.
func (w *orderWorkflow) voidUnanswered(ctx workflow.Context, sendErr error) (int64, error) {
	var captured int64
	workflow.GetLogger(ctx).Warn("void unanswered: sent again later", "error", sendErr)
	err := onGrowingTimer(ctx, func() bool {
		if sendErr = w.void(ctx); sendErr == nil {
			return true
		}
		if !w.refusedAfterUnanswered(ctx, "void", sendErr) {
			return false
		}
		charge, err := w.askCharge(ctx)
		switch {
		case err != nil:
			return false
		case charge.Found && charge.Outcome.CapturedAmount > 0:
			captured, sendErr = charge.Outcome.CapturedAmount, nil
		case charge.Found && charge.Outcome.Voided:
			sendErr = nil
		}
		return true
	})
	if err != nil {
		return 0, err
	}
	return captured, sendErr
}

// refusedAfterUnanswered reports whether a resend of an operation the
// acquirer did not answer (what) was refused by the acquirer; anything else
// (no answer again, the connector missing on this worker) is logged and
// sent again later.
func (w *orderWorkflow) refusedAfterUnanswered(ctx workflow.Context, what string, err error) bool {
	if acquirerRefused(err) && !activities.IsConnectorMissing(err) {
		return true
	}
	workflow.GetLogger(ctx).Warn(what+" unanswered: sent again later", "error", err)
	return false
}

// askCharge asks the acquirer what its charge stands at now, by the
// charge's id where the connector reads one (Stripe's search by key may
// show a capture or void of moments ago not yet made).
func (w *orderWorkflow) askCharge(ctx workflow.Context) (activities.InquiryResult, error) {
	var found activities.InquiryResult
	err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, acquirerOpOptions), a.InquireCharge,
		activities.InquireInput{Connector: w.chargeConnector(), IdempotencyKey: w.chargeKey(w.chargeConnector()),
			ChargeID: w.st.ChargeID}).Get(ctx, &found)
	return found, err
}

// cancelPending cancels an order waiting for its shopper, as far as its
// connector allows: an APM payment is called off at the provider (one the
// shopper paid first is settled paid, and the cancel refused); a 3-D
// Secure authentication that holds something at the acquirer is called
// off. The order then fails A0009 with nothing charged, and a later word
// of the shopper's is no longer awaited.
func (w *orderWorkflow) cancelPending(ctx workflow.Context) (OperationResult, error) {
	actx := workflow.WithLocalActivityOptions(ctx, acquirerOpOptions)
	switch {
	case w.st.APM.Awaiting:
		var out activities.APMOutcome
		err := workflow.ExecuteLocalActivity(actx, a.CancelAPMPayment,
			activities.APMStatusInput{Connector: w.connectorName(), PaymentID: w.st.APM.PaymentID}).Get(ctx, &out)
		if errorType(err) == activities.ErrTypeCannotCancel {
			c := codes.PendingNotCancellable
			return OperationResult{Status: EntryRefused, ResultCode: c.ID, ResultMessage: c.Message, PaymentStatus: w.st.Status}, nil
		}
		if err != nil {
			return w.acquirerFailed(ctx, err)
		}
		if out.Status == connector.APMSucceeded {
			if err := w.apmSettle(ctx, out.PaymentID, out.Status); err != nil {
				return w.stepFailed(err)
			}
			c := codes.InvalidState.With("the shopper paid before the cancel reached the provider")
			return OperationResult{Status: EntryRefused, ResultCode: c.ID, ResultMessage: c.Message, PaymentStatus: w.st.Status}, nil
		}
	case w.st.ThreeDS.Awaiting:
		err := workflow.ExecuteLocalActivity(actx, a.CancelAuthentication,
			activities.ThreeDSStatusInput{Connector: w.connectorName(), AuthenticationID: w.st.ThreeDS.AuthenticationID}).Get(ctx, nil)
		if err != nil {
			return w.acquirerFailed(ctx, err)
		}
	}
	next, step := w.st.MerchantCancelled()
	w.st = next
	res, err := w.finish(ctx, activities.FinishOrderInput{PaymentStatus: step.Status}, step.Code, w.st.Card.Token != "")
	if err != nil {
		return w.stepFailed(err)
	}
	w.st.Result = &res
	if err := w.notify(ctx, NotifyCancel, step.Code, nil); err != nil {
		return OperationResult{}, err
	}
	return w.done(), nil
}

func (w *orderWorkflow) validateReview(ctx workflow.Context, req ReviewRequest) error {
	if checked, err := w.entryGate(); checked {
		return err
	}
	return refused(w.standing().CheckReview(order.Entry(req.Entry)))
}

func (w *orderWorkflow) review(ctx workflow.Context, req ReviewRequest) (OperationResult, error) {
	if err := w.lockLoaded(ctx); err != nil {
		return OperationResult{}, err
	}
	defer w.lock.Unlock()
	if err := w.validateReview(ctx, req); err != nil {
		return refusedResult(err, w.st.Status), nil
	}
	if err := w.accepted(ctx); err != nil {
		return OperationResult{}, err
	}
	if !req.Approve {
		res, err := w.reject(ctx)
		if err != nil {
			return w.stepFailed(err)
		}
		if err := w.notify(ctx, NotifyReview, res.Code(), nil); err != nil {
			return OperationResult{}, err
		}
		return w.done(), nil
	}
	// Approved: authorise now, as the payment would have without the hold.
	res, err := w.authorise(ctx)
	if err != nil {
		return w.stepFailed(err)
	}
	if err := w.notify(ctx, NotifyReview, res.Code(), nil); err != nil {
		return OperationResult{}, err
	}
	r := w.done()
	r.ResultCode, r.ResultMessage = res.ResultCode, res.ResultMessage
	return r, nil
}

// reject ends a held order as cancelled: nothing was charged.
func (w *orderWorkflow) reject(ctx workflow.Context) (PaymentResult, error) {
	return w.finish(ctx, activities.FinishOrderInput{PaymentStatus: status.Cancelled}, codes.RiskRejected, true)
}

func (w *orderWorkflow) void(ctx workflow.Context) error {
	return workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, acquirerOpOptions), a.VoidCharge,
		activities.VoidInput{Connector: w.chargeConnector(), ChargeID: w.st.ChargeID, IdempotencyKey: w.key("void")}).Get(ctx, nil)
}

func (w *orderWorkflow) validateRefund(ctx workflow.Context, req RefundRequest) error {
	if checked, err := w.entryGate(); checked {
		return err
	}
	return refused(w.standing().CheckRefund(order.Entry(req.Entry), req.RefundAmount))
}

func (w *orderWorkflow) refund(ctx workflow.Context, req RefundRequest) (OperationResult, error) {
	if err := w.lockLoaded(ctx); err != nil {
		return OperationResult{}, err
	}
	defer w.lock.Unlock()
	// Racing refunds all passed validation against the same state; only
	// those that still fit once it is their turn go through.
	if err := w.validateRefund(ctx, req); err != nil {
		return refusedResult(err, w.st.Status), nil
	}
	if err := w.accepted(ctx); err != nil {
		return OperationResult{}, err
	}
	w.operations++
	next, r := w.st.RefundAsked(w.in.TransactionID, req.RefundAmount, req.Reason)
	w.st = next
	if w.version(ctx, changeRefundRowFirst, 1) != workflow.DefaultVersion {
		// The refund is on record, pending, before the acquirer hears of
		// it: a merchant whose answer did not come in time and who asks
		// (retrievalRefund) finds it, where "not found" invited a second
		// refund. The acquirer's answer writes over it. A row the record
		// will not take (a day of retries, values it refuses) stops
		// nothing: the refund goes, and its answer's row is written or
		// watched as before.
		pending := r
		pending.Status, pending.Code = refund.Pending, codes.RefundPending
		row := w.refundRow(pending)
		row.Version, row.Task = w.nextWrite(ctx)
		err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, refundRowFirstOptions), a.SaveRefund, row).Get(ctx, nil)
		if err != nil {
			workflow.GetLogger(ctx).Error("refund not recorded before its send", "refund", r.Reference, "error", err)
		}
	}
	var out activities.RefundOutcome
	err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, acquirerOpOptions), a.RefundCharge, w.refundInput(r)).Get(ctx, &out)
	answer := order.RefundAnswered
	switch {
	case err != nil && !acquirerRefused(err) && w.version(ctx, changeUnknownOutcomes, 1) != workflow.DefaultVersion:
		workflow.GetLogger(ctx).Warn("refund outcome unknown: kept pending", "refund", r.Reference, "error", err)
		answer = order.RefundUnanswered
	case err != nil:
		workflow.GetLogger(ctx).Error("refund failed at the acquirer", "refund", r.Reference, "error", err)
		answer = order.RefundRefused
	}
	next, r, effects := w.st.RefundSent(r, answer, out.Status, out.RefundID, w.in.Currency)
	if answer == order.RefundAnswered && r.Settled {
		err = w.carrySettled(ctx, r, next, effects)
	} else {
		err = w.carryOut(ctx)(next, effects)
	}
	switch {
	case answer == order.RefundAnswered && r.Settled &&
		(r.Status == refund.Succeeded || w.version(ctx, changeRefundFailedAnswer, 1) == workflow.DefaultVersion):
		// Settled by the answer: a refusal of its move is the entry's.
		if err != nil {
			return w.stepFailed(err)
		}
		res := w.done()
		res.RefundReferenceID, res.RefundReference = r.Reference, r.AcquirerRef
		return res, nil
	case err != nil && !r.Settled && w.version(ctx, changeRefundWatchedUnsaved, 1) != workflow.DefaultVersion:
		// The pending refund's row could not be written (a day of retries,
		// or values the record refuses). The refund may be made all the
		// same, so its watcher still runs, and writes the row when it
		// settles; the merchant hears pending, not an error that invites
		// a second refund.
		workflow.GetLogger(ctx).Error("pending refund not recorded: watched all the same", "refund", r.Reference, "error", err)
		for _, e := range effects {
			switch e.(type) {
			case order.WatchRefund, order.ResendRefund:
				if err := w.carry(ctx, e); err != nil {
					return OperationResult{}, err
				}
			}
		}
	case err != nil:
		return OperationResult{}, err
	}
	entry := EntryPending
	if r.Status == refund.Failed {
		entry = EntryRefused
	}
	return OperationResult{Status: entry, ResultCode: r.Code.ID, ResultMessage: r.Code.Message,
		PaymentStatus: w.st.Status, RefundReferenceID: r.Reference, RefundReference: r.AcquirerRef}, nil
}

// refundRowFirstOptions: the row before a refund's send is tried for half a
// minute, not the day a record write has, so that a database away holds
// the refund back no longer than that.
var refundRowFirstOptions = func() workflow.LocalActivityOptions {
	o := storeOptions
	o.ScheduleToCloseTimeout = 30 * time.Second
	return o
}()

// refundInput is the acquirer's request for refund r; its idempotency key
// is the refund's own, so a request sent again is the same refund.
func (w *orderWorkflow) refundInput(r order.Refund) activities.RefundInput {
	return activities.RefundInput{Connector: w.chargeConnector(), ChargeID: w.st.ChargeID,
		IdempotencyKey: w.key("refund-" + r.Reference), Amount: r.Amount, Currency: w.in.Currency}
}

// refundRow is refund r's row in the record.
func (w *orderWorkflow) refundRow(r order.Refund) activities.SaveRefundInput {
	return activities.SaveRefundInput{
		RefundReferenceID: r.Reference, TransactionID: w.in.TransactionID, MerchantID: w.in.MerchantID,
		AccountID: w.in.AccountID, OrderNo: w.in.OrderNo, Currency: w.in.Currency, Amount: r.Amount, Reason: r.Reason,
		Status: r.Status, ResultCode: r.Code.ID, ResultMessage: r.Code.Message, AcquirerRef: r.AcquirerRef, Settled: r.Settled,
	}
}

// carryOut takes the next state a rule of internal/domain/order gave and
// carries out its effects, in order; it stops at the first that fails. It is
// called as w.carryOut(ctx)(w.st.Rule(...)).
func (w *orderWorkflow) carryOut(ctx workflow.Context) func(next order.State, effects []order.Effect) error {
	return func(next order.State, effects []order.Effect) error {
		w.st = next
		for _, e := range effects {
			if err := w.carry(ctx, e); err != nil {
				return err
			}
		}
		return nil
	}
}

// carry carries out one effect.
func (w *orderWorkflow) carry(ctx workflow.Context, e order.Effect) error {
	switch e := e.(type) {
	case order.SaveOrder:
		return w.save(ctx, e.To)
	case order.Notify:
		return w.notify(ctx, e.Type, e.Code, e.Extra)
	case order.SaveRefund:
		return w.saveRefund(ctx, w.refundRow(e.Refund))
	case order.DebitLedger:
		w.postToLedger(ctx, ledgerDebit, activities.LedgerOrderInput{
			Reference: e.Reference, OrderKey: w.in.TransactionID, MerchantID: w.in.MerchantID,
			AccountID: w.in.AccountID, Currency: w.in.Currency, Amount: e.Amount,
		})
	case order.WatchRefund:
		w.inFlight++
		workflow.Go(ctx, func(ctx workflow.Context) { w.watchRefund(ctx, e.Refund) })
	case order.ResendRefund:
		w.inFlight++
		workflow.Go(ctx, func(ctx workflow.Context) { w.resolveRefund(ctx, e.Refund) })
	default:
		return fmt.Errorf("order effect %T has no carrier", e)
	}
	return nil
}

// watchRefund polls a pending refund until the acquirer settles it.
func (w *orderWorkflow) watchRefund(ctx workflow.Context, r order.Refund) {
	defer func() { w.inFlight-- }()
	var settled refund.Status
	err := onGrowingTimer(ctx, func() bool {
		var out activities.RefundOutcome
		err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, acquirerOpOptions), a.RefundStatus,
			activities.RefundStatusInput{Connector: w.chargeConnector(), RefundID: r.AcquirerRef}).Get(ctx, &out)
		settled = out.Status
		if err != nil {
			// The only trace of a refund that stays pending: its timer grows
			// to an hour and the local activity's failures are not logged.
			workflow.GetLogger(ctx).Warn("refund status not learnt: asked again later", "refund", r.Reference, "error", err)
		}
		return err == nil && out.Status != refund.Pending
	})
	if err != nil {
		return
	}
	w.settleHeld(ctx, r, settled)
}

// onGrowingTimer calls try after refundPollFirst, then after doubling waits
// up to refundPollMax, until try reports that it is done. Its error is only
// the workflow's cancellation.
func onGrowingTimer(ctx workflow.Context, try func() bool) error {
	for wait := refundPollFirst; ; wait = min(wait*2, refundPollMax) {
		if err := workflow.Sleep(ctx, wait); err != nil {
			return err
		}
		if try() {
			return nil
		}
	}
}

// settleHeld settles, under the order's lock, a refund whose amount was held
// while its outcome was not known.
func (w *orderWorkflow) settleHeld(ctx workflow.Context, r order.Refund, settled refund.Status) {
	if err := w.lockLoaded(ctx); err != nil {
		return
	}
	defer w.lock.Unlock()
	next, _, effects := w.st.RefundSettled(r, settled, true, w.in.Currency)
	w.st = next
	for _, e := range effects {
		err := w.carry(ctx, e)
		if err == nil {
			continue
		}
		if _, row := e.(order.SaveRefund); row && w.version(ctx, changeRefundSettledUnsaved, 1) != workflow.DefaultVersion {
			// The refund is settled at the acquirer whatever its row
			// says: the ledger, the order and the merchant still hear of
			// it.
			workflow.GetLogger(ctx).Error("settled refund's row not recorded", "refund", r.Reference, "error", err)
			continue
		}
		workflow.GetLogger(ctx).Error("record settled refund", "refund", r.Reference, "error", err)
		return
	}
}

// carrySettled carries out the effects of a refund the acquirer settled in
// its answer. Its row the record will not take (a day of retries, values it
// refuses) stops nothing after it: the refund is made or refused at the
// acquirer whatever its row says, so the ledger, the order and the merchant
// still hear of it, as for a refund settled later (settleHeld). Before, the
// debit, the order's move and the notification were skipped.
func (w *orderWorkflow) carrySettled(ctx workflow.Context, r order.Refund, next order.State, effects []order.Effect) error {
	w.st = next
	for _, e := range effects {
		err := w.carry(ctx, e)
		if err == nil {
			continue
		}
		if _, row := e.(order.SaveRefund); row && !illegalMove(err) &&
			w.version(ctx, changeRefundAnsweredUnsaved, 1) != workflow.DefaultVersion {
			workflow.GetLogger(ctx).Error("settled refund's row not recorded", "refund", r.Reference, "error", err)
			continue
		}
		return err
	}
	return nil
}

// acquirerRefused reports whether err is the acquirer's answer refusing the
// request (or no connector to send it to), as against no answer at all.
func acquirerRefused(err error) bool {
	var appErr *temporal.ApplicationError
	return errors.As(err, &appErr) && appErr.Type() == activities.ErrTypeAcquirerRejected
}

// resolveRefund sends a refund whose outcome is unknown again, with the same
// idempotency key, on a growing durable timer until the acquirer answers:
// with the refund it made (now or the first time), or with a refusal. Then
// the refund is settled, or watched while the acquirer keeps it pending.
func (w *orderWorkflow) resolveRefund(ctx workflow.Context, r order.Refund) {
	defer func() { w.inFlight-- }()
	settled := refund.Failed
	err := onGrowingTimer(ctx, func() bool {
		var out activities.RefundOutcome
		err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, acquirerOpOptions), a.RefundCharge, w.refundInput(r)).Get(ctx, &out)
		// A worker whose configuration lacks the connector sent nothing:
		// the first send may have made the refund, so that is no refusal.
		missing := activities.IsConnectorMissing(err) && w.version(ctx, changeRefundConnectorMissing, 1) != workflow.DefaultVersion
		if err == nil {
			r.AcquirerRef, settled = out.RefundID, out.Status
		} else if !acquirerRefused(err) || missing {
			workflow.GetLogger(ctx).Warn("refund still unanswered: sent again later", "refund", r.Reference, "error", err)
		}
		return err == nil || acquirerRefused(err) && !missing
	})
	if err != nil {
		return
	}
	if settled != refund.Pending {
		w.settleHeld(ctx, r, settled)
		return
	}
	// The acquirer made it and has not settled it: watch it as any refund
	// it answered pending.
	if err := w.lockLoaded(ctx); err != nil {
		return
	}
	if err := w.saveRefund(ctx, w.refundRow(r)); err != nil {
		workflow.GetLogger(ctx).Error("record pending refund", "refund", r.Reference, "error", err)
	}
	w.lock.Unlock()
	w.inFlight++
	w.watchRefund(ctx, r)
}

func (w *orderWorkflow) saveRefund(ctx workflow.Context, row activities.SaveRefundInput) error {
	row.Version, row.Task = w.nextWrite(ctx)
	return workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, storeOptions), a.SaveRefund, row).Get(ctx, nil)
}

// save writes the order's status and amounts and moves the workflow's status.
// A move the state table refuses writes nothing (see checkMove).
func (w *orderWorkflow) save(ctx workflow.Context, to status.Payment) error {
	if err := w.checkMove(ctx, to); err != nil {
		return err
	}
	version, task := w.nextWrite(ctx)
	err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, storeOptions), a.SaveOrderState,
		activities.SaveOrderStateInput{
			TransactionID:  w.in.TransactionID,
			Version:        version,
			Task:           task,
			PaymentStatus:  to,
			OrderStatus:    status.OrderStatusOf(to),
			CapturedAmount: w.st.Captured,
			RefundedAmount: w.st.Refunded,
		}).Get(ctx, nil)
	if err != nil {
		return err
	}
	if to == w.st.Status {
		return nil
	}
	return w.setStatus(ctx, to)
}

func (w *orderWorkflow) done() OperationResult {
	return OperationResult{Status: EntryDone, ResultCode: codes.OK.ID, ResultMessage: codes.OK.Message, PaymentStatus: w.st.Status}
}

// stepFailed answers an entry whose step returned err. A move the state
// table refused changed nothing (see checkMove): the entry is refused with
// I0018 and the order as it stands, and the order goes on. Any other error
// fails the update, as it always has.
func (w *orderWorkflow) stepFailed(err error) (OperationResult, error) {
	if !illegalMove(err) {
		return OperationResult{}, err
	}
	c := codes.InvalidState.With(err.Error())
	return OperationResult{Status: EntryRefused, ResultCode: c.ID, ResultMessage: c.Message, PaymentStatus: w.st.Status}, nil
}

// acquirerFailed answers an entry the acquirer refused or never answered;
// the order stays as it was.
func (w *orderWorkflow) acquirerFailed(ctx workflow.Context, err error) (OperationResult, error) {
	workflow.GetLogger(ctx).Error("acquirer operation failed", "error", err)
	return OperationResult{Status: EntryRefused, ResultCode: codes.ConnectorError.ID, ResultMessage: codes.ConnectorError.Message,
		PaymentStatus: w.st.Status}, nil
}

// refusedResult turns a validator's refusal, met again under the lock, into
// a refused entry.
func refusedResult(err error, st status.Payment) OperationResult {
	r := OperationResult{Status: EntryRefused, ResultCode: codes.InvalidState.ID, ResultMessage: err.Error(), PaymentStatus: st}
	if appErr, ok := err.(*temporal.ApplicationError); ok {
		r.ResultMessage = appErr.Message()
		var id string
		if appErr.Details(&id) == nil && id != "" {
			r.ResultCode = id
		}
	}
	return r
}
