package activities

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/paygate/paygate/internal/adapters/ledger"
	"github.com/paygate/paygate/internal/adapters/payoutschedule"
	"github.com/paygate/paygate/internal/adapters/rail"
	"github.com/paygate/paygate/internal/domain/notify"
	"github.com/paygate/paygate/internal/domain/payout"
	"github.com/paygate/paygate/internal/domain/testmode"
	"github.com/paygate/paygate/models"
)

// PayoutLedger is the ledger as payouts use it: a payout reserves what it
// sends and its fee, then settles the reservation when the rail paid or
// releases it when the payout failed (internal/adapters/ledger.Ledger).
type PayoutLedger interface {
	// Reserve fails with ledger.ErrInsufficientFunds when the deposit is short.
	Reserve(ctx context.Context, r ledger.Reservation) error
	Settle(ctx context.Context, reference string) error
	Release(ctx context.Context, reference string) error
}

// PayoutRail is the payout rail's client (internal/adapters/rail.Client).
type PayoutRail interface {
	Submit(ctx context.Context, req rail.SubmitRequest) (rail.Transfer, error)
	Get(ctx context.Context, id string) (rail.Transfer, error)
	FindByKey(ctx context.Context, idempotencyKey string) (rail.Transfer, error)
}

// PayoutPricing is the operator's rate table and fee schedule.
type PayoutPricing struct {
	Rates payout.Rates
	Fees  payout.FeeSchedule
}

// PayoutActivities are the payout workflow's hands: the payouts table, the
// ledger, the rail and the pricing tables. They are a struct of their own so
// that payouts add no field to Activities, which every order activity shares.
type PayoutActivities struct {
	Records models.Records // the payouts table
	Ledger  PayoutLedger
	// Rail pays live accounts' payouts; TestRail, a simulated rail, test
	// accounts' (nil: none, and a test account's payout is refused).
	Rail     PayoutRail
	TestRail PayoutRail
	Pricing  PayoutPricing
	// Schedules plans the accounts' scheduled payouts.
	Schedules PayoutPlanner
	Logger    *slog.Logger
}

// railFor is the rail of the payout id of an account in mode: a test
// account reaches the simulated rail only. A payout whose workflow started
// before payouts carried their mode has none; its record says (migration
// 0013 set it from the account).
func (p *PayoutActivities) railFor(ctx context.Context, mode, id string) (PayoutRail, error) {
	if mode == "" && p.Records.DB != nil {
		recorded, err := p.Records.PayoutMode(ctx, id)
		if err != nil {
			return nil, err
		}
		if recorded != "" {
			mode = recorded
		}
	}
	if mode != testmode.Test {
		return p.Rail, nil
	}
	if p.TestRail == nil {
		return noTestRail{}, nil
	}
	return p.TestRail, nil
}

// noTestRail refuses every call: a test account's payout never falls back
// to the live rail. The refusal is the rail's kind (RAIL_REJECTED).
type noTestRail struct{}

func errNoTestRail() error {
	return temporal.NewNonRetryableApplicationError(
		"a test account's payout goes to the simulated rail only, and this worker has none (TEST_RAIL_URL)",
		ErrTypePayoutRailRejected, nil)
}

func (noTestRail) Submit(context.Context, rail.SubmitRequest) (rail.Transfer, error) {
	return rail.Transfer{}, errNoTestRail()
}
func (noTestRail) Get(context.Context, string) (rail.Transfer, error) {
	return rail.Transfer{}, errNoTestRail()
}
func (noTestRail) FindByKey(context.Context, string) (rail.Transfer, error) {
	return rail.Transfer{}, errNoTestRail()
}

// Error types of the payout activities' application errors.
const (
	// ErrTypePayoutRailRejected: the rail refused the transfer (4xx or an
	// idempotency conflict); the same request can never succeed.
	ErrTypePayoutRailRejected = "PayoutRailRejected"
	// ErrTypePayoutLedgerRefused: the ledger refused the posting for its
	// values; retrying cannot help.
	ErrTypePayoutLedgerRefused = "PayoutLedgerRefused"
)

// PayoutRecordStartInput is a payout as its run starts.
type PayoutRecordStartInput struct {
	ID               string
	MerchantID       string
	AccountID        string
	RequestID        string
	TransactionID    string
	ShortReferenceID string
	Instruction      payout.Instruction
	NotifyURL        string
	Mode             string
	Run              int
	At               time.Time
}

// PayoutRecordStart inserts the payout at NEW, or, for a later run of the
// same payout (a finance re-run), sets it back to NEW under the new run
// number. A retry finds the row and changes nothing more.
func (p *PayoutActivities) PayoutRecordStart(ctx context.Context, in PayoutRecordStartInput) error {
	_, err := p.recordStart(ctx, in)
	return err
}

