package workflows_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/internal/domain/capture"
	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/order"
	"github.com/paygate/paygate/internal/domain/refund"
	"github.com/paygate/paygate/internal/domain/risk"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/workflows"
)

// Fixtures of one order. The workflow id fixes the acquirer idempotency key.
const (
	txID        = "1234567890123456789"
	merchantID  = "M100"
	accountID   = "A200"
	orderNo     = "ORD-1"
	amount      = int64(12345)
	currency    = "EUR"
	cardToken   = "tok_0f3a9c"
	fingerprint = "req-fp-1"
	chargeID    = "ch_001"
	authCode    = "A1B2C3"
	// wantKey is idempotencyKey(OrderWorkflowID(merchantID, accountID, orderNo), "authorise").
	wantKey = "order:M100:A200:ORD-1:authorise"
)

// testPANs are the simulator's test cards (docs/design.md §8).
var testPANs = []string{
	"4242424242424242", "5555555555554444", "4000000000000002", "4000000000009995",
	"4000000000000069", "4000000000000127", "4000000000003220", "4000000000000119",
	"4000000000000341",
}

// acts names the activities for mocks, as the workflow does.
var acts *activities.Activities

// ledgerActs names the ledger activities for mocks.
var ledgerActs *activities.LedgerActivities

var (
	accepted = risk.Result{Action: risk.Accept, Reasons: []risk.Reason{
		{Name: risk.RuleAmountLimit, Status: risk.Accept},
		{Name: risk.RuleBlockedCard, Status: risk.Accept},
	}}
	rejectedAmount = risk.Result{Action: risk.Reject, Score: 100, Rule: risk.RuleAmountLimit, Reasons: []risk.Reason{
		{Name: risk.RuleAmountLimit, Status: risk.Reject},
		{Name: risk.RuleBlockedCard, Status: risk.Accept},
	}}
	rejectedCard = risk.Result{Action: risk.Reject, Score: 100, Rule: risk.RuleBlockedCard, Reasons: []risk.Reason{
		{Name: risk.RuleAmountLimit, Status: risk.Accept},
		{Name: risk.RuleBlockedCard, Status: risk.Reject},
	}}
)

// openShape is the shape the tests of an order's later operations start
// orders with: a paid order stays open, so that one run takes them all.
// Shape 3 closes a paid order once idle and reopens it for an operation
// (TestOrderReopens); what the operations do is the same in both.
const openShape = 2

func orderInput(captureMode capture.Mode) workflows.OrderInput {
	return workflows.OrderInput{
		TransactionID: txID,
		MerchantID:    merchantID,
		AccountID:     accountID,
		OrderNo:       orderNo,
		Amount:        amount,
		Currency:      currency,
		CaptureMode:   captureMode,
		Shape:         openShape,
		Card: workflows.CardRef{
			Token:       cardToken,
			Masked:      "424242******4242",
			Brand:       "visa",
			Fingerprint: "card-fp-9",
		},
		RequestFingerprint: fingerprint,
		Details: order.Details{
			MerchantID:   merchantID,
			AccountID:    accountID,
			OrderNo:      orderNo,
			Currency:     currency,
			Amount:       "123.45",
			ShopperEmail: "shopper@example.com",
			FirstName:    "Ada",
			LastName:     "Lovelace",
		},
	}
}

// acquirer scripts Authorise and InquireCharge by call number (from 0) and
// records every activity input.
type acquirer struct {
	risk      risk.Result
	existing  string // transaction id RecordOrder reports as already holding the order_no
	authorise func(n int) (activities.ChargeOutcome, error)
	inquire   func(n int) (activities.InquiryResult, error)
	// recordErr and finishErr script RecordOrder's and FinishOrder's
	// failures by call number (none when nil or when they return nil).
	recordErr func(n int) error
	finishErr func(n int) error

	mu      sync.Mutex
	records []activities.RecordOrderInput
	risks   []activities.RiskInput
	auths   []activities.AuthoriseInput
	// attempts are a routed order's recorded charges.
	attempts []activities.ChargeAttemptInput
	inqs     []activities.InquireInput
	drops    []activities.DropCVVInput
	finish   []activities.FinishOrderInput
	// foldedSaves counts the reopen saves that rode in an outcome's write.
	foldedSaves int
	// chargedWithRecord counts the charge attempts made by the record's
	// activity (RecordAndCharge, shape 5).
	chargedWithRecord int
	deletes           []activities.DeleteCardInput

	// Operations after the payment.
	captures []activities.CaptureInput
	voids    []activities.VoidInput
	refunds  []activities.RefundInput
	polls    []activities.RefundStatusInput
	states   []activities.SaveOrderStateInput
	saved    []activities.SaveRefundInput
	// refundStatus scripts RefundCharge's answer by call number ("succeeded" if nil),
	// pollStatus RefundStatus's.
	refundStatus func(n int) refund.Status
	pollStatus   func(n int) refund.Status
	// refundErr scripts RefundCharge's failures by call number (none when
	// nil or when it returns nil); voidErr VoidCharge's.
	refundErr func(n int) error
	voidErr   func(n int) error
	// captureErr scripts CaptureCharge's failures by call number.
	captureErr func(n int) error
	// saveRefundErr scripts SaveRefund's failures by call number;
	// failed saves are counted in refundSaveFails, not kept in saved.
	saveRefundErr   func(n int) error
	refundSaveFails int

	// The order's saved state for reopening, as the record keeps it: the
	// last saved input and the run that holds it ("" when free).
	reopenSaves []activities.SaveReopenInput
	reopenInput []byte
	reopenRun   string

	// Notifications: deliverOK decides each attempt (acknowledged when nil);
	// supersededBy, when it names one, makes the notification id a newer
	// one's, marked failed and not sent.
	deliverOK    func(id string, attempt int, now time.Time) bool
	supersededBy map[string]string
	notes        []activities.RecordNotificationInput
	deliveries   []activities.DeliverInput
	marks        []activities.MarkNotificationInput
	env          *testsuite.TestWorkflowEnvironment

	// The shopper's side.
	threeDS    activities.ThreeDSOutcome // Authenticate3DS's answer
	apmStatus  connector.APMStatus       // GetAPMPayment's answer
	apmCreated []activities.APMInput
	attached   []activities.AttachCardInput
	// apmCancel answers CancelAPMPayment by call number; nil: the provider
	// calls the payment off, or says the shopper paid first when apmStatus
	// is succeeded. apmCancels are the calls.
	apmCancel  func(n int) (activities.APMOutcome, error)
	apmCancels []activities.APMStatusInput
	// authCancelErr scripts CancelAuthentication's failures by call
	// number; authCancels are the calls.
	authCancelErr func(n int) error
	authCancels   []activities.ThreeDSStatusInput

	// The ledger: every posting, credits and debits in call order;
	// ledgerErr scripts the credit's failures by call number, ledgerCalls
	// counts its calls.
	credits     []activities.LedgerOrderInput
	debits      []activities.LedgerOrderInput
	ledgerErr   func(n int) error
	ledgerCalls int

	// answers are the answers handed to a request waiting in the
	// worker's process (AnswerLocally).
	answers []activities.AnswerLocallyInput
}

