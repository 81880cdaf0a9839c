package activities

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/paygate/paygate/internal/adapters/connectors/simacquirer"
	"github.com/paygate/paygate/internal/adapters/vault"
)

// AuthoriseInput asks the acquirer to authorise (and, for a sale, capture) a
// tokenised card. The idempotency key comes from the workflow, so retries
// can never charge twice.
type AuthoriseInput struct {
	CardToken      string
	IdempotencyKey string
	Reference      string
	Amount         int64
	Currency       string
	Capture        bool
	ThreeDS        *ThreeDSData // the 3-D Secure authentication, when there was one
}

// ChargeOutcome is the acquirer's answer to a charge.
type ChargeOutcome struct {
	ChargeID       string
	Approved       bool
	DeclineCode    string
	Message        string
	AuthCode       string
	CapturedAmount int64
}

func outcomeOf(c simacquirer.Charge) ChargeOutcome {
	return ChargeOutcome{
		ChargeID:       c.ChargeID,
		Approved:       c.Status == "approved",
		DeclineCode:    c.DeclineCode,
		Message:        c.Message,
		AuthCode:       c.AuthCode,
		CapturedAmount: c.CapturedAmount,
	}
}

// Authorise opens the card from the vault and charges it. A timeout is
// returned as a non-retryable AcquirerTimeout: the outcome is unknown and the
// workflow must ask the acquirer before doing anything else.
func (a *Activities) Authorise(ctx context.Context, in AuthoriseInput) (ChargeOutcome, error) {
	c, err := a.Vault.Detokenize(ctx, in.CardToken)
	if errors.Is(err, vault.ErrUnknownToken) {
		return ChargeOutcome{}, temporal.NewNonRetryableApplicationError("card token not in the vault", ErrTypeCardUnavailable, err)
	}
	if err != nil {
		return ChargeOutcome{}, err
	}
	charge, err := a.Acquirer.Charge(ctx, simacquirer.ChargeRequest{
		IdempotencyKey: in.IdempotencyKey,
		Reference:      in.Reference,
		CardNumber:     c.Number,
		ExpiryMonth:    c.ExpiryMonth,
		ExpiryYear:     c.ExpiryYear,
		CVV:            c.CVV,
		Amount:         in.Amount,
		Currency:       in.Currency,
		Capture:        in.Capture,
		ThreeDS:        threeDSOf(in.ThreeDS),
	})
	switch {
	case err == nil:
		return outcomeOf(charge), nil
	case errors.Is(err, simacquirer.ErrTimeout):
		return ChargeOutcome{}, temporal.NewNonRetryableApplicationError("acquirer did not answer in time", ErrTypeAcquirerTimeout, err)
	case errors.Is(err, simacquirer.ErrRejected), errors.Is(err, simacquirer.ErrConflict):
		return ChargeOutcome{}, temporal.NewNonRetryableApplicationError("acquirer refused the request", ErrTypeAcquirerRejected, err)
	}
	return ChargeOutcome{}, fmt.Errorf("authorise %s: %w", in.Reference, err)
}

func threeDSOf(d *ThreeDSData) *simacquirer.ThreeDSData {
	if d == nil {
		return nil
	}
	return &simacquirer.ThreeDSData{AuthenticationID: d.AuthenticationID, ECI: d.ECI, CAVV: d.CAVV}
}

// InquireInput asks the acquirer what became of a charge attempt.
type InquireInput struct {
	IdempotencyKey string
}

// InquiryResult tells whether the acquirer knows the charge and its outcome.
type InquiryResult struct {
	Found   bool
	Outcome ChargeOutcome
}

// InquireCharge is the status inquiry after an unknown outcome. Transport
// errors are retried; a not-found answer means no charge was made.
func (a *Activities) InquireCharge(ctx context.Context, in InquireInput) (InquiryResult, error) {
	charge, err := a.Acquirer.Inquire(ctx, in.IdempotencyKey)
	if errors.Is(err, simacquirer.ErrNotFound) {
		return InquiryResult{Found: false}, nil
	}
	if err != nil {
		return InquiryResult{}, fmt.Errorf("inquire %s: %w", in.IdempotencyKey, err)
	}
	return InquiryResult{Found: true, Outcome: outcomeOf(charge)}, nil
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
