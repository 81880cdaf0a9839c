package workflows

import (
	"errors"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/internal/domain/capture"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/notify"
	"github.com/paygate/paygate/internal/domain/order"
	"github.com/paygate/paygate/internal/domain/risk"
	"github.com/paygate/paygate/internal/domain/routing"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/internal/domain/subscription"
)

// CardRef is the card as the workflow knows it (order.CardRef): a vault
// token and what may be shown, never the number or the security code.
type CardRef = order.CardRef

// OrderInput starts an order workflow.
type OrderInput struct {
	TransactionID      string
	MerchantID         string
	AccountID          string
	OrderNo            string
	Amount             int64
	Currency           string
	CaptureMode        capture.Mode
	Card               CardRef
	RequestFingerprint string
	Details            order.Details
	Windows            Windows
	// NotifySchedule is the deployment's retry schedule of notifications.
	NotifySchedule notify.Schedule

	// Kind is how the shopper pays: a card sent by the merchant (the
	// default), our hosted payment page, or an alternative payment method.
	Kind order.Kind
	// ThreeDS asks for 3-D Secure (open3d=do3DS).
	ThreeDS bool
	// APM is the alternative payment method's data.
	APM *APMOrder
	// PublicURL is the gateway's address as browsers and providers see it.
	PublicURL string
	// Connector names the acquirer connector that runs the order, taken from
	// the account when the order was made: a running order keeps its
	// connector whatever later happens to the account. Empty (orders
	// started before accounts chose a connector) means DefaultConnector.
	// A routed order's Connector is the first of its Route.
	Connector string
	// Route is the connectors a routed order's charge is tried on, in
	// order, planned from the account's rules when the order was made
	// (internal/domain/routing); nil for an account without rules, whose
	// order goes to Connector alone.
	Route *routing.Plan `json:",omitempty"`

	// Subscription, on a first payment that carries one, holds its
	// validated terms: the approved payment starts the subscription.
	Subscription *subscription.Terms `json:",omitempty"`
	// ExternalThreeDS is the merchant's own 3-D Secure result (mpi_info):
	// the charge carries it, and the gateway runs no authentication of its
	// own. Installments is the number of monthly installments, 0 for none.
	ExternalThreeDS *ThreeDSData `json:",omitempty"`
	Installments    int          `json:",omitempty"`
	// Recurring marks the order as a charge of a subscription.
	Recurring *RecurringCharge `json:",omitempty"`
	// Risk is the account's risk settings when the order was made: the
	// risk check reads them here rather than from the account, as the
	// order keeps its connector and capture mode of that moment. Nil
	// (orders made before, or by the gateway itself) reads the account.
	Risk *risk.Settings `json:",omitempty"`

	// Resume is the state a previous run of the order carried over by
	// continue-as-new; nil on the order's first run.
	Resume *order.State `json:",omitempty"`
	// OperationsPerRun bounds the operations one run takes before it
	// continues as new (DefaultOperationsPerRun when 0).
	OperationsPerRun int `json:",omitempty"`
	// Shape is the order code's shape the order was started with
	// (CurrentOrderShape for a new order; 0 for orders started before
	// shapes): which changes it takes without asking GetVersion (shape.go).
	Shape int `json:",omitempty"`
	// Keys is how the order's acquirer keys are made from its workflow id
	// (idempotencyKey): 0, the id's '/' as ':', so that order numbers that
	// differ only there ("INV/7", "INV:7") shared every key; 1
	// (CurrentOrderKeys), the id's ':' and '%' escaped first, under a
	// prefix no key of 0 has. Set by whoever starts the order and kept by
	// its later runs, so that a key never changes under an operation.
	Keys int `json:",omitempty"`
	// Reopen starts a run of an order whose workflow closed when idle
	// (shape 3): an operation reopened it, and the run takes its request
	// and state from the record. Only TransactionID, OrderNo and Shape are
	// set beside it.
	Reopen bool `json:",omitempty"`
	// AnswerLocally is set by an API that started the order eagerly on the
	// worker in its own process (flows.TemporalOrders.Answers): a local
	// activity (AnswerLocally) leaves the payment's answer for the waiting
	// request there as soon as it is known, handed over once Temporal has
	// recorded the task, instead of through an update.
	AnswerLocally bool `json:",omitempty"`
}

// RecurringCharge names the subscription and billing cycle an order charges.
type RecurringCharge struct {
	RecurringID string
	// WorkflowID is the subscription's workflow, told the charge's result.
	WorkflowID string
	Cycle      int
	Attempt    int
}

// AuthoriseRequest is the update a direct payment request sends. Only a
// request with the same content as the order's first one is answered.
type AuthoriseRequest struct {
	RequestFingerprint string
}

// PaymentResult is the answer to a payment request (order.Result).
type PaymentResult = order.Result

// RecurringResult is what an answer tells of a subscription
// (order.RecurringResult).
type RecurringResult = order.RecurringResult

// OrderState is what the order-state query returns.
type OrderState struct {
	TransactionID string
	PaymentStatus status.Payment
	Result        *PaymentResult
	Notifications []NotificationState
}

// Timeouts and retry schedules of the order workflow's steps.
const (
	storeTimeout = 10 * time.Second
	// storeRetryHorizon is how long a record write is retried: the
	// database is expected back well within it.
	storeRetryHorizon = 24 * time.Hour
	authoriseTimeout  = 60 * time.Second
	inquiryTimeout    = 30 * time.Second
	// chargeRounds bounds how often a charge is tried again after the
	// acquirer said it never saw the previous attempt.
	chargeRounds = 3
)