// recordStart is PayoutRecordStart, returning the short reference recorded:
// the run's own, or another drawn for the same day when another payout
// holds it (models.InsertPayout), or the row's when it was recorded before.
func (p *PayoutActivities) recordStart(ctx context.Context, in PayoutRecordStartInput) (string, error) {
	req, err := json.Marshal(in.Instruction)
	if err != nil {
		return "", temporal.NewNonRetryableApplicationError("encode instruction", ErrTypeRecordRejected, err)
	}
	row := &models.Payout{
		ID: in.ID, MerchantID: in.MerchantID, AccountID: in.AccountID, RequestID: in.RequestID,
		TransactionID: in.TransactionID, ShortReferenceID: in.ShortReferenceID,
		Status:          string(payout.StatusNew),
		PaymentCurrency: in.Instruction.PaymentAmount.Currency, PaymentAmount: in.Instruction.PaymentAmount.Minor,
		SourceCurrency: in.Instruction.SourceCurrency, Request: req, NotifyURL: in.NotifyURL, Run: in.Run,
		Mode:      cmp.Or(in.Mode, testmode.Live),
		CreatedAt: in.At, UpdatedAt: in.At,
	}
	day, derr := time.Parse("20060102", in.ShortReferenceID[:min(8, len(in.ShortReferenceID))])
	if derr != nil {
		day = in.At
	}
	redraw := func() (string, error) { return payout.NewShortReference(day, rand.Reader) }
	if err := p.Records.InsertPayout(ctx, row, redraw); err != nil {
		return "", recordError(err)
	}
	if in.Run > 1 {
		err := p.Records.UpdatePayout(ctx, in.ID, models.PayoutUpdate{Status: string(payout.StatusNew), Run: in.Run}, in.At)
		if err != nil {
			return "", recordError(err)
		}
	}
	return row.ShortReferenceID, nil
}

// recordError makes a write that Postgres refused for its values
// non-retryable, as the order activities do.
func recordError(err error) error {
	if models.IsDataError(err) {
		return temporal.NewNonRetryableApplicationError("payout record rejected", ErrTypeRecordRejected, err)
	}
	return err
}

// PayoutPriceInput is a payout to price at a time (workflow.Now).
type PayoutPriceInput struct {
	Instruction payout.Instruction
	At          time.Time
}

// PayoutPriceResult is the priced payout, or why it cannot be priced.
type PayoutPriceResult struct {
	Charges       payout.Charges
	FailureType   payout.FailureType
	FailureReason string
}

// PayoutPrice quotes and prices a payout over the operator's tables. A
// payout that cannot be priced is a result (FailureType set), not an error:
// it is the payout's outcome.
func (p *PayoutActivities) PayoutPrice(_ context.Context, in PayoutPriceInput) (PayoutPriceResult, error) {
	ch, err := payout.Price(in.Instruction, p.Pricing.Rates, p.Pricing.Fees, in.At)
	if err != nil {
		ft := payout.FailureTypeOf(err)
		return PayoutPriceResult{FailureType: ft, FailureReason: ft.Reason() + ": " + err.Error()}, nil
	}
	return PayoutPriceResult{Charges: ch}, nil
}

// PayoutRecordInput is a status change of a payout.
type PayoutRecordInput struct {
	ID            string
	Status        payout.Status
	FailureType   payout.FailureType
	FailureReason string
	// Charges, when not nil, records the quote and the amounts.
	Charges        *payout.Charges
	RailTransferID string
	At             time.Time
}

// PayoutRecord writes a status change and what the step learnt.
func (p *PayoutActivities) PayoutRecord(ctx context.Context, in PayoutRecordInput) error {
	u := models.PayoutUpdate{Status: string(in.Status), FailureType: string(in.FailureType),
		FailureReason: in.FailureReason, RailTransferID: in.RailTransferID}
	if ch := in.Charges; ch != nil {
		q, err := json.Marshal(ch.Quote)
		if err != nil {
			return temporal.NewNonRetryableApplicationError("encode quote", ErrTypeRecordRejected, err)
		}
		u.Quote = q
		u.SourceAmount = ch.Quote.SourceAmount.Minor
		u.FeeAmount = ch.Fee.Minor
		u.PayerPaysAmount = ch.PayerPays.Minor
		u.BeneficiaryReceivesAmount = ch.BeneficiaryReceives.Minor
		u.TransferAmount = ch.Transfer.Minor
	}
	return recordError(p.Records.UpdatePayout(ctx, in.ID, u, in.At))
}

// PayoutReserveInput is the reservation of a priced payout: Amount (what is
// sent) and Fee in minor units of Currency, the deposit's currency.
type PayoutReserveInput struct {
	Reference  string
	MerchantID string
	AccountID  string
	Currency   string
	Amount     int64
	Fee        int64
}