// recordOrder is RecordOrder's fake; acq.mu is held.
func (acq *acquirer) recordOrder(in activities.RecordOrderInput) (activities.RecordOrderResult, error) {
	acq.records = append(acq.records, in)
	if acq.recordErr != nil {
		if err := acq.recordErr(len(acq.records) - 1); err != nil {
			return activities.RecordOrderResult{}, err
		}
	}
	if acq.existing != "" || in.Risk == nil {
		return activities.RecordOrderResult{ExistingTransactionID: acq.existing}, nil
	}
	// Shape 2: the record's activity runs the risk check too.
	acq.risks = append(acq.risks, *in.Risk)
	verdict := acq.risk
	return activities.RecordOrderResult{Risk: &verdict}, nil
}

// authoriseCall is Authorise's fake; acq.mu is held.
func (acq *acquirer) authoriseCall(t *testing.T, in activities.AuthoriseInput) (activities.ChargeOutcome, error) {
	acq.auths = append(acq.auths, in)
	if acq.authorise == nil {
		t.Errorf("Authorise called, want it never called")
		return activities.ChargeOutcome{}, temporal.NewNonRetryableApplicationError("unexpected", "Unexpected", nil)
	}
	return acq.authorise(len(acq.auths) - 1)
}

// recordCall keeps a call of the fake acquirer, in, in *calls under its
// lock, and answers what *fail, when scripted, says of that call.
func recordCall[T any](acq *acquirer, calls *[]T, fail *func(n int) error, in T) error {
	acq.mu.Lock()
	defer acq.mu.Unlock()
	*calls = append(*calls, in)
	if *fail != nil {
		return (*fail)(len(*calls) - 1)
	}
	return nil
}