var (
	storeOptions = workflow.LocalActivityOptions{
		StartToCloseTimeout: storeTimeout,
		// Without it a local activity's retries stop at one attempt's
		// start-to-close: a database away for 10 s would fail the order,
		// or answer a merchant's change with a system error.
		ScheduleToCloseTimeout: storeRetryHorizon,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    100 * time.Millisecond,
			BackoffCoefficient: 2,
			MaximumInterval:    10 * time.Second,
		},
	}
	// The charge runs as a local activity: it is one short HTTP call, and
	// keeping it inside the workflow task roughly doubles throughput. Its
	// idempotency key makes a re-run after a worker crash safe.
	authoriseOptions = workflow.LocalActivityOptions{
		StartToCloseTimeout: authoriseTimeout,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    200 * time.Millisecond,
			BackoffCoefficient: 2,
			MaximumInterval:    10 * time.Second,
			MaximumAttempts:    6,
			NonRetryableErrorTypes: []string{
				activities.ErrTypeAcquirerTimeout,
				activities.ErrTypeAcquirerRejected,
				activities.ErrTypeCardUnavailable,
			},
		},
	}
	// An inquiry is retried until the acquirer answers: until then nobody
	// knows whether the card was charged, so the order must not move on.
	inquiryOptions = workflow.ActivityOptions{
		StartToCloseTimeout: inquiryTimeout,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    500 * time.Millisecond,
			BackoffCoefficient: 2,
			MaximumInterval:    time.Minute,
		},
	}
)

// writeTask is the fencing token of the record writes the current workflow
// task makes: its start, in the workflow's time (Unix nanoseconds). A
// worker that dies after a write committed, before its task completed,
// leaves the task to be run again, later, and that run's writes replace the
// first run's whatever their versions (models.Order.WrittenTask): the
// history keeps only this run's results, which may differ (an acquirer
// that answered this time). The task's place in the history would not do:
// a task that fails again and again is recorded once, and each of its runs
// has the same place.
func writeTask(ctx workflow.Context) int64 {
	return workflow.Now(ctx).UnixNano()
}

// nextWrite counts a record write and gives its version and task.
func (w *orderWorkflow) nextWrite(ctx workflow.Context) (version, task int64) {
	w.st.Writes++
	return w.st.Writes, writeTask(ctx)
}

// a is the nil pointer through which the workflow names activities.
var a *activities.Activities

type orderWorkflow struct {
	// root is the workflow's own context, for the coroutines an order
	// starts on demand (startDelivery, listenToShopper): a handler's
	// context is not theirs to live in.
	root workflow.Context
	in   OrderInput
	id   string
	// st is the order's state; the rules of internal/domain/order move it,
	// and a later run starts from it (continue-as-new).
	st order.State

	// lock serialises the operations on the order, so that two refunds can
	// never both pass the captured-amount check.
	lock workflow.Mutex
	// inFlight counts pending refunds still being watched and ledger
	// postings still running (postToLedger); the order ends only at zero.
	inFlight int

	// listening is set once the coroutine that takes the 3-D Secure and
	// APM callbacks runs (listenToShopper).
	listening bool

	// continues is set when this order may continue as new (see
	// changeContinueAsNew); operations counts this run's operations.
	continues  bool
	operations int

	// Notifications waiting to be delivered, one after the other.
	notices    []notice
	delivering bool // deliverAll runs (startDelivery)

	// loaded is unset while a reopened run has not taken its state yet;
	// refusing, when set, is the code it refuses every operation with.
	loaded   bool
	refusing *codes.Code
	// keepOpen is set when the order's state could not be saved for
	// reopening: the order stays open through its refund window.
	keepOpen bool
	// savedReopen is the reopen state the outcome's write saved with it
	// (shape 4): closeIdle saves nothing when the state is still that.
	savedReopen []byte
	// foldedSave: this run saved a reopen state with an outcome, so it
	// must leave its final state in the record however it ends.
	foldedSave bool
	// savedIdle: closeIdle saved a reopen state and the run went on (an
	// operation came meanwhile), so, as foldedSave, the run must leave
	// its final state in the record (changeIdleSavedThenMoved).
	savedIdle bool
	// chargeUnknown is set when a charge ended with its outcome unknown:
	// a subscription is told, so it does not charge the period again.
	chargeUnknown bool
	// firstCharge is the charge's first attempt, made by the record's
	// local activity (shape 5), until chargeAt takes it as its first
	// Authorise's.
	firstCharge *activities.ChargeAttempt
}

// Order is the workflow of one payment order: it records the order, checks
// risk, authorises through the connector and keeps the record in step. It
// stays open while the order can still be reviewed, captured, cancelled or
// refunded, and runs the deadlines of each. It returns the payment result;
// the order's later state is in the order-state query and the record.
func Order(ctx workflow.Context, in OrderInput) (PaymentResult, error) {
	w := &orderWorkflow{in: in, id: workflow.GetInfo(ctx).WorkflowExecution.ID, st: order.NewState(in.Card, workflow.Now(ctx)),
		lock: workflow.NewMutex(ctx), root: ctx, loaded: !in.Reopen}
	if in.Resume != nil {
		w.st = in.Resume.Resumed()
	}
	if err := w.registerHandlers(ctx); err != nil {
		return PaymentResult{}, err
	}
	if in.Reopen {
		return w.reopen(ctx)
	}
	if !w.lean() {
		w.startDelivery()
	}
	if in.Resume != nil {
		// A later run: the payment was answered by the first; the order
		// goes on taking operations and running its deadlines.
		return w.carryOn(ctx)
	}
	res, err := w.pay(ctx)
	refused := illegalMove(err)
	if refused {
		// The payment's outcome was a move the state table refuses: it
		// changed nothing (checkMove logged it). A workflow never fails
		// for what it was given, so the request is answered with the
		// order as it stands, nothing is notified, and the order's
		// deadlines run from its unchanged status.
		res, err = w.asItStands(), nil
	}
	if err != nil {
		return PaymentResult{}, err
	}
	w.st.Result = &res
	if in.AnswerLocally {
		w.answerLocally(ctx, res)
	}
	if in.Recurring != nil {
		w.reportCharge(ctx, res)
	}
	if res.ExistingTransactionID == "" {
		// A held order or one waiting for its shopper is not final yet:
		// its later result is notified.
		if !refused && w.st.Status != status.HeldForReview && w.st.Status != status.Pending && !w.st.Unrecorded {
			if err := w.notify(ctx, NotifyPayment, res.Code(), nil); err != nil {
				return PaymentResult{}, err
			}
		}
		if err := w.lifecycle(ctx); errors.Is(err, errRunFull) {
			return res, w.continueAsNew(ctx)
		} else if errors.Is(err, errIdle) {
			return res, nil
		} else if err != nil {
			return PaymentResult{}, err
		}
	}
	// Let requests that are waiting for an answer receive it, and deliver
	// what their operations notify.
	if err := workflow.Await(ctx, func() bool {
		return workflow.AllHandlersFinished(ctx) && w.notificationsIdle() && w.inFlight == 0
	}); err != nil {
		return PaymentResult{}, err
	}
	if w.closesIdle() && (w.foldedSave || w.savedIdle && w.version(ctx, changeIdleSavedThenMoved, 1) == 1) {
		// The outcome's write saved the order paid (shape 4), or the run
		// saved it paid when idle and an operation came meanwhile, and the
		// run ends another way (refunded in full, say): the record must
		// hold what the order is now, or an operation would reopen it as
		// paid and refund it again.
		w.closeIdle(ctx)
	}
	return res, nil
}

