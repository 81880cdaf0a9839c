package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/paygate/paygate/internal/adapters/vault"
	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/models"
)

// AuthoriseInput asks the acquirer to authorise (and, for a sale, capture) a
// tokenised card. The idempotency key comes from the workflow, so retries
// can never charge twice.
type AuthoriseInput struct {
	// Connector names the order's connector, chosen when the order was
	// made; empty means the default (orders made before accounts chose).
	Connector      string
	CardToken      string
	IdempotencyKey string
	Reference      string
	Amount         int64
	Currency       string
	Capture        bool
	ThreeDS        *ThreeDSData // the 3-D Secure authentication, when there was one
	// StoredCredential: the card is one the merchant keeps, charged without
	// its security code.
	StoredCredential bool
	// TokenID is the stored card's token_id, checked before the charge: a
	// card the merchant deleted is never charged (a subscription's next
	// cycle, a payment racing the delete).
	TokenID string `json:",omitempty"`
	// Failover: the order may go on to another connector, so a connector
	// that is down is said at once (ErrTypeAcquirerDown) rather than tried
	// again here.
	Failover bool `json:",omitempty"`
	// Installments is the number of monthly installments, 0 for none.
	Installments int `json:",omitempty"`
}

// ChargeOutcome is the acquirer's answer to a charge.
type ChargeOutcome struct {
	// Connector is the name of the connector that answered.
	Connector string
	ChargeID  string
	Approved  bool
	// DeclineCode is the connector's reason for a decline, in the domain's
	// words (the field keeps its name so recorded histories read alike).
	DeclineCode    connector.DeclineReason
	Message        string
	AuthCode       string
	CapturedAmount int64
	// Voided is set when the acquirer has released the authorisation.
	Voided bool `json:",omitempty"`
}

func outcomeOf(name string, c connector.Charge) ChargeOutcome {
	return ChargeOutcome{
		Connector:      name,
		ChargeID:       c.ID,
		Approved:       c.Approved(),
		DeclineCode:    c.DeclineReason,
		Message:        c.Message,
		AuthCode:       c.AuthCode,
		CapturedAmount: c.CapturedAmount,
		Voided:         c.Voided,
	}
}

// Authorise opens the card from the vault and charges it through the
// order's connector. A timeout is returned as a non-retryable
// AcquirerTimeout: the outcome is unknown and the workflow must ask the
// acquirer before doing anything else.
func (a *Activities) Authorise(ctx context.Context, in AuthoriseInput) (ChargeOutcome, error) {
	return a.authorise(ctx, in, nil)
}

// openedCard is a card read from the vault ahead of its charge.
type openedCard struct {
	card vault.Card
	err  error
}