// PayoutReserveResult tells whether the funds were reserved.
type PayoutReserveResult struct {
	Reserved bool
	// Insufficient: the deposit is short; nothing was reserved.
	Insufficient bool
}

// PayoutReserve sets the payout's money aside. A short deposit is a result;
// a posting the ledger refuses for its values is non-retryable.
func (p *PayoutActivities) PayoutReserve(ctx context.Context, in PayoutReserveInput) (PayoutReserveResult, error) {
	err := p.Ledger.Reserve(ctx, ledger.Reservation{Reference: in.Reference, MerchantID: in.MerchantID,
		AccountID: in.AccountID, Currency: in.Currency, Amount: in.Amount, Fee: in.Fee})
	switch {
	case err == nil:
		return PayoutReserveResult{Reserved: true}, nil
	case errors.Is(err, ledger.ErrInsufficientFunds):
		return PayoutReserveResult{Insufficient: true}, nil
	case errors.Is(err, ledger.ErrInvalid), errors.Is(err, ledger.ErrReferenceConflict), errors.Is(err, ledger.ErrReservationClosed):
		return PayoutReserveResult{}, temporal.NewNonRetryableApplicationError("ledger refused the reservation", ErrTypePayoutLedgerRefused, err)
	}
	return PayoutReserveResult{}, err
}

// PayoutReservationInput names a reservation to settle or release.
type PayoutReservationInput struct {
	Reference string
}

// PayoutSettle takes the reserved money: the rail paid.
func (p *PayoutActivities) PayoutSettle(ctx context.Context, in PayoutReservationInput) error {
	return ledgerClose(p.Ledger.Settle(ctx, in.Reference))
}

// PayoutRelease gives the reserved money back: the payout failed.
func (p *PayoutActivities) PayoutRelease(ctx context.Context, in PayoutReservationInput) error {
	return ledgerClose(p.Ledger.Release(ctx, in.Reference))
}

func ledgerClose(err error) error {
	if err != nil && (errors.Is(err, ledger.ErrReservationClosed) || errors.Is(err, ledger.ErrReservationNotFound) ||
		errors.Is(err, ledger.ErrInvalid)) {
		return temporal.NewNonRetryableApplicationError("ledger refused", ErrTypePayoutLedgerRefused, err)
	}
	return err
}

// Transfer statuses at the rail, as PayoutTransfer carries them.
const (
	TransferSubmitted = rail.StatusSubmitted
	TransferCompleted = rail.StatusCompleted
	TransferFailed    = rail.StatusFailed
)

// PayoutBeneficiary is who a transfer pays: the account name, the IBAN or
// else the account number, the BIC and the bank's country.
type PayoutBeneficiary struct {
	Name          string
	IBAN          string
	AccountNumber string
	BIC           string
	Country       string
}

// PayoutTransfer is the rail's transfer in the workflow's terms.
type PayoutTransfer struct {
	Found         bool
	ID            string
	Status        string // rail.StatusSubmitted, rail.StatusCompleted, rail.StatusFailed
	FailureType   payout.FailureType
	FailureReason string
	// Attempt is the number of the transfer's latest attempt at the rail.
	Attempt int
}

// transferOf is the rail's transfer as the workflow reads it. A status the
// rail did not document is an error, retried as an outage is: the workflow
// settles a transfer that is neither submitted nor failed, and money must
// not be settled on a word we cannot read (a "returned" or "cancelled" some
// rail version adds).
func transferOf(t rail.Transfer) (PayoutTransfer, error) {
	switch t.Status {
	case rail.StatusSubmitted, rail.StatusCompleted, rail.StatusFailed:
	default:
		return PayoutTransfer{}, fmt.Errorf("rail: transfer %s has a status we do not know: %q", t.ID, t.Status)
	}
	out := PayoutTransfer{Found: true, ID: t.ID, Status: t.Status, Attempt: t.Attempt}
	if t.Status == rail.StatusFailed {
		out.FailureType = railFailureType(t.FailureType)
		out.FailureReason = t.FailureReason
		if out.FailureReason == "" {
			out.FailureReason = out.FailureType.Reason()
		}
	}
	return out, nil
}

// railFailureType maps the rail's failure codes to the payout's.
func railFailureType(code string) payout.FailureType {
	switch code {
	case "beneficiary_account_closed", "beneficiary_account_invalid":
		return payout.FailureBeneficiaryAccount
	case "beneficiary_bank_unavailable":
		return payout.FailureRailUnavailable
	case "":
		return payout.FailureUnknown
	}
	return payout.FailureRailRejected
}

// PayoutFindInput names a transfer by its idempotency key.
type PayoutFindInput struct {
	IdempotencyKey string
	Mode           string // the payout's account's mode (railFor)
}