// carryOn runs a later run of the order: its lifecycle, then the same wait
// for handlers and deliveries as the first run's end.
func (w *orderWorkflow) carryOn(ctx workflow.Context) (PaymentResult, error) {
	err := w.lifecycle(ctx)
	if errors.Is(err, errRunFull) {
		return *w.st.Result, w.continueAsNew(ctx)
	}
	if errors.Is(err, errIdle) {
		return *w.st.Result, nil
	}
	if err != nil {
		return PaymentResult{}, err
	}
	if err := workflow.Await(ctx, func() bool { return w.quiet(ctx) }); err != nil {
		return PaymentResult{}, err
	}
	if w.closesIdle() && w.st.Runs > 0 {
		// A later run of an order that closes idle leaves its final state
		// in the record, so that an operation that reopens the order is
		// refused for what the order is (refunded, say), and the row is
		// not left held by a run that ended.
		w.closeIdle(ctx)
	}
	return *w.st.Result, nil
}

func (w *orderWorkflow) registerHandlers(ctx workflow.Context) error {
	err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateAuthorise,
		func(ctx workflow.Context, req AuthoriseRequest) (PaymentResult, error) {
			if err := workflow.Await(ctx, func() bool { return w.st.Result != nil || w.refusing != nil }); err != nil {
				return PaymentResult{}, err
			}
			if w.refusing != nil {
				return PaymentResult{}, closedOrder()
			}
			if req.RequestFingerprint != w.in.RequestFingerprint {
				// A reopened run checks the request once its state is loaded.
				return PaymentResult{}, temporal.NewApplicationError("order_no already used with different content", ErrTypeOrderMismatch)
			}
			return *w.st.Result, nil
		},
		workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, req AuthoriseRequest) error {
			if !w.loaded {
				return nil
			}
			if req.RequestFingerprint != w.in.RequestFingerprint {
				return temporal.NewApplicationError("order_no already used with different content", ErrTypeOrderMismatch)
			}
			return nil
		}},
	)
	if err != nil {
		return err
	}
	if err := w.registerOperations(ctx); err != nil {
		return err
	}
	if err := w.registerShopperHandlers(ctx); err != nil {
		return err
	}
	return workflow.SetQueryHandler(ctx, QueryOrderState, func() (OrderState, error) {
		return OrderState{TransactionID: w.in.TransactionID, PaymentStatus: w.st.Status, Result: w.st.Result,
			Notifications: w.st.Notifications}, nil
	})
}

func (w *orderWorkflow) pay(ctx workflow.Context) (PaymentResult, error) {
	in := w.in
	lctx := workflow.WithLocalActivityOptions(ctx, storeOptions)
	var recorded activities.RecordOrderResult
	rec := activities.RecordOrderInput{
		TransactionID:      in.TransactionID,
		WorkflowID:         w.id,
		MerchantID:         in.MerchantID,
		AccountID:          in.AccountID,
		OrderNo:            in.OrderNo,
		Currency:           in.Currency,
		Amount:             in.Amount,
		PaymentStatus:      status.Pending,
		OrderStatus:        status.OrderPending,
		ResultCode:         "",
		ResultMessage:      "",
		CaptureMode:        in.CaptureMode,
		CardMasked:         w.st.Card.Masked,
		CardBrand:          w.st.Card.Brand,
		CardToken:          w.st.Card.Token,
		CardFingerprint:    w.st.Card.Fingerprint,
		RequestFingerprint: in.RequestFingerprint,
		Details:            in.Details,
		TokenID:            w.st.Card.TokenID,
	}
	if r := in.Recurring; r != nil {
		rec.RecurringID, rec.RecurringCycle = r.RecurringID, r.Cycle
	}
	if w.lean() && in.Kind != KindCheckout && in.Recurring == nil {
		ri := w.riskInput()
		rec.Risk = &ri
	}
	var err error
	if w.chargesWithRecord() {
		var out activities.RecordAndChargeResult
		conn := w.connectorName()
		err = workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, recordChargeOptions), a.RecordAndCharge,
			activities.RecordAndChargeInput{Record: rec, Charge: w.authoriseInput(conn, w.chargeKey(conn), false)}).Get(ctx, &out)
		recorded, w.firstCharge = out.Record, out.Charge
	} else {
		err = workflow.ExecuteLocalActivity(lctx, a.RecordOrder, rec).Get(ctx, &recorded)
	}
	if unrecordableError(err) {
		return w.unrecordable(ctx, rec, err)
	}
	if err != nil {
		return PaymentResult{}, err
	}
	if recorded.ExistingTransactionID != "" {
		return w.existing(recorded.ExistingTransactionID), nil
	}
	if in.Kind == KindCheckout {
		// The shopper gives the card on our payment page.
		return w.awaitShopper(ctx, "")
	}
	return w.checkAndCharge(ctx, recorded.Risk)
}