func newEnv(t *testing.T, acq *acquirer) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(workflows.Order, workflow.RegisterOptions{Name: workflows.OrderWorkflowType})
	env.RegisterActivity(&activities.Activities{})
	env.RegisterActivity(&activities.LedgerActivities{})
	env.OnActivity(ledgerActs.LedgerCreditOrder, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.LedgerOrderInput) (activities.LedgerPostingResult, error) {
			acq.mu.Lock()
			defer acq.mu.Unlock()
			acq.ledgerCalls++
			if acq.ledgerErr != nil {
				if err := acq.ledgerErr(acq.ledgerCalls - 1); err != nil {
					return activities.LedgerPostingResult{}, err
				}
			}
			acq.credits = append(acq.credits, in)
			return activities.LedgerPostingResult{EntryID: int64(len(acq.credits))}, nil
		}).Maybe()
	env.OnActivity(ledgerActs.LedgerDebitRefund, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.LedgerOrderInput) (activities.LedgerPostingResult, error) {
			acq.mu.Lock()
			defer acq.mu.Unlock()
			acq.debits = append(acq.debits, in)
			return activities.LedgerPostingResult{EntryID: int64(100 + len(acq.debits))}, nil
		}).Maybe()
	env.OnActivity(acts.SaveOrderReopen, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.SaveReopenInput) (activities.SaveReopenResult, error) {
			acq.mu.Lock()
			defer acq.mu.Unlock()
			if acq.reopenRun != "" && acq.reopenRun != in.Run {
				return activities.SaveReopenResult{}, nil
			}
			acq.reopenSaves = append(acq.reopenSaves, in)
			acq.reopenInput, acq.reopenRun = in.Input, ""
			return activities.SaveReopenResult{Saved: true}, nil
		}).Maybe()
	env.OnActivity(acts.TakeOrderReopen, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.TakeReopenInput) (activities.TakeReopenResult, error) {
			acq.mu.Lock()
			defer acq.mu.Unlock()
			switch {
			case acq.reopenInput == nil:
				return activities.TakeReopenResult{}, nil
			case acq.reopenRun != "" && acq.reopenRun != in.Run:
				return activities.TakeReopenResult{HeldBy: acq.reopenRun}, nil
			}
			acq.reopenRun = in.Run
			return activities.TakeReopenResult{Input: acq.reopenInput}, nil
		}).Maybe()
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{
		ID:        workflows.OrderWorkflowID(merchantID, accountID, orderNo),
		TaskQueue: workflows.TaskQueue,
	})
	env.OnActivity(acts.RecordOrder, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.RecordOrderInput) (activities.RecordOrderResult, error) {
			acq.mu.Lock()
			defer acq.mu.Unlock()
			return acq.recordOrder(in)
		}).Maybe()
	env.OnActivity(acts.RecordAndCharge, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.RecordAndChargeInput) (activities.RecordAndChargeResult, error) {
			acq.mu.Lock()
			defer acq.mu.Unlock()
			// Shape 5: the record's activity makes the charge's first
			// attempt too. It is kept as a record and an Authorise, so
			// that the outcomes read the same in every shape.
			recorded, err := acq.recordOrder(in.Record)
			if err != nil || recorded.Risk == nil || !order.RiskPasses(*recorded.Risk) {
				return activities.RecordAndChargeResult{Record: recorded}, err
			}
			acq.chargedWithRecord++
			outcome, err := acq.authoriseCall(t, in.Charge)
			attempt := &activities.ChargeAttempt{Outcome: &outcome}
			var appErr *temporal.ApplicationError
			switch {
			case errors.As(err, &appErr) && appErr.NonRetryable():
				attempt = &activities.ChargeAttempt{ErrType: appErr.Type(), ErrMessage: appErr.Message()}
			case err != nil:
				attempt = &activities.ChargeAttempt{Retry: true, ErrMessage: err.Error()}
			}
			return activities.RecordAndChargeResult{Record: recorded, Charge: attempt}, nil
		}).Maybe()
	env.OnActivity(acts.CheckRisk, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.RiskInput) (risk.Result, error) {
			acq.mu.Lock()
			defer acq.mu.Unlock()
			acq.risks = append(acq.risks, in)
			return acq.risk, nil
		})
	env.OnActivity(acts.Authorise, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.AuthoriseInput) (activities.ChargeOutcome, error) {
			acq.mu.Lock()
			defer acq.mu.Unlock()
			return acq.authoriseCall(t, in)
		}).Maybe()
	env.OnActivity(acts.InquireCharge, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.InquireInput) (activities.InquiryResult, error) {
			acq.mu.Lock()
			defer acq.mu.Unlock()
			acq.inqs = append(acq.inqs, in)
			if acq.inquire == nil {
				t.Errorf("InquireCharge called, want it never called")
				return activities.InquiryResult{}, temporal.NewNonRetryableApplicationError("unexpected", "Unexpected", nil)
			}
			return acq.inquire(len(acq.inqs) - 1)
		}).Maybe()
	env.OnActivity(acts.RecordChargeAttempt, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.ChargeAttemptInput) error {
			acq.mu.Lock()
			defer acq.mu.Unlock()
			acq.attempts = append(acq.attempts, in)
			return nil
		}).Maybe()
	env.OnActivity(acts.DropCVV, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.DropCVVInput) error {
			acq.mu.Lock()
			defer acq.mu.Unlock()
			acq.drops = append(acq.drops, in)
			return nil
		}).Maybe()
	env.OnActivity(acts.FinishOrder, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.FinishOrderInput) error {
			acq.mu.Lock()
			defer acq.mu.Unlock()
			if in.DropCVVToken != "" {
				// Shape 2: the outcome's write drops the CVV first. It
				// is kept as a drop, so that the outcomes read the same
				// in every shape.
				acq.drops = append(acq.drops, activities.DropCVVInput{CardToken: in.DropCVVToken})
				in.DropCVVToken = ""
			}
			save := in.Reopen
			// Shape 4: the outcome's write saves the reopen state too. It
			// is kept as a save, so that the outcomes read the same in
			// every shape.
			in.Reopen = nil
			acq.finish = append(acq.finish, in)
			if acq.finishErr != nil {
				if err := acq.finishErr(len(acq.finish) - 1); err != nil {
					return err
				}
			}
			if save != nil && (acq.reopenRun == "" || acq.reopenRun == save.Run) {
				acq.reopenSaves = append(acq.reopenSaves, *save)
				acq.foldedSaves++
				acq.reopenInput, acq.reopenRun = save.Input, ""
			}
			return nil
		}).Maybe()
	env.OnActivity(acts.DeleteCard, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.DeleteCardInput) error {
			acq.mu.Lock()
			defer acq.mu.Unlock()
			acq.deletes = append(acq.deletes, in)
			return nil
		}).Maybe()
	env.OnActivity(acts.CaptureCharge, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.CaptureInput) (activities.CaptureOutcome, error) {
			acq.mu.Lock()
			defer acq.mu.Unlock()
			acq.captures = append(acq.captures, in)
			if acq.captureErr != nil {
				if err := acq.captureErr(len(acq.captures) - 1); err != nil {
					return activities.CaptureOutcome{}, err
				}
			}
			return activities.CaptureOutcome{CapturedAmount: in.Amount}, nil
		}).Maybe()
	env.OnActivity(acts.VoidCharge, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.VoidInput) error {
			return recordCall(acq, &acq.voids, &acq.voidErr, in)
		}).Maybe()
	env.OnActivity(acts.RefundCharge, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.RefundInput) (activities.RefundOutcome, error) {
			acq.mu.Lock()
			defer acq.mu.Unlock()
			acq.refunds = append(acq.refunds, in)
			if acq.refundErr != nil {
				if err := acq.refundErr(len(acq.refunds) - 1); err != nil {
					return activities.RefundOutcome{}, err
				}
			}
			st := refund.Succeeded
			if acq.refundStatus != nil {
				st = acq.refundStatus(len(acq.refunds) - 1)
			}
			return activities.RefundOutcome{RefundID: fmt.Sprintf("re_%d", len(acq.refunds)), Status: st}, nil
		}).Maybe()
	env.OnActivity(acts.RefundStatus, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.RefundStatusInput) (activities.RefundOutcome, error) {
			acq.mu.Lock()
			defer acq.mu.Unlock()
			acq.polls = append(acq.polls, in)
			st := refund.Succeeded
			if acq.pollStatus != nil {
				st = acq.pollStatus(len(acq.polls) - 1)
			}
			return activities.RefundOutcome{RefundID: in.RefundID, Status: st}, nil
		}).Maybe()
	env.OnActivity(acts.SaveOrderState, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.SaveOrderStateInput) error {
			acq.mu.Lock()
			defer acq.mu.Unlock()
			acq.states = append(acq.states, in)
			return nil
		}).Maybe()
	acq.env = env
	env.OnActivity(acts.Authenticate3DS, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.ThreeDSInput) (activities.ThreeDSOutcome, error) {
			return acq.threeDS, nil
		}).Maybe()
	env.OnActivity(acts.CreateAPMPayment, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.APMInput) (activities.APMOutcome, error) {
			acq.mu.Lock()
			defer acq.mu.Unlock()
			acq.apmCreated = append(acq.apmCreated, in)
			return activities.APMOutcome{PaymentID: "ap_1", Status: "pending", RedirectURL: "http://provider/apm/ap_1"}, nil
		}).Maybe()
	env.OnActivity(acts.GetAPMPayment, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.APMStatusInput) (activities.APMOutcome, error) {
			return activities.APMOutcome{PaymentID: in.PaymentID, Status: acq.apmStatus}, nil
		}).Maybe()
	env.OnActivity(acts.CancelAPMPayment, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.APMStatusInput) (activities.APMOutcome, error) {
			acq.mu.Lock()
			defer acq.mu.Unlock()
			acq.apmCancels = append(acq.apmCancels, in)
			if acq.apmCancel != nil {
				return acq.apmCancel(len(acq.apmCancels) - 1)
			}
			if acq.apmStatus == connector.APMSucceeded {
				return activities.APMOutcome{PaymentID: in.PaymentID, Status: connector.APMSucceeded}, nil
			}
			return activities.APMOutcome{PaymentID: in.PaymentID, Status: connector.APMCancelled}, nil
		}).Maybe()
	env.OnActivity(acts.CancelAuthentication, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.ThreeDSStatusInput) error {
			return recordCall(acq, &acq.authCancels, &acq.authCancelErr, in)
		}).Maybe()
	env.OnActivity(acts.AttachCard, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.AttachCardInput) error {
			acq.mu.Lock()
			defer acq.mu.Unlock()
			acq.attached = append(acq.attached, in)
			return nil
		}).Maybe()
	env.OnActivity(acts.AnswerLocally, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.AnswerLocallyInput) error {
			acq.mu.Lock()
			defer acq.mu.Unlock()
			acq.answers = append(acq.answers, in)
			return nil
		}).Maybe()
	env.OnActivity(acts.RecordNotification, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.RecordNotificationInput) error {
			acq.mu.Lock()
			defer acq.mu.Unlock()
			acq.notes = append(acq.notes, in)
			return nil
		}).Maybe()
	env.OnActivity(acts.DeliverNotification, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.DeliverInput) (activities.DeliverResult, error) {
			acq.mu.Lock()
			defer acq.mu.Unlock()
			acq.deliveries = append(acq.deliveries, in)
			if by := acq.supersededBy[in.NotifyID]; by != "" {
				return activities.DeliverResult{SupersededBy: by}, nil
			}
			if acq.deliverOK != nil && !acq.deliverOK(in.NotifyID, in.Attempt, acq.env.Now()) {
				return activities.DeliverResult{StatusCode: 503, Error: "HTTP 503"}, nil
			}
			return activities.DeliverResult{Delivered: true, StatusCode: 200}, nil
		}).Maybe()
	env.OnActivity(acts.MarkNotification, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.MarkNotificationInput) error {
			acq.mu.Lock()
			defer acq.mu.Unlock()
			acq.marks = append(acq.marks, in)
			return nil
		}).Maybe()
	env.OnActivity(acts.SaveRefund, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.SaveRefundInput) error {
			acq.mu.Lock()
			defer acq.mu.Unlock()
			if acq.saveRefundErr != nil {
				if err := acq.saveRefundErr(len(acq.saved) + acq.refundSaveFails); err != nil {
					acq.refundSaveFails++
					return err
				}
			}
			acq.saved = append(acq.saved, in)
			return nil
		}).Maybe()
	return env
}