// authorise is Authorise, with the card read from opened when it is set
// (read beside the order's record, RecordAndCharge) rather than here.
func (a *Activities) authorise(ctx context.Context, in AuthoriseInput, opened <-chan openedCard) (ChargeOutcome, error) {
	conn, err := a.connector(in.Connector)
	if err != nil {
		return ChargeOutcome{}, err
	}
	// Only a call's first attempt checks: a retry may follow an attempt
	// the acquirer took without answering, which only the inquiry after
	// the retries can tell, and a refusal here would skip it.
	if in.TokenID != "" && (!activity.IsActivity(ctx) || activity.GetInfo(ctx).Attempt <= 1) {
		deleted, err := a.Records.StoredCardDeleted(ctx, in.TokenID)
		if err != nil {
			return ChargeOutcome{}, err
		}
		if deleted {
			return ChargeOutcome{}, temporal.NewNonRetryableApplicationError("stored card deleted", ErrTypeCardDeleted, nil)
		}
	}
	if in.Failover && a.Health != nil && !a.Health.Allow(conn.Name()) {
		// A charge sent before (by a worker that died after sending it)
		// is never skipped: only its connector can say what became of it.
		sent, err := a.Sends.ChargeSent(ctx, in.IdempotencyKey)
		if err != nil {
			return ChargeOutcome{}, err
		}
		if !sent {
			return ChargeOutcome{}, temporal.NewNonRetryableApplicationError("connector skipped: its circuit breaker is open", ErrTypeAcquirerSkipped, nil)
		}
	}
	var c vault.Card
	if opened != nil {
		select {
		case o := <-opened:
			c, err = o.card, o.err
		case <-ctx.Done():
			return ChargeOutcome{}, fmt.Errorf("authorise %s: open card: %w", in.Reference, ctx.Err())
		}
	} else {
		c, err = a.Vault.Detokenize(ctx, in.CardToken)
	}
	if errors.Is(err, vault.ErrUnknownToken) {
		return ChargeOutcome{}, temporal.NewNonRetryableApplicationError("card token not in the vault", ErrTypeCardUnavailable, err)
	}
	if err != nil {
		return ChargeOutcome{}, err
	}
	// A routed charge is noted before it is sent: a connector down at a
	// later attempt (after a crash, say) says nothing of what an earlier
	// one charged, and the payment must not move on before it is asked.
	var sentBefore bool
	if in.Failover {
		if sentBefore, err = a.Sends.NoteChargeSend(ctx, in.IdempotencyKey, conn.Name(), time.Now()); err != nil {
			return ChargeOutcome{}, err
		}
	}
	charge, err := conn.Charge(ctx, connector.ChargeRequest{
		IdempotencyKey:   in.IdempotencyKey,
		Reference:        in.Reference,
		Card:             connector.Card{Number: c.Number, ExpiryMonth: c.ExpiryMonth, ExpiryYear: c.ExpiryYear, CVV: c.CVV},
		Amount:           in.Amount,
		Currency:         in.Currency,
		Capture:          in.Capture,
		ThreeDS:          threeDSOf(in.ThreeDS),
		StoredCredential: in.StoredCredential,
		Installments:     in.Installments,
	})
	if a.Health != nil {
		// A decline is an answer: only a connector down or silent counts
		// against it.
		a.Health.Record(conn.Name(), errors.Is(err, connector.ErrUnavailable) || errors.Is(err, connector.ErrTimeout))
	}
	switch {
	case err == nil:
		return outcomeOf(conn.Name(), charge), nil
	case errors.Is(err, connector.ErrTimeout):
		return ChargeOutcome{}, temporal.NewNonRetryableApplicationError("acquirer did not answer in time", ErrTypeAcquirerTimeout, err)
	case errors.Is(err, connector.ErrConflict):
		// The key reached the acquirer before with other content (a charge
		// re-sent by the next worker once the first had dropped the
		// security code): that earlier request may have charged, so the
		// outcome is unknown and the order asks, as after a timeout. Read as
		// a refusal, a route moved on and charged the card elsewhere.
		return ChargeOutcome{}, temporal.NewNonRetryableApplicationError("acquirer saw this key before: its answer is unknown", ErrTypeAcquirerTimeout, err)
	case errors.Is(err, connector.ErrRejected), errors.Is(err, connector.ErrUnsupported):
		return ChargeOutcome{}, temporal.NewNonRetryableApplicationError("acquirer refused the request", ErrTypeAcquirerRejected, err)
	case in.Failover && sentBefore && errors.Is(err, connector.ErrUnavailable):
		return ChargeOutcome{}, temporal.NewNonRetryableApplicationError("acquirer unavailable after an earlier send: its answer is unknown", ErrTypeAcquirerTimeout, err)
	case in.Failover && errors.Is(err, connector.ErrUnavailable):
		// Down did nothing, and no earlier send is on its way: the note
		// goes, so that the route's next visit to this connector (with
		// the same key) is not taken for one whose answer is unknown. A
		// note left by a failed delete only makes that visit ask first.
		if ferr := a.Sends.ForgetChargeSend(ctx, in.IdempotencyKey); ferr != nil && a.Logger != nil {
			a.Logger.Warn("forget charge note", "key", in.IdempotencyKey, "error", ferr)
		}
		return ChargeOutcome{}, temporal.NewNonRetryableApplicationError("acquirer unavailable", ErrTypeAcquirerDown, err)
	}
	return ChargeOutcome{}, fmt.Errorf("authorise %s: %w", in.Reference, err)
}

func threeDSOf(d *ThreeDSData) *connector.ThreeDSData {
	if d == nil {
		return nil
	}
	return &connector.ThreeDSData{AuthenticationID: d.AuthenticationID, ECI: d.ECI, CAVV: d.CAVV,
		External: d.External, XID: d.XID, DSTransID: d.DSTransID}
}

// InquireInput asks the acquirer what became of a charge attempt.
type InquireInput struct {
	// Connector names the order's connector; empty means the default.
	Connector      string
	IdempotencyKey string
	// ChargeID, when the acquirer's answer gave one, lets a connector that
	// reads a charge by its id (ChargeReader) answer as the charge stands
	// now rather than from an index that may lag.
	ChargeID string `json:",omitempty"`
	// SentBefore, when set, is a moment before which another attempt (a
	// worker that died) may have sent a charge with the key that is still
	// on its way. A connector that refuses requests past their deadline
	// (requestDeadline) is asked only once such a charge's has passed.
	SentBefore time.Time `json:",omitempty"`
	// AttemptsEnded: every attempt of the charge was sent before this
	// inquiry was scheduled (they ended in a timeout), though one may
	// still be on its way to the acquirer. Such a connector is asked only
	// once the deadline of a charge sent at the scheduling has passed, so
	// that its "not found" is final and a routed payment may move on
	// without charging twice.
	AttemptsEnded bool `json:",omitempty"`
}

// InquiryResult tells whether the acquirer knows the charge and its outcome.
type InquiryResult struct {
	Found   bool
	Outcome ChargeOutcome
	// NeverCharged: not found, at a connector whose inquiry is final (its
	// record of charges by key is never behind), so the charge was surely
	// never made and a routed payment may move on.
	NeverCharged bool `json:",omitempty"`
	// Final: the connector's inquiry is never behind its charges, so a
	// charge found is as it stands now (not an index that may lag).
	Final bool `json:",omitempty"`
}