// existing is the result of an order whose order_no belongs to an older order
// of the account; the API answers from that order's record.
func (w *orderWorkflow) existing(transactionID string) PaymentResult {
	return PaymentResult{
		MerchantID:            w.in.MerchantID,
		AccountID:             w.in.AccountID,
		OrderNo:               w.in.OrderNo,
		ExistingTransactionID: transactionID,
	}
}

// unrecordableError reports whether a record write failed in a way no retry
// can mend: Postgres refused the values, or the transaction id is another
// order's.
func unrecordableError(err error) bool {
	t := errorType(err)
	return t == activities.ErrTypeRecordRejected || t == activities.ErrTypeTransactionIDConflict
}

// errorType is the type of the application error in err, or "".
func errorType(err error) string {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		return appErr.Type()
	}
	return ""
}

// unrecordable ends an order whose first record write cannot succeed, before
// anything was checked or charged. Retrying would only end in a failed
// workflow, an order_no that can never be used again and a sealed CVV left in
// the vault. Instead the order ends at once, final: payment_status 6000,
// order_status 0 and S0002 (the database refused the order's values) or
// S0003 (the transaction id is another order's), and its card is removed
// from the vault. After a refused value the order is recorded again with its
// keys only, so that a repeated request is answered the same from the
// record; under another order's transaction id nothing can be recorded.
func (w *orderWorkflow) unrecordable(ctx workflow.Context, rec activities.RecordOrderInput, cause error) (PaymentResult, error) {
	logger := workflow.GetLogger(ctx)
	lctx := workflow.WithLocalActivityOptions(ctx, storeOptions)
	code, transactionID := codes.RecordRejected, w.in.TransactionID
	if errorType(cause) == activities.ErrTypeTransactionIDConflict {
		code, transactionID = codes.TransactionIDConflict, ""
	}
	logger.Error("order cannot be recorded: it ends without a charge", "code", code.ID, "error", cause)
	if err := w.checkMove(ctx, status.Failed); err != nil {
		return PaymentResult{}, err
	}
	w.st.Unrecorded = true
	if code.Is(codes.RecordRejected) {
		var recorded activities.RecordOrderResult
		err := workflow.ExecuteLocalActivity(lctx, a.RecordOrder, keysOnly(rec, code)).Get(ctx, &recorded)
		switch {
		case err == nil && recorded.ExistingTransactionID != "":
			// The order_no is an older order's, whose card entry this
			// request's token may be: the API answers from that record.
			return w.existing(recorded.ExistingTransactionID), nil
		case err == nil:
			w.st.Unrecorded = false
		case unrecordableError(err):
			logger.Error("order keys cannot be recorded either", "error", err)
		default:
			return PaymentResult{}, err
		}
	}
	// Nothing will ever be charged on this card entry: forget it whole,
	// unless it is a stored card, which is the merchant's to delete.
	if !w.st.Card.Stored {
		if err := workflow.ExecuteLocalActivity(lctx, a.DeleteCard, activities.DeleteCardInput{CardToken: w.st.Card.Token}).Get(ctx, nil); err != nil {
			return PaymentResult{}, err
		}
	}
	if err := w.setStatus(ctx, status.Failed); err != nil {
		return PaymentResult{}, err
	}
	return PaymentResult{
		TransactionID: transactionID,
		MerchantID:    w.in.MerchantID,
		AccountID:     w.in.AccountID,
		OrderNo:       w.in.OrderNo,
		Amount:        w.in.Amount,
		Currency:      w.in.Currency,
		PaymentStatus: status.Failed,
		OrderStatus:   status.OrderFailure,
		ResultCode:    code.ID,
		ResultMessage: code.Message,
		CardMasked:    w.st.Card.Masked,
	}, nil
}

// keysOnly is an order's first record reduced to what the API checked
// before the workflow started (ids, amount, masked card, the request's
// fingerprint) and ended with a final code: no free text of the merchant's,
// no card token.
func keysOnly(rec activities.RecordOrderInput, code codes.Code) activities.RecordOrderInput {
	return activities.RecordOrderInput{
		TransactionID:      rec.TransactionID,
		WorkflowID:         rec.WorkflowID,
		MerchantID:         rec.MerchantID,
		AccountID:          rec.AccountID,
		OrderNo:            rec.OrderNo,
		Currency:           rec.Currency,
		Amount:             rec.Amount,
		PaymentStatus:      status.Failed,
		OrderStatus:        status.OrderFailure,
		ResultCode:         code.ID,
		ResultMessage:      code.Message,
		CaptureMode:        rec.CaptureMode,
		CardMasked:         rec.CardMasked,
		CardBrand:          rec.CardBrand,
		CardFingerprint:    rec.CardFingerprint,
		RequestFingerprint: rec.RequestFingerprint,
		Details: order.Details{
			MerchantID: rec.MerchantID,
			AccountID:  rec.AccountID,
			OrderNo:    rec.OrderNo,
			Currency:   rec.Currency,
		},
	}
}