func run(t *testing.T, env *testsuite.TestWorkflowEnvironment, in workflows.OrderInput) workflows.PaymentResult {
	t.Helper()
	env.ExecuteWorkflow(workflows.OrderWorkflowType, in)
	if !env.IsWorkflowCompleted() {
		t.Fatal("workflow did not complete")
	}
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("workflow error: %v", err)
	}
	var res workflows.PaymentResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatalf("workflow result: %v", err)
	}
	return res
}

// Scripted answers.
func approved(captured int64) activities.ChargeOutcome {
	return activities.ChargeOutcome{ChargeID: chargeID, Approved: true, AuthCode: authCode, CapturedAmount: captured}
}

func declined(code connector.DeclineReason) activities.ChargeOutcome {
	return activities.ChargeOutcome{ChargeID: chargeID, DeclineCode: code, Message: "declined by issuer"}
}

func answer(o activities.ChargeOutcome) func(int) (activities.ChargeOutcome, error) {
	return func(int) (activities.ChargeOutcome, error) { return o, nil }
}

func timeout() error {
	return temporal.NewNonRetryableApplicationError("acquirer did not answer in time", activities.ErrTypeAcquirerTimeout, nil)
}

// orderCase is one direct card payment of TestOrder.
type orderCase struct {
	name        string
	captureMode capture.Mode
	risk        risk.Result
	authorise   func(n int) (activities.ChargeOutcome, error)
	inquire     func(n int) (activities.InquiryResult, error)

	wantStatus   status.Payment
	wantOrder    status.Order
	wantCode     string
	wantMessage  string
	wantFinish   activities.FinishOrderInput
	wantAuths    int
	wantInquires int
}