// PayoutFindTransfer returns the transfer under the key; Found is false when
// the rail never accepted one.
func (p *PayoutActivities) PayoutFindTransfer(ctx context.Context, in PayoutFindInput) (PayoutTransfer, error) {
	r, err := p.railFor(ctx, in.Mode, in.IdempotencyKey)
	if err != nil {
		return PayoutTransfer{}, err
	}
	t, err := r.FindByKey(ctx, in.IdempotencyKey)
	if errors.Is(err, rail.ErrNotFound) {
		return PayoutTransfer{}, nil
	}
	if err != nil {
		return PayoutTransfer{}, railError(err)
	}
	return transferOf(t)
}

// PayoutSubmitInput is a transfer to submit. PriorAttempt is the latest
// attempt of the transfer under the key before this run submitted (0 when
// there was none): an attempt above it is this run's own.
type PayoutSubmitInput struct {
	IdempotencyKey string
	Mode           string // the payout's account's mode (railFor)
	Amount         int64
	Currency       string
	Beneficiary    PayoutBeneficiary
	Reference      string
	PriorAttempt   int
}

// PayoutSubmit hands the transfer to the rail under the workflow id as
// idempotency key. It looks the key up first: after a timeout or a worker
// crash the outcome of the last submission is unknown, and re-submitting a
// transfer that failed meanwhile would start a new attempt (the rail's
// rule), so only a transfer this run has not yet submitted is submitted.
func (p *PayoutActivities) PayoutSubmit(ctx context.Context, in PayoutSubmitInput) (PayoutTransfer, error) {
	r, err := p.railFor(ctx, in.Mode, in.IdempotencyKey)
	if err != nil {
		return PayoutTransfer{}, err
	}
	t, err := r.FindByKey(ctx, in.IdempotencyKey)
	switch {
	case err == nil && (t.Status != rail.StatusFailed || t.Attempt > in.PriorAttempt):
		return transferOf(t)
	case err != nil && !errors.Is(err, rail.ErrNotFound):
		return PayoutTransfer{}, railError(err)
	}
	t, err = r.Submit(ctx, rail.SubmitRequest{IdempotencyKey: in.IdempotencyKey, Amount: in.Amount,
		Currency: in.Currency, Beneficiary: rail.Beneficiary(in.Beneficiary), Reference: in.Reference})
	if err != nil {
		return PayoutTransfer{}, railError(err)
	}
	return transferOf(t)
}

// PayoutGetInput names a transfer by the rail's id.
type PayoutGetInput struct {
	TransferID string
	PayoutID   string // the payout (its workflow id), whose record has its mode
	Mode       string // the payout's account's mode (railFor)
}

// PayoutGetTransfer returns the transfer's current state.
func (p *PayoutActivities) PayoutGetTransfer(ctx context.Context, in PayoutGetInput) (PayoutTransfer, error) {
	r, err := p.railFor(ctx, in.Mode, in.PayoutID)
	if err != nil {
		return PayoutTransfer{}, err
	}
	t, err := r.Get(ctx, in.TransferID)
	if err != nil {
		return PayoutTransfer{}, railError(err)
	}
	return transferOf(t)
}

// railError makes an error non-retryable only when the rail answered and
// refused. Everything else stays plain, for the retry policy: the rail
// being unavailable or slow, and also a call cut short on our side (a
// worker shutting down cancels the activity's context), which says nothing
// about the transfer.
func railError(err error) error {
	var answered *rail.Error
	if rail.Retryable(err) || !errors.As(err, &answered) {
		return err
	}
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf("rail refused: %v", err), ErrTypePayoutRailRejected, err)
}

// NotifyTypePayout is the notify_type of payout notifications; they are
// signed with the payout-result recipe rather than the payment result's.
const NotifyTypePayout = notify.TypePayout

// PayoutPlanner plans the day's scheduled payouts
// (internal/adapters/payoutschedule.Planner).
type PayoutPlanner interface {
	Due(ctx context.Context, day time.Time) (payoutschedule.Plan, error)
}

// ScheduledPayoutPlan is a day's scheduled payouts, as the workflow sees
// them.
type ScheduledPayoutPlan = payoutschedule.Plan

// PlanScheduledPayouts plans the payouts the accounts' schedules make on
// day (YYYY-MM-DD).
func (p *PayoutActivities) PlanScheduledPayouts(ctx context.Context, day string) (ScheduledPayoutPlan, error) {
	if p.Schedules == nil {
		return ScheduledPayoutPlan{}, nil
	}
	d, err := time.Parse(time.DateOnly, day)
	if err != nil {
		return ScheduledPayoutPlan{}, temporal.NewNonRetryableApplicationError("day must be YYYY-MM-DD", "InvalidDay", err)
	}
	return p.Schedules.Due(ctx, d)
}