// checkAndCharge runs the risk rules, then pays by the order's method.
//
// checked is the verdict when the record's activity already ran the check
// (shape 2); nil runs it here.
func (w *orderWorkflow) checkAndCharge(ctx workflow.Context, checked *risk.Result) (PaymentResult, error) {
	in := w.in
	if in.Recurring != nil {
		// A subscription's charge is the merchant's, made on a card the
		// shopper's first payment already passed the rules with: the
		// shopper rules (velocity, IP, email) have nothing to judge.
		return w.authorise(ctx)
	}
	var verdict risk.Result
	if checked != nil {
		verdict = *checked
	} else {
		lctx := workflow.WithLocalActivityOptions(ctx, storeOptions)
		if err := workflow.ExecuteLocalActivity(lctx, a.CheckRisk, w.riskInput()).Get(ctx, &verdict); err != nil {
			return PaymentResult{}, err
		}
	}

	next, step := w.st.RiskChecked(verdict)
	if step.Status == status.HeldForReview && (in.Kind == KindAPM || in.APM != nil) &&
		w.version(ctx, changeAPMReviewRejects, 1) != workflow.DefaultVersion {
		// An APM payment is made by the shopper at the provider, now or
		// never: a reviewer's later approval has no shopper to send there
		// (it charged a card the order does not have). The rules wanted a
		// person to look before money moved, so it does not move.
		rejected := verdict
		rejected.Action = risk.Reject
		next, step = w.st.RiskChecked(rejected)
		step.Code = step.Code.With("an APM payment cannot wait for a review")
	}
	w.st = next
	if step.Next == order.FinishPayment {
		// A held order's CVV stays sealed in the vault until a reviewer
		// decides; a rejected one's goes now.
		return w.finish(ctx, activities.FinishOrderInput{PaymentStatus: step.Status}, step.Code, step.Status != status.HeldForReview)
	}
	switch {
	case in.Kind == KindAPM || in.APM != nil:
		// A direct APM order, or a hosted one whose shopper chose an APM.
		w.listenToShopper()
		return w.startAPM(ctx)
	case in.ThreeDS:
		w.listenToShopper()
		return w.authenticate(ctx)
	}
	return w.authorise(ctx)
}

// riskInput is the risk check's view of the order and its card.
func (w *orderWorkflow) riskInput() activities.RiskInput {
	in := w.in
	return activities.RiskInput{
		TransactionID:   in.TransactionID,
		MerchantID:      in.MerchantID,
		AccountID:       in.AccountID,
		Amount:          in.Amount,
		Currency:        in.Currency,
		CardFingerprint: w.st.Card.Fingerprint,
		CardBIN:         risk.BIN(w.st.Card.Masked),
		CardMasked:      w.st.Card.Masked,
		ShopperEmail:    in.Details.ShopperEmail,
		ShopperIP:       in.Details.ShopperIP,
		BillingCountry:  in.Details.BillingCountry,
		// The device feeds the device velocity rule (issue 29).
		DeviceFingerprint: in.Details.DeviceFingerprint,
		Settings:          in.Risk,
	}
}

// authorise charges the card and records the outcome.
func (w *orderWorkflow) authorise(ctx workflow.Context) (PaymentResult, error) {
	charge, code, err := w.charge(ctx)
	if err != nil {
		return PaymentResult{}, err
	}
	next, to := w.st.Charged(chargeOf(charge), w.in.Amount, w.in.CaptureMode)
	w.st = next
	out := activities.FinishOrderInput{PaymentStatus: to, ConnectorRef: charge.ChargeID}
	if charge.Approved {
		out.AuthCode = charge.AuthCode
		out.CapturedAmount = charge.CapturedAmount
		w.afterApproval(ctx)
	}
	return w.finish(ctx, out, code, true)
}

// chargeOf is the acquirer's answer to a charge as the order's rules take it.
func chargeOf(o activities.ChargeOutcome) order.Charge {
	return order.Charge{Connector: o.Connector, ChargeID: o.ChargeID, Approved: o.Approved, Decline: o.DeclineCode,
		AuthCode: o.AuthCode, CapturedAmount: o.CapturedAmount}
}

// finish records a payment outcome: it drops the CVV when the authorisation
// is over, writes the order row, and moves the workflow's status.
func (w *orderWorkflow) finish(ctx workflow.Context, out activities.FinishOrderInput, code codes.Code, dropCVV bool) (PaymentResult, error) {
	// A move the state table refuses is found before anything is done:
	// the CVV, the record and the status stay as they were.
	if err := w.checkMove(ctx, out.PaymentStatus); err != nil {
		return PaymentResult{}, err
	}
	in := w.in
	lctx := workflow.WithLocalActivityOptions(ctx, storeOptions)
	// The security code is needed for this authorisation only. From shape
	// 2 the outcome's write drops it.
	if dropCVV && w.lean() {
		out.DropCVVToken = w.st.Card.Token
	} else if dropCVV {
		if err := workflow.ExecuteLocalActivity(lctx, a.DropCVV, activities.DropCVVInput{CardToken: w.st.Card.Token}).Get(ctx, nil); err != nil {
			return PaymentResult{}, err
		}
	}
	out.TransactionID = in.TransactionID
	out.Version, out.Task = w.nextWrite(ctx)
	out.ResultCode, out.ResultMessage = split(code)
	out.OrderStatus = status.OrderStatusOf(out.PaymentStatus)
	out.Risk = w.st.Risk
	out.Connector = w.recordedConnector()
	out.Is3DS, out.ThreeDSResult = w.st.ThreeDS.Used, w.st.ThreeDS.Result
	credited := w.lean() && w.st.CreditsOnMove(out.PaymentStatus)
	if credited {
		// The move to paid is checked, so the credit starts now, beside
		// the outcome's write: both are local activities of this task,
		// and the answer waits for the slower one only.
		w.creditPaid(ctx)
	}
	// The move is dated before the outcome's write: the workflow's clock
	// moves on when a local activity completes, and the state saved with
	// the outcome (shape 4) must be the state the move makes.
	movedAt := workflow.Now(ctx)
	out.Reopen = w.foldedReopen(movedAt, workflow.GetInfo(ctx).FirstRunID, out)
	full, err := w.recordOutcome(ctx, out)
	if err != nil {
		return PaymentResult{}, err
	}
	if full && out.Reopen != nil {
		w.savedReopen, w.foldedSave = out.Reopen.Input, true
	}
	if w.in.Shape < shapeFoldedSave {
		movedAt = workflow.Now(ctx)
	}
	if err := w.moveAt(ctx, out.PaymentStatus, !credited, movedAt); err != nil {
		return PaymentResult{}, err
	}
	return w.paymentResult(out), nil
}