func TestOrder(t *testing.T) {
	// finished is the FinishOrder input of a charge that reached the acquirer.
	finished := func(ps status.Payment, os status.Order, code, msg string) activities.FinishOrderInput {
		return activities.FinishOrderInput{
			TransactionID: txID, Version: 1, PaymentStatus: ps, OrderStatus: os,
			ResultCode: code, ResultMessage: msg, Risk: accepted,
			Connector: workflows.DefaultConnector, ConnectorRef: chargeID,
		}
	}
	paid := finished(status.Paid, status.OrderSuccess, "0000", "Success")
	paid.AuthCode, paid.CapturedAmount = authCode, amount
	authorised := finished(status.Authorised, status.OrderSuccess, "0000", "Success")
	authorised.AuthCode = authCode
	connectorError := activities.FinishOrderInput{
		TransactionID: txID, Version: 1, PaymentStatus: status.Failed, OrderStatus: status.OrderFailure,
		ResultCode: "C0001", ResultMessage: "Acquirer error", Risk: accepted, Connector: workflows.DefaultConnector,
	}
	riskRejected := func(r risk.Result, code, msg string) activities.FinishOrderInput {
		return activities.FinishOrderInput{
			TransactionID: txID, Version: 1, PaymentStatus: status.Failed, OrderStatus: status.OrderFailure,
			ResultCode: code, ResultMessage: msg, Risk: r, Connector: workflows.DefaultConnector,
		}
	}

	tests := []orderCase{
		{
			name: "approved auto capture is paid", captureMode: "auto", risk: accepted,
			authorise:  answer(approved(amount)),
			wantStatus: status.Paid, wantOrder: status.OrderSuccess, wantCode: "0000", wantMessage: "Success",
			wantFinish: paid, wantAuths: 1,
		},
		{
			name: "approved manual capture is authorised", captureMode: "manual", risk: accepted,
			authorise:  answer(approved(0)),
			wantStatus: status.Authorised, wantOrder: status.OrderSuccess, wantCode: "0000", wantMessage: "Success",
			wantFinish: authorised, wantAuths: 1,
		},
		{
			name: "decline do_not_honor", captureMode: "auto", risk: accepted,
			authorise:  answer(declined("do_not_honor")),
			wantStatus: status.Failed, wantOrder: status.OrderFailure, wantCode: "A0001", wantMessage: "Declined",
			wantFinish: finished(status.Failed, status.OrderFailure, "A0001", "Declined"), wantAuths: 1,
		},
		{
			name: "decline insufficient_funds", captureMode: "auto", risk: accepted,
			authorise:  answer(declined("insufficient_funds")),
			wantStatus: status.Failed, wantOrder: status.OrderFailure, wantCode: "A0002", wantMessage: "Insufficient funds",
			wantFinish: finished(status.Failed, status.OrderFailure, "A0002", "Insufficient funds"), wantAuths: 1,
		},
		{
			name: "decline expired_card", captureMode: "auto", risk: accepted,
			authorise:  answer(declined("expired_card")),
			wantStatus: status.Failed, wantOrder: status.OrderFailure, wantCode: "A0003", wantMessage: "Expired card",
			wantFinish: finished(status.Failed, status.OrderFailure, "A0003", "Expired card"), wantAuths: 1,
		},
		{
			name: "decline incorrect_cvc", captureMode: "manual", risk: accepted,
			authorise:  answer(declined("incorrect_cvc")),
			wantStatus: status.Failed, wantOrder: status.OrderFailure, wantCode: "A0004", wantMessage: "Incorrect security code",
			wantFinish: finished(status.Failed, status.OrderFailure, "A0004", "Incorrect security code"), wantAuths: 1,
		},
		{
			name: "decline authentication_required", captureMode: "auto", risk: accepted,
			authorise:  answer(declined("authentication_required")),
			wantStatus: status.Failed, wantOrder: status.OrderFailure, wantCode: "C0002",
			wantMessage: "Card requires 3-D Secure, which is not available for this payment",
			wantFinish:  finished(status.Failed, status.OrderFailure, "C0002", "Card requires 3-D Secure, which is not available for this payment"),
			wantAuths:   1,
		},
		{
			name: "decline unknown code is generic", captureMode: "auto", risk: accepted,
			authorise:  answer(declined("pickup_card_stolen")),
			wantStatus: status.Failed, wantOrder: status.OrderFailure, wantCode: "A0001", wantMessage: "Declined",
			wantFinish: finished(status.Failed, status.OrderFailure, "A0001", "Declined"), wantAuths: 1,
		},
		{
			name: "risk reject amount limit never charges", captureMode: "auto", risk: rejectedAmount,
			wantStatus: status.Failed, wantOrder: status.OrderFailure, wantCode: "R0001", wantMessage: "Amount exceeds the account limit",
			wantFinish: riskRejected(rejectedAmount, "R0001", "Amount exceeds the account limit"),
		},
		{
			name: "risk reject blocked card never charges", captureMode: "auto", risk: rejectedCard,
			wantStatus: status.Failed, wantOrder: status.OrderFailure, wantCode: "R0002", wantMessage: "Card is blocked",
			wantFinish: riskRejected(rejectedCard, "R0002", "Card is blocked"),
		},
		{
			name: "transient authorise errors are retried", captureMode: "auto", risk: accepted,
			authorise: func(n int) (activities.ChargeOutcome, error) {
				if n < 2 {
					return activities.ChargeOutcome{}, errors.New("connection reset by peer")
				}
				return approved(amount), nil
			},
			wantStatus: status.Paid, wantOrder: status.OrderSuccess, wantCode: "0000", wantMessage: "Success",
			wantFinish: paid, wantAuths: 3,
		},
		{
			name: "timeout then inquiry finds approved charge", captureMode: "auto", risk: accepted,
			authorise: func(int) (activities.ChargeOutcome, error) { return activities.ChargeOutcome{}, timeout() },
			inquire: func(int) (activities.InquiryResult, error) {
				return activities.InquiryResult{Found: true, Outcome: approved(amount)}, nil
			},
			wantStatus: status.Paid, wantOrder: status.OrderSuccess, wantCode: "0000", wantMessage: "Success",
			wantFinish: paid, wantAuths: 1, wantInquires: 1,
		},
		{
			name: "timeout then inquiry finds declined charge", captureMode: "auto", risk: accepted,
			authorise: func(int) (activities.ChargeOutcome, error) { return activities.ChargeOutcome{}, timeout() },
			inquire: func(int) (activities.InquiryResult, error) {
				return activities.InquiryResult{Found: true, Outcome: declined("insufficient_funds")}, nil
			},
			wantStatus: status.Failed, wantOrder: status.OrderFailure, wantCode: "A0002", wantMessage: "Insufficient funds",
			wantFinish: finished(status.Failed, status.OrderFailure, "A0002", "Insufficient funds"), wantAuths: 1, wantInquires: 1,
		},
		{
			name: "timeout, not found, charged again with same key", captureMode: "auto", risk: accepted,
			authorise: func(n int) (activities.ChargeOutcome, error) {
				if n == 0 {
					return activities.ChargeOutcome{}, timeout()
				}
				return approved(amount), nil
			},
			inquire:    func(int) (activities.InquiryResult, error) { return activities.InquiryResult{Found: false}, nil },
			wantStatus: status.Paid, wantOrder: status.OrderSuccess, wantCode: "0000", wantMessage: "Success",
			wantFinish: paid, wantAuths: 2, wantInquires: 1,
		},
		{
			name: "timeout every round at a connector whose inquiry is final gives up after three rounds", captureMode: "auto", risk: accepted,
			authorise: func(int) (activities.ChargeOutcome, error) { return activities.ChargeOutcome{}, timeout() },
			inquire: func(int) (activities.InquiryResult, error) {
				return activities.InquiryResult{Found: false, NeverCharged: true}, nil
			},
			wantStatus: status.Failed, wantOrder: status.OrderFailure, wantCode: "C0001", wantMessage: "Acquirer error",
			wantFinish: connectorError, wantAuths: 3, wantInquires: 3,
		},
		{
			// Stripe's search may lag a charge: three rounds, then four
			// late looks over an hour, before the order says not charged.
			name: "timeout every round at a connector whose inquiry may lag gives up after an hour of late looks", captureMode: "auto", risk: accepted,
			authorise:  func(int) (activities.ChargeOutcome, error) { return activities.ChargeOutcome{}, timeout() },
			inquire:    func(int) (activities.InquiryResult, error) { return activities.InquiryResult{Found: false}, nil },
			wantStatus: status.Failed, wantOrder: status.OrderFailure, wantCode: "C0001", wantMessage: "Acquirer error",
			wantFinish: connectorError, wantAuths: 7, wantInquires: 7,
		},
		{
			name: "a late look's charge with the same key is answered with the first charge", captureMode: "auto", risk: accepted,
			authorise: func(n int) (activities.ChargeOutcome, error) {
				if n < 3 {
					return activities.ChargeOutcome{}, timeout()
				}
				return approved(amount), nil
			},
			inquire:    func(int) (activities.InquiryResult, error) { return activities.InquiryResult{Found: false}, nil },
			wantStatus: status.Paid, wantOrder: status.OrderSuccess, wantCode: "0000", wantMessage: "Success",
			wantFinish: paid, wantAuths: 4, wantInquires: 3,
		},
		{
			name: "a late look's inquiry finds the charge the search missed", captureMode: "auto", risk: accepted,
			authorise: func(int) (activities.ChargeOutcome, error) { return activities.ChargeOutcome{}, timeout() },
			inquire: func(n int) (activities.InquiryResult, error) {
				if n < 4 {
					return activities.InquiryResult{Found: false}, nil
				}
				return activities.InquiryResult{Found: true, Outcome: approved(amount)}, nil
			},
			wantStatus: status.Paid, wantOrder: status.OrderSuccess, wantCode: "0000", wantMessage: "Success",
			wantFinish: paid, wantAuths: 5, wantInquires: 5,
		},
		{
			name: "acquirer rejected, no charge found: a connector error", captureMode: "auto", risk: accepted,
			authorise: func(int) (activities.ChargeOutcome, error) {
				return activities.ChargeOutcome{}, temporal.NewNonRetryableApplicationError("acquirer refused the request", activities.ErrTypeAcquirerRejected, nil)
			},
			inquire:    func(int) (activities.InquiryResult, error) { return activities.InquiryResult{Found: false}, nil },
			wantStatus: status.Failed, wantOrder: status.OrderFailure, wantCode: "C0001", wantMessage: "Acquirer error",
			wantFinish: connectorError, wantAuths: 1, wantInquires: 1,
		},
		{
			// An earlier attempt, by a worker that died before its answer
			// was recorded, charged the card; this one was refused.
			name: "acquirer rejected, an earlier attempt's charge found: paid", captureMode: "auto", risk: accepted,
			authorise: func(int) (activities.ChargeOutcome, error) {
				return activities.ChargeOutcome{}, temporal.NewNonRetryableApplicationError("acquirer refused the request", activities.ErrTypeAcquirerRejected, nil)
			},
			inquire: func(int) (activities.InquiryResult, error) {
				return activities.InquiryResult{Found: true, Outcome: approved(amount)}, nil
			},
			wantStatus: status.Paid, wantOrder: status.OrderSuccess, wantCode: "0000", wantMessage: "Success",
			wantFinish: paid, wantAuths: 1, wantInquires: 1,
		},
		{
			name: "card unavailable, no charge found: a connector error", captureMode: "auto", risk: accepted,
			authorise: func(int) (activities.ChargeOutcome, error) {
				return activities.ChargeOutcome{}, temporal.NewNonRetryableApplicationError("card token not in the vault", activities.ErrTypeCardUnavailable, nil)
			},
			inquire:    func(int) (activities.InquiryResult, error) { return activities.InquiryResult{Found: false}, nil },
			wantStatus: status.Failed, wantOrder: status.OrderFailure, wantCode: "C0001", wantMessage: "Acquirer error",
			wantFinish: connectorError, wantAuths: 1, wantInquires: 1,
		},
		{
			name: "card unavailable, an earlier attempt's charge found: paid", captureMode: "auto", risk: accepted,
			authorise: func(int) (activities.ChargeOutcome, error) {
				return activities.ChargeOutcome{}, temporal.NewNonRetryableApplicationError("card token not in the vault", activities.ErrTypeCardUnavailable, nil)
			},
			inquire: func(int) (activities.InquiryResult, error) {
				return activities.InquiryResult{Found: true, Outcome: approved(amount)}, nil
			},
			wantStatus: status.Paid, wantOrder: status.OrderSuccess, wantCode: "0000", wantMessage: "Success",
			wantFinish: paid, wantAuths: 1, wantInquires: 1,
		},
		{
			name: "a deleted stored card is I0025 once the acquirer has no charge", captureMode: "auto", risk: accepted,
			authorise: func(int) (activities.ChargeOutcome, error) {
				return activities.ChargeOutcome{}, temporal.NewNonRetryableApplicationError("stored card deleted", activities.ErrTypeCardDeleted, nil)
			},
			inquire:    func(int) (activities.InquiryResult, error) { return activities.InquiryResult{Found: false}, nil },
			wantStatus: status.Failed, wantOrder: status.OrderFailure, wantCode: "I0025", wantMessage: "Card token deleted",
			wantFinish: activities.FinishOrderInput{
				TransactionID: txID, Version: 1, PaymentStatus: status.Failed, OrderStatus: status.OrderFailure,
				ResultCode: "I0025", ResultMessage: "Card token deleted", Risk: accepted, Connector: workflows.DefaultConnector,
			},
			wantAuths: 1, wantInquires: 1,
		},
		{
			name: "a deleted stored card an earlier attempt charged is paid", captureMode: "auto", risk: accepted,
			authorise: func(int) (activities.ChargeOutcome, error) {
				return activities.ChargeOutcome{}, temporal.NewNonRetryableApplicationError("stored card deleted", activities.ErrTypeCardDeleted, nil)
			},
			inquire: func(int) (activities.InquiryResult, error) {
				return activities.InquiryResult{Found: true, Outcome: approved(amount)}, nil
			},
			wantStatus: status.Paid, wantOrder: status.OrderSuccess, wantCode: "0000", wantMessage: "Success",
			wantFinish: paid, wantAuths: 1, wantInquires: 1,
		},
		{
			name: "inquiry transient errors are retried until it answers", captureMode: "manual", risk: accepted,
			authorise: func(int) (activities.ChargeOutcome, error) { return activities.ChargeOutcome{}, timeout() },
			inquire: func(n int) (activities.InquiryResult, error) {
				if n < 3 {
					return activities.InquiryResult{}, errors.New("acquirer unreachable")
				}
				return activities.InquiryResult{Found: true, Outcome: approved(0)}, nil
			},
			wantStatus: status.Authorised, wantOrder: status.OrderSuccess, wantCode: "0000", wantMessage: "Success",
			wantFinish: authorised, wantAuths: 1, wantInquires: 4,
		},
	}
	// Every shape an order can have been started with pays the same: the
	// same calls to the acquirer, the same record, the same risk check and
	// CVV drop (shape 2 makes them inside the record's and the outcome's
	// activities).
	for shape := 0; shape <= workflows.CurrentOrderShape; shape++ {
		for _, tc := range tests {
			t.Run(fmt.Sprintf("shape %d/%s", shape, tc.name), func(t *testing.T) {
				acq := &acquirer{risk: tc.risk, authorise: tc.authorise, inquire: tc.inquire}
				env := newEnv(t, acq)
				in := orderInput(tc.captureMode)
				in.Shape = shape
				res := run(t, env, in)
				checkOrder(t, tc, in, res, acq)
			})
		}
	}
}