// finalInquiry is implemented by connectors whose inquiry is final: a
// charge they do not find was never made (the simulators). One whose
// inquiry may lag behind a charge (Stripe's search) does not implement it.
type finalInquiry interface{ FinalInquiry() bool }

// ChargeReader is implemented by connectors whose inquiry by key may lag
// (Stripe's search) but which read a charge by its id as it stands now.
type ChargeReader interface {
	LookCharge(ctx context.Context, chargeID string) (connector.Charge, error)
}

// requestDeadline is implemented by connectors that stamp every charge
// with the end of their timeout and whose acquirer makes no charge past it
// (the simulators): no charge sent before a moment can be made later than
// that moment and RequestTimeout.
type requestDeadline interface{ RequestTimeout() time.Duration }

// InquireCharge is the status inquiry after an unknown outcome. Transport
// errors are retried; a not-found answer means no charge was made.
func (a *Activities) InquireCharge(ctx context.Context, in InquireInput) (InquiryResult, error) {
	conn, err := a.Connectors.Get(in.Connector)
	if err != nil {
		// Until the connector is configured again nobody knows whether the
		// card was charged: the inquiry keeps being retried.
		return InquiryResult{}, fmt.Errorf("inquire %s: %w", in.IdempotencyKey, err)
	}
	sentBefore := in.SentBefore
	if in.AttemptsEnded && sentBefore.IsZero() {
		sentBefore = scheduledAt(ctx)
	}
	if d, ok := conn.(requestDeadline); ok && !sentBefore.IsZero() {
		t := time.NewTimer(time.Until(sentBefore.Add(d.RequestTimeout())))
		select {
		case <-ctx.Done():
			t.Stop()
			return InquiryResult{}, fmt.Errorf("inquire %s: %w", in.IdempotencyKey, ctx.Err())
		case <-t.C:
		}
	}
	if r, ok := conn.(ChargeReader); ok && in.ChargeID != "" {
		// The charge's own record, never behind: final. One the acquirer
		// does not find by the id it gave is no answer (a wrong account's
		// keys), not "never charged".
		charge, err := r.LookCharge(ctx, in.ChargeID)
		if err != nil {
			return InquiryResult{}, fmt.Errorf("inquire %s: %w", in.ChargeID, err)
		}
		return InquiryResult{Found: true, Outcome: outcomeOf(conn.Name(), charge), Final: true}, nil
	}
	charge, err := conn.Inquire(ctx, in.IdempotencyKey)
	f, ok := conn.(finalInquiry)
	final := ok && f.FinalInquiry()
	if errors.Is(err, connector.ErrNotFound) {
		return InquiryResult{Found: false, NeverCharged: final, Final: final}, nil
	}
	if err != nil {
		return InquiryResult{}, fmt.Errorf("inquire %s: %w", in.IdempotencyKey, err)
	}
	return InquiryResult{Found: true, Outcome: outcomeOf(conn.Name(), charge), Final: final}, nil
}

// scheduledAt is when this activity was scheduled (its first attempt's,
// on a retry), or now outside an activity.
func scheduledAt(ctx context.Context) time.Time {
	if activity.IsActivity(ctx) {
		return activity.GetInfo(ctx).ScheduledTime
	}
	return time.Now()
}

// DropCVVInput names the card whose security code is to be forgotten.
type DropCVVInput struct {
	CardToken string
}

// DropCVV forgets the security code once the authorisation is over.
func (a *Activities) DropCVV(ctx context.Context, in DropCVVInput) error {
	return a.Vault.DropCVV(ctx, in.CardToken)
}

// DeleteCardInput names the card to forget whole.
type DeleteCardInput struct {
	CardToken string
}

// DeleteCard forgets a card entirely (number and security code), for an
// order that ended before anything was charged and whose record could not
// be written: no order will ever use the token.
func (a *Activities) DeleteCard(ctx context.Context, in DeleteCardInput) error {
	if in.CardToken == "" {
		return nil
	}
	return a.Vault.Delete(ctx, in.CardToken)
}

// ChargeAttemptInput is one charge of a routed order at one connector, for
// the record (models.PaymentAttempt).
type ChargeAttemptInput struct {
	TransactionID string
	Attempt       int
	Connector     string
	ConnectorRef  string
	Outcome       string // routing.Outcome's word
	DeclineReason connector.DeclineReason
	LatencyMS     int64
	Why           string
	At            time.Time
}

// RecordChargeAttempt writes one attempt of a routed order's charge; the
// same attempt written again changes nothing.
func (a *Activities) RecordChargeAttempt(ctx context.Context, in ChargeAttemptInput) error {
	err := a.Records.RecordPaymentAttempt(ctx, &models.PaymentAttempt{TransactionID: in.TransactionID, Attempt: in.Attempt,
		Connector: in.Connector, ConnectorRef: in.ConnectorRef, Outcome: in.Outcome, DeclineReason: string(in.DeclineReason),
		LatencyMS: in.LatencyMS, Why: in.Why, At: in.At})
	return recordError(err)
}