// paymentResult is the answer to the payment with outcome out, from the
// order as it stands.
func (w *orderWorkflow) paymentResult(out activities.FinishOrderInput) PaymentResult {
	in := w.in
	return PaymentResult{
		TransactionID: in.TransactionID,
		MerchantID:    in.MerchantID,
		AccountID:     in.AccountID,
		OrderNo:       in.OrderNo,
		Amount:        in.Amount,
		Currency:      in.Currency,
		PaymentStatus: w.st.Status,
		OrderStatus:   out.OrderStatus,
		ResultCode:    out.ResultCode,
		ResultMessage: out.ResultMessage,
		CardMasked:    w.st.Card.Masked,
		CardToken:     w.st.Card.Token,
		Connector:     out.Connector,
		AuthCode:      out.AuthCode,
		Risk:          w.st.Risk,
		Is3DS:         out.Is3DS,
		ThreeDSResult: out.ThreeDSResult,
		TokenID:       w.st.TokenID,
		Recurring:     w.st.Recurring,
	}
}

// recordOutcome writes a payment outcome on the order row, and reports
// whether it was written whole. When Postgres refuses the write for its
// values (text from the acquirer, say), the outcome is written again with
// its status, code and amount only; if even that is refused, the workflow
// goes on with the outcome it knows, which its result and queries carry,
// rather than fail after money may have moved.
func (w *orderWorkflow) recordOutcome(ctx workflow.Context, out activities.FinishOrderInput) (bool, error) {
	lctx := workflow.WithLocalActivityOptions(ctx, storeOptions)
	err := workflow.ExecuteLocalActivity(lctx, a.FinishOrder, out).Get(ctx, nil)
	if errorType(err) != activities.ErrTypeRecordRejected {
		return err == nil, err
	}
	logger := workflow.GetLogger(ctx)
	logger.Error("order outcome refused by the record: writing it without details", "error", err)
	w.st.Writes++
	bare := activities.FinishOrderInput{
		TransactionID:  out.TransactionID,
		Version:        w.st.Writes,
		Task:           out.Task,
		PaymentStatus:  out.PaymentStatus,
		OrderStatus:    out.OrderStatus,
		ResultCode:     out.ResultCode,
		ResultMessage:  out.ResultMessage,
		CapturedAmount: out.CapturedAmount,
		Connector:      out.Connector,
	}
	err = workflow.ExecuteLocalActivity(lctx, a.FinishOrder, bare).Get(ctx, nil)
	if errorType(err) == activities.ErrTypeRecordRejected {
		logger.Error("order outcome refused by the record", "payment_status", out.PaymentStatus, "code", out.ResultCode, "error", err)
		return false, nil
	}
	return false, err
}

// setStatus moves the order and keeps the PaymentStatus search attribute in
// step. A move the state table refuses (checkMove) changes nothing and is
// returned as an error wrapping status.ErrIllegalTransition. The steps that
// write the record (finish, save, unrecordable) check the move before they
// write, so that a refused move leaves the record as it was too.
func (w *orderWorkflow) setStatus(ctx workflow.Context, to status.Payment) error {
	return w.moveTo(ctx, to, true)
}

// moveTo is setStatus; credit false leaves out the ledger credit of a move
// to paid, which the caller has already started (finish, shape 2).
func (w *orderWorkflow) moveTo(ctx workflow.Context, to status.Payment, credit bool) error {
	return w.moveAt(ctx, to, credit, workflow.Now(ctx))
}

// moveAt is moveTo with the move dated at.
func (w *orderWorkflow) moveAt(ctx workflow.Context, to status.Payment, credit bool, at time.Time) error {
	if err := w.checkMove(ctx, to); err != nil {
		return err
	}
	credits := credit && w.st.CreditsOnMove(to)
	w.st = w.st.Moved(to, at)
	if credits {
		w.creditPaid(ctx)
	}
	return workflow.UpsertTypedSearchAttributes(ctx, SearchPaymentStatus.ValueSet(int64(to)))
}

// creditPaid posts a paid order's money to the ledger: the order is paid (a
// sale, a capture, an approved review, a 3-D Secure or APM payment), and its
// captured amount is the merchant's.
func (w *orderWorkflow) creditPaid(ctx workflow.Context) {
	w.postToLedger(ctx, ledgerCredit, activities.LedgerOrderInput{
		Reference: "order/" + w.in.TransactionID + "/paid", OrderKey: w.in.TransactionID, MerchantID: w.in.MerchantID,
		AccountID: w.in.AccountID, Currency: w.in.Currency, Amount: w.st.Captured,
	})
}

// checkMove returns nil when the order may move to payment_status to
// (order.State.CheckMove: the state table of docs/design.md §4, or a
// restated status).
//
// A refused move is a flaw in the workflow (a step that believed the order
// was elsewhere), never the merchant's or the shopper's doing. It is logged
// here, once, with both statuses, and returned as an error wrapping
// status.ErrIllegalTransition. The step that met it stops there and changes
// neither the record nor the status; illegalMove tells its callers, which
// go on without it rather than fail the workflow: the payment is answered
// with the order as it stands (Order), a deadline leaves the order waiting
// for another step (lifecycle), a batch entry is refused with I0018
// (stepFailed), and a callback or a refund poll is logged and dropped, as
// any of their errors is.
func (w *orderWorkflow) checkMove(ctx workflow.Context, to status.Payment) error {
	if err := w.st.CheckMove(to); err != nil {
		workflow.GetLogger(ctx).Error("payment_status move refused: the order stays as it is",
			"transaction_id", w.in.TransactionID, "from", int(w.st.Status), "to", int(to), "error", err)
		return err
	}
	return nil
}