// checkOrder asserts what one TestOrder case did.
func checkOrder(t *testing.T, tc orderCase, in workflows.OrderInput, res workflows.PaymentResult, acq *acquirer) {
	t.Helper()

	if res.PaymentStatus != tc.wantStatus || res.OrderStatus != tc.wantOrder ||
		res.ResultCode != tc.wantCode || res.ResultMessage != tc.wantMessage {
		t.Errorf("result = %v/%v %s:%s, want %v/%v %s:%s",
			res.PaymentStatus, res.OrderStatus, res.ResultCode, res.ResultMessage,
			tc.wantStatus, tc.wantOrder, tc.wantCode, tc.wantMessage)
	}
	if res.TransactionID != txID || res.OrderNo != orderNo || res.Amount != amount || res.Currency != currency ||
		res.CardToken != cardToken || res.CardMasked != in.Card.Masked || res.Connector != workflows.DefaultConnector {
		t.Errorf("result identity = %+v", res)
	}
	if res.AuthCode != tc.wantFinish.AuthCode {
		t.Errorf("result AuthCode = %q, want %q", res.AuthCode, tc.wantFinish.AuthCode)
	}
	if !reflect.DeepEqual(res.Risk, tc.risk) {
		t.Errorf("result Risk = %+v, want %+v", res.Risk, tc.risk)
	}

	if len(acq.finish) != 1 {
		t.Fatalf("FinishOrder called %d times, want 1", len(acq.finish))
	}
	// The write names the workflow task that makes it, by the task's start
	// in the workflow's time; the rest is compared whole.
	got := acq.finish[0]
	if got.Task <= 0 {
		t.Errorf("FinishOrder task = %d, want the task's start", got.Task)
	}
	got.Task = 0
	if !reflect.DeepEqual(got, tc.wantFinish) {
		t.Errorf("FinishOrder input\n got %+v\nwant %+v", got, tc.wantFinish)
	}
	if len(acq.auths) != tc.wantAuths {
		t.Errorf("Authorise called %d times, want %d", len(acq.auths), tc.wantAuths)
	}
	if len(acq.inqs) != tc.wantInquires {
		t.Errorf("InquireCharge called %d times, want %d", len(acq.inqs), tc.wantInquires)
	}
	// From shape 5 a charge's first attempt is made by the record's
	// activity, the rest as before.
	wantWithRecord := 0
	if in.Shape >= 5 && tc.wantAuths > 0 {
		wantWithRecord = 1
	}
	if acq.chargedWithRecord != wantWithRecord {
		t.Errorf("charges made by the record's activity = %d, want %d", acq.chargedWithRecord, wantWithRecord)
	}
	// The input names no connector: the order goes to the default.
	wantAuth := activities.AuthoriseInput{
		Connector: workflows.DefaultConnector,
		CardToken: cardToken, IdempotencyKey: wantKey, Reference: txID,
		Amount: amount, Currency: currency, Capture: tc.captureMode == "auto",
	}
	for i, got := range acq.auths {
		if got != wantAuth {
			t.Errorf("Authorise call %d input = %+v, want %+v", i, got, wantAuth)
		}
	}
	for i, got := range acq.inqs {
		if got.IdempotencyKey != wantKey || got.Connector != workflows.DefaultConnector {
			t.Errorf("InquireCharge call %d = %+v, want key %q (the Authorise key) at %s", i, got, wantKey, workflows.DefaultConnector)
		}
	}
	if len(acq.drops) != 1 || acq.drops[0] != (activities.DropCVVInput{CardToken: cardToken}) {
		t.Errorf("DropCVV inputs = %+v, want one for %s", acq.drops, cardToken)
	}
	if len(acq.records) != 1 {
		t.Fatalf("RecordOrder called %d times, want 1", len(acq.records))
	}
	if r := acq.records[0]; r.PaymentStatus != status.Pending || r.OrderStatus != status.OrderPending ||
		r.WorkflowID != "order/M100/A200/ORD-1" || r.CardToken != cardToken || r.RequestFingerprint != fingerprint ||
		r.Amount != amount || r.CaptureMode != tc.captureMode {
		t.Errorf("RecordOrder input = %+v", r)
	}
	wantRisk := activities.RiskInput{MerchantID: merchantID, AccountID: accountID, Amount: amount, Currency: currency,
		CardFingerprint: "card-fp-9", TransactionID: txID, CardBIN: "424242", CardMasked: "424242******4242", ShopperEmail: "shopper@example.com"}
	if len(acq.risks) != 1 || acq.risks[0] != wantRisk {
		t.Errorf("CheckRisk inputs = %+v, want [%+v]", acq.risks, wantRisk)
	}
}

func TestOrderQueryState(t *testing.T) {
	tests := []struct {
		name        string
		captureMode capture.Mode
		authorise   func(int) (activities.ChargeOutcome, error)
		want        status.Payment
		wantCode    string
	}{
		{"paid", "auto", answer(approved(amount)), status.Paid, "0000"},
		// Left uncaptured, the authorisation lapses after its window.
		{"authorised, never captured", "manual", answer(approved(0)), status.Expired, "0000"},
		{"declined", "auto", answer(declined("expired_card")), status.Failed, "A0003"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t, &acquirer{risk: accepted, authorise: tc.authorise})
			res := run(t, env, orderInput(tc.captureMode))
			v, err := env.QueryWorkflow(workflows.QueryOrderState)
			if err != nil {
				t.Fatalf("query: %v", err)
			}
			var st workflows.OrderState
			if err := v.Get(&st); err != nil {
				t.Fatalf("decode query: %v", err)
			}
			if st.TransactionID != txID || st.PaymentStatus != tc.want {
				t.Errorf("state = %s/%v, want %s/%v", st.TransactionID, st.PaymentStatus, txID, tc.want)
			}
			if st.Result == nil {
				t.Fatal("state has no result")
			}
			if st.Result.ResultCode != tc.wantCode || !reflect.DeepEqual(*st.Result, res) {
				t.Errorf("state result = %+v, want the workflow result %+v", *st.Result, res)
			}
		})
	}
}

func TestOrderQueryStateWhileCharging(t *testing.T) {
	// While the acquirer has not answered the order is pending.
	var env *testsuite.TestWorkflowEnvironment
	var during workflows.OrderState
	var queryErr error
	acq := &acquirer{risk: accepted}
	acq.authorise = func(int) (activities.ChargeOutcome, error) {
		return activities.ChargeOutcome{}, timeout()
	}
	acq.inquire = func(n int) (activities.InquiryResult, error) {
		if n == 0 {
			return activities.InquiryResult{}, errors.New("acquirer unreachable")
		}
		return activities.InquiryResult{Found: true, Outcome: approved(amount)}, nil
	}
	env = newEnv(t, acq)
	// The first inquiry fails at once and is retried after 500ms.
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(workflows.QueryOrderState)
		if err != nil {
			queryErr = err
			return
		}
		queryErr = v.Get(&during)
	}, 100*time.Millisecond)
	res := run(t, env, orderInput("auto"))
	if queryErr != nil {
		t.Fatalf("query: %v", queryErr)
	}
	if during.PaymentStatus != status.Pending || during.Result != nil {
		t.Errorf("state while charging = %v result %v, want %v and none", during.PaymentStatus, during.Result, status.Pending)
	}
	if res.PaymentStatus != status.Paid {
		t.Errorf("final status = %v, want %v", res.PaymentStatus, status.Paid)
	}
}

func TestOrderAuthoriseUpdate(t *testing.T) {
	tests := []struct {
		name        string
		fingerprint string
		wantReject  bool
	}{
		{"same content gets the order's answer", fingerprint, false},
		{"different content is rejected", "req-fp-other", true},
		{"empty fingerprint is rejected", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t, &acquirer{risk: accepted, authorise: answer(approved(amount))})
			var (
				wasAccepted, completed bool
				rejectErr, doneErr     error
				got                    any
			)
			env.RegisterDelayedCallback(func() {
				env.UpdateWorkflow(workflows.UpdateAuthorise, "repeat-1", &testsuite.TestUpdateCallback{
					OnAccept:   func() { wasAccepted = true },
					OnReject:   func(err error) { rejectErr = err },
					OnComplete: func(v any, err error) { completed, got, doneErr = true, v, err },
				}, workflows.AuthoriseRequest{RequestFingerprint: tc.fingerprint})
			}, 0)
			res := run(t, env, orderInput("auto"))

			if tc.wantReject {
				var appErr *temporal.ApplicationError
				if !errors.As(rejectErr, &appErr) || appErr.Type() != workflows.ErrTypeOrderMismatch {
					t.Fatalf("reject error = %v, want an ApplicationError of type %s", rejectErr, workflows.ErrTypeOrderMismatch)
				}
				if wasAccepted || completed {
					t.Error("update accepted, want rejected")
				}
				// The order itself is not disturbed.
				if res.PaymentStatus != status.Paid || res.ResultCode != "0000" {
					t.Errorf("workflow result = %v %s, want %v 0000", res.PaymentStatus, res.ResultCode, status.Paid)
				}
				return
			}
			if rejectErr != nil {
				t.Fatalf("update rejected: %v", rejectErr)
			}
			if !wasAccepted || !completed || doneErr != nil {
				t.Fatalf("update accepted=%v completed=%v err=%v", wasAccepted, completed, doneErr)
			}
			upd, ok := got.(workflows.PaymentResult)
			if !ok {
				t.Fatalf("update result is %T, want workflows.PaymentResult", got)
			}
			if !reflect.DeepEqual(upd, res) {
				t.Errorf("update result\n got %+v\nwant %+v", upd, res)
			}
			if upd.PaymentStatus != status.Paid || upd.OrderStatus != status.OrderSuccess || upd.ResultCode != "0000" {
				t.Errorf("update result = %v/%v %s, want 3000/1 0000", upd.PaymentStatus, upd.OrderStatus, upd.ResultCode)
			}
		})
	}
}