// illegalMove reports whether err is a move the state table refused (see
// checkMove); the step that returned it changed nothing.
func illegalMove(err error) bool { return errors.Is(err, status.ErrIllegalTransition) }

// asItStands is the payment result of the order as it stands, for a payment
// whose outcome was refused by the state table: its unchanged status, and
// S0001 since the fault is ours.
func (w *orderWorkflow) asItStands() PaymentResult {
	return PaymentResult{
		TransactionID: w.in.TransactionID,
		MerchantID:    w.in.MerchantID,
		AccountID:     w.in.AccountID,
		OrderNo:       w.in.OrderNo,
		Amount:        w.in.Amount,
		Currency:      w.in.Currency,
		PaymentStatus: w.st.Status,
		OrderStatus:   status.OrderStatusOf(w.st.Status),
		ResultCode:    codes.SystemError.ID,
		ResultMessage: codes.SystemError.Message,
		CardMasked:    w.st.Card.Masked,
	}
}

// DefaultConnector runs the orders whose input names no connector: every
// order started before accounts chose their connector went through it.
const DefaultConnector = connector.DefaultName

// connectorName is the connector the order's acquirer operations go to.
func (w *orderWorkflow) connectorName() string {
	if w.in.Connector != "" {
		return w.in.Connector
	}
	return DefaultConnector
}

// recordedConnector is the connector name the order's record and answers
// show: the one that answered its charge, else the one it is routed to.
func (w *orderWorkflow) recordedConnector() string {
	if w.st.AnsweredBy != "" {
		return w.st.AnsweredBy
	}
	return w.connectorName()
}

// charge authorises at the acquirer. When the outcome of an attempt is
// unknown it asks the acquirer before anything else, and charges again only
// with the same idempotency key, so a card is never charged twice. A routed
// order may go on to the next connector of its route (failover.go).
func (w *orderWorkflow) charge(ctx workflow.Context) (activities.ChargeOutcome, codes.Code, error) {
	if w.in.Route != nil && len(w.in.Route.Connectors) > 0 && w.st.ThreeDS.Data == nil {
		return w.chargeRouted(ctx)
	}
	outcome, code, _, err := w.chargeAt(ctx, w.connectorName(), false)
	return outcome, code, err
}

// chargeAt charges at connector conn, with that connector's key, asking it
// after an attempt whose outcome is unknown; it also tells what the charge
// came to for failover (routing.Outcome; "" when the payment must stop
// whatever its route says). With failover, a connector that is down says
// so at once instead of being tried again.
func (w *orderWorkflow) chargeAt(ctx workflow.Context, conn string, failover bool) (activities.ChargeOutcome, codes.Code, routing.Outcome, error) {
	key := w.chargeKey(conn)
	actx := workflow.WithLocalActivityOptions(ctx, authoriseOptions)
	ictx := workflow.WithActivityOptions(ctx, inquiryOptions)
	// final: the connector's last "not found" was its final word (its
	// inquiry is never behind a charge, as the simulators').
	final := false
	for round := 0; round < chargeRounds; round++ {
		var outcome activities.ChargeOutcome
		var err error
		if first := w.takeFirstCharge(round, conn); first != nil {
			outcome, err = first.outcome, first.err
		} else {
			err = workflow.ExecuteLocalActivity(actx, a.Authorise, w.authoriseInput(conn, key, failover)).Get(ctx, &outcome)
		}
		if err == nil {
			return outcome, outcomeCode(outcome), attemptOutcome(outcome), nil
		}
		var appErr *temporal.ApplicationError
		// A deleted stored card: this attempt sent nothing, but an earlier
		// one may have (a worker that died after it runs the activity again
		// as its first attempt), so the acquirer is asked as after a
		// timeout. Only the activities of this change return CardDeleted,
		// so older histories never take it.
		deleted := errors.As(err, &appErr) && appErr.Type() == activities.ErrTypeCardDeleted
		if errors.As(err, &appErr) && (appErr.Type() == activities.ErrTypeCardUnavailable || appErr.Type() == activities.ErrTypeAcquirerRejected) {
			workflow.GetLogger(ctx).Error("acquirer refused the charge request", "error", err)
			class := routing.Refused
			if appErr.Type() == activities.ErrTypeCardUnavailable {
				class = ""
			}
			// This attempt charged nothing, but an earlier one may have
			// (a worker that died after sending it, its charge unknown to
			// the worker that took over): the acquirer is asked before the
			// order fails.
			if w.version(ctx, changeRefusalInquiry, 1) == workflow.DefaultVersion {
				return activities.ChargeOutcome{}, codes.ConnectorError, class, nil
			}
			// Such an attempt was sent before this task began; asked before
			// its deadline, the acquirer might not have made it yet.
			var found activities.InquiryResult
			err := workflow.ExecuteActivity(ictx, a.InquireCharge, activities.InquireInput{Connector: conn, IdempotencyKey: key,
				SentBefore: workflow.Now(ctx)}).Get(ctx, &found)
			if err != nil {
				return activities.ChargeOutcome{}, codes.Code{}, "", err
			}
			if found.Found {
				return found.Outcome, outcomeCode(found.Outcome), attemptOutcome(found.Outcome), nil
			}
			return activities.ChargeOutcome{}, codes.ConnectorError, class, nil
		}
		if errors.As(err, &appErr) && appErr.Type() == activities.ErrTypeAcquirerDown {
			workflow.GetLogger(ctx).Warn("connector down", "connector", conn, "error", err)
			return activities.ChargeOutcome{}, codes.ConnectorError, routing.Down, nil
		}
		if errors.As(err, &appErr) && appErr.Type() == activities.ErrTypeAcquirerSkipped {
			return activities.ChargeOutcome{}, codes.ConnectorError, routing.Skipped, nil
		}
		var found activities.InquiryResult
		// A routed payment moves on when the connector says it never
		// charged: the attempt that timed out may still be on its way, so
		// the connector is asked once it can no longer be made.
		if err := workflow.ExecuteActivity(ictx, a.InquireCharge, activities.InquireInput{Connector: conn, IdempotencyKey: key,
			AttemptsEnded: failover}).Get(ctx, &found); err != nil {
			return activities.ChargeOutcome{}, codes.Code{}, "", err
		}
		if found.Found {
			return found.Outcome, outcomeCode(found.Outcome), attemptOutcome(found.Outcome), nil
		}
		if deleted {
			return activities.ChargeOutcome{}, codes.TokenDeleted, "", nil
		}
		final = found.NeverCharged
		if failover && found.NeverCharged {
			// The connector's final word: nothing was charged, so the
			// payment may go on to the next connector.
			workflow.GetLogger(ctx).Warn("charge never made at the connector", "connector", conn)
			return activities.ChargeOutcome{}, codes.ConnectorError, routing.Down, nil
		}
	}
	if !final && w.version(ctx, changeLateLook, 1) != workflow.DefaultVersion {
		if outcome, ok := w.lookLate(ctx, conn, key, failover); ok {
			return outcome, outcomeCode(outcome), attemptOutcome(outcome), nil
		}
	}
	// Never answered, and never found: it may still have charged.
	w.chargeUnknown = true
	return activities.ChargeOutcome{}, codes.ConnectorError, routing.Unknown, nil
}

// lateLooks are the waits of lookLate, an hour in all: Stripe's search
// catches up with a new charge within minutes, and it keeps a key's first
// answer for a day.
var lateLooks = []time.Duration{time.Minute, 4 * time.Minute, 15 * time.Minute, 40 * time.Minute}

// lookLate settles a charge that stayed unknown at a connector whose
// inquiry may lag behind its charges (Stripe's search): its "not found"
// did not say the card was not charged, and the order's failure would
// have told the merchant so, who charges again (a subscription's next
// attempt does, under a new key). After each wait the charge is sent again
// with its key, which such a connector answers with the key's first answer
// (or makes now, once), and else asked about. It reports false when every
// look went unanswered.
func (w *orderWorkflow) lookLate(ctx workflow.Context, conn, key string, failover bool) (activities.ChargeOutcome, bool) {
	actx := workflow.WithLocalActivityOptions(ctx, authoriseOptions)
	ictx := workflow.WithActivityOptions(ctx, inquiryOptions)
	var outcome activities.ChargeOutcome
	found, _ := onLateLooks(ctx, func() (bool, bool) {
		err := workflow.ExecuteLocalActivity(actx, a.Authorise, w.authoriseInput(conn, key, failover)).Get(ctx, &outcome)
		if err == nil {
			return true, false
		}
		workflow.GetLogger(ctx).Warn("charge still unknown", "connector", conn, "error", err)
		var inquiry activities.InquiryResult
		if err := workflow.ExecuteActivity(ictx, a.InquireCharge, activities.InquireInput{Connector: conn, IdempotencyKey: key,
			AttemptsEnded: true}).Get(ctx, &inquiry); err != nil {
			return false, true
		}
		outcome = inquiry.Outcome
		return inquiry.Found, false
	})
	return outcome, found
}

// onLateLooks calls look after each of lateLooks until it reports done or
// stop, and reports whether it was done; its error is only the workflow's
// cancellation.
func onLateLooks(ctx workflow.Context, look func() (done, stop bool)) (bool, error) {
	for _, wait := range lateLooks {
		if err := workflow.Sleep(ctx, wait); err != nil {
			return false, err
		}
		if done, stop := look(); done || stop {
			return done, nil
		}
	}
	return false, nil
}

// ThreeDSData is a 3-D Secure result as an order's charge carries it.
type ThreeDSData = activities.ThreeDSData

// threeDSData is the authentication a charge carries, as the activity
// takes it.
func threeDSData(d *connector.ThreeDSData) *activities.ThreeDSData {
	if d == nil {
		return nil
	}
	return &activities.ThreeDSData{AuthenticationID: d.AuthenticationID, ECI: d.ECI, CAVV: d.CAVV}
}

// CurrentOrderKeys is the key scheme new orders are started with
// (OrderInput.Keys).
const CurrentOrderKeys = 1

// idempotencyKey derives the acquirer's idempotency key of one operation
// from the workflow id, by the order's key scheme (OrderInput.Keys); the
// id's part holds no '/'. Scheme 1's keys begin "o1:", which no key of
// scheme 0 ("order:...") does, so an order of each cannot share one.
func idempotencyKey(workflowID, operation string, scheme int) string {
	if scheme >= 1 {
		id := keyEscaper.Replace(strings.TrimPrefix(workflowID, "order/"))
		return "o1:" + strings.ReplaceAll(id, "/", ":") + ":" + operation
	}
	return strings.ReplaceAll(workflowID, "/", ":") + ":" + operation
}

// keyEscaper makes the id's ':' and '%' stand apart from its '/' once those
// become ':'.
var keyEscaper = strings.NewReplacer("%", "%25", ":", "%3A")

// key is the acquirer's idempotency key of the order's operation.
func (w *orderWorkflow) key(operation string) string {
	return idempotencyKey(w.id, operation, w.in.Keys)
}

func outcomeCode(o activities.ChargeOutcome) codes.Code { return order.ChargeCode(chargeOf(o)) }

func split(c codes.Code) (string, string) { return c.ID, c.Message }