// findPAN returns the first test card number found in any string of v
// (after JSON encoding, so every exported field is seen), or "".
func findPAN(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "json: " + err.Error()
	}
	digits := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return ' '
	}, string(b))
	for _, pan := range testPANs {
		if strings.Contains(string(b), pan) || strings.Contains(digits, pan) {
			return pan
		}
	}
	return ""
}

func TestFindPANDetectsCardNumbers(t *testing.T) {
	// The scanner must see a PAN wherever it hides, or the test below proves nothing.
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"token only", activities.AuthoriseInput{CardToken: cardToken, Reference: txID}, ""},
		{"masked", workflows.CardRef{Masked: "424242******4242"}, ""},
		{"in a token", activities.AuthoriseInput{CardToken: "tok_4000000000000341"}, "4000000000000341"},
		{"in details", activities.RecordOrderInput{Details: order.Details{Note: "card 5555555555554444"}}, "5555555555554444"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := findPAN(tc.v); got != tc.want {
				t.Errorf("findPAN = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestOrderActivityInputsHoldNoCardNumber(t *testing.T) {
	tests := []struct {
		name      string
		authorise func(int) (activities.ChargeOutcome, error)
		inquire   func(int) (activities.InquiryResult, error)
	}{
		{"approved", answer(approved(amount)), nil},
		{"timeout and inquiry",
			func(int) (activities.ChargeOutcome, error) { return activities.ChargeOutcome{}, timeout() },
			func(int) (activities.InquiryResult, error) {
				return activities.InquiryResult{Found: true, Outcome: approved(amount)}, nil
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			acq := &acquirer{risk: accepted, authorise: tc.authorise, inquire: tc.inquire}
			env := newEnv(t, acq)
			res := run(t, env, orderInput("auto"))
			inputs := []any{acq.records, acq.risks, acq.auths, acq.inqs, acq.drops, acq.finish, res}
			for i, v := range inputs {
				if pan := findPAN(v); pan != "" {
					t.Errorf("activity input %d (%T) holds card number %s", i, v, pan)
				}
			}
			if len(acq.records) != 1 || len(acq.auths) == 0 {
				t.Fatalf("RecordOrder %d calls, Authorise %d calls", len(acq.records), len(acq.auths))
			}
			if acq.records[0].CardMasked != "424242******4242" || acq.auths[0].CardToken != cardToken {
				t.Errorf("card reaches activities as %q / %q, want masked and token", acq.records[0].CardMasked, acq.auths[0].CardToken)
			}
		})
	}
}

func TestOrderUpsertsPaymentStatus(t *testing.T) {
	tests := []struct {
		name        string
		captureMode capture.Mode
		risk        risk.Result
		authorise   func(int) (activities.ChargeOutcome, error)
		want        []int64
	}{
		{"paid", "auto", accepted, answer(approved(amount)), []int64{3000}},
		{"authorised, then expired", "manual", accepted, answer(approved(0)), []int64{2000, 7000}},
		{"risk rejected", "auto", rejectedCard, nil, []int64{6000}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t, &acquirer{risk: tc.risk, authorise: tc.authorise})
			var got []int64
			env.OnUpsertTypedSearchAttributes(mock.Anything).Return(nil).Run(func(args mock.Arguments) {
				sa := args.Get(0).(temporal.SearchAttributes)
				v, _ := sa.GetInt64(workflows.SearchPaymentStatus)
				got = append(got, v)
			})
			run(t, env, orderInput(tc.captureMode))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("PaymentStatus upserts = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestOrderNoTakenByOlderOrder covers an order_no whose first order's
// workflow Temporal no longer keeps: the new workflow must touch nothing and
// point the API at the record.
func TestOrderNoTakenByOlderOrder(t *testing.T) {
	acq := &acquirer{existing: "1379868670095785984"}
	env := newEnv(t, acq)
	in := orderInput("auto")
	res := run(t, env, in)
	want := workflows.PaymentResult{MerchantID: in.MerchantID, AccountID: in.AccountID, OrderNo: in.OrderNo,
		ExistingTransactionID: "1379868670095785984"}
	if !reflect.DeepEqual(res, want) {
		t.Errorf("result = %+v, want %+v", res, want)
	}
	if len(acq.risks)+len(acq.auths)+len(acq.drops)+len(acq.finish) != 0 {
		t.Errorf("activities ran after the order_no was found taken: risk %d authorise %d drop %d finish %d",
			len(acq.risks), len(acq.auths), len(acq.drops), len(acq.finish))
	}
}

var anyArg = mock.Anything

func workflowOptions(name string) workflow.RegisterOptions {
	return workflow.RegisterOptions{Name: name}
}

// TestOrderKeysTellOrderNumbersApart: under the key scheme new orders
// start with, order numbers that differ only in '/' and ':' make different
// acquirer keys, and none is a key of an order begun before (both made
// "order:M100:A200:INV:7:authorise", and the second order was recorded
// paid with the first order's charge). An order begun before keeps its
// keys.
func TestOrderKeysTellOrderNumbersApart(t *testing.T) {
	tests := []struct {
		orderNo string
		keys    int
		wantKey string
	}{
		{"ORD-1", workflows.CurrentOrderKeys, "o1:M100:A200:ORD-1:authorise"},
		{"INV/7", workflows.CurrentOrderKeys, "o1:M100:A200:INV:7:authorise"},
		{"INV:7", workflows.CurrentOrderKeys, "o1:M100:A200:INV%3A7:authorise"},
		{"INV%3A7", workflows.CurrentOrderKeys, "o1:M100:A200:INV%253A7:authorise"},
		{"INV:7", 0, "order:M100:A200:INV:7:authorise"},
		{"INV/7", 0, "order:M100:A200:INV:7:authorise"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s, scheme %d", tc.orderNo, tc.keys), func(t *testing.T) {
			acq := &acquirer{risk: accepted, authorise: answer(approved(amount))}
			env := newEnv(t, acq)
			env.SetStartWorkflowOptions(client.StartWorkflowOptions{
				ID: workflows.OrderWorkflowID(merchantID, accountID, tc.orderNo), TaskQueue: workflows.TaskQueue})
			in := orderInput("auto")
			in.OrderNo, in.Details.OrderNo, in.Keys = tc.orderNo, tc.orderNo, tc.keys
			if res := run(t, env, in); res.PaymentStatus != status.Paid {
				t.Fatalf("payment %v, want paid", res.PaymentStatus)
			}
			if len(acq.auths) != 1 || acq.auths[0].IdempotencyKey != tc.wantKey {
				t.Errorf("charged %+v, want one charge under %q", acq.auths, tc.wantKey)
			}
		})
	}
}
