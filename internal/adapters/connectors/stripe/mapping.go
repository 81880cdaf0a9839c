package stripe

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	stripego "github.com/stripe/stripe-go/v82"

	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/refund"
)

// declineReasons maps Stripe's decline codes to our words (its card-error
// codes share these words: expired_card, incorrect_cvc,
// authentication_required); any other decline is generic. The table
// is in docs/connectors.md.
var declineReasons = map[string]connector.DeclineReason{
	string(stripego.DeclineCodeInsufficientFunds):      connector.DeclineInsufficientFunds,
	string(stripego.DeclineCodeExpiredCard):            connector.DeclineExpiredCard,
	string(stripego.DeclineCodeIncorrectCVC):           connector.DeclineIncorrectCVC,
	string(stripego.DeclineCodeInvalidCVC):             connector.DeclineIncorrectCVC,
	string(stripego.DeclineCodeAuthenticationRequired): connector.DeclineAuthenticationRequired,
	// The issuer's "never again": a route must not take the card elsewhere.
	string(stripego.DeclineCodeStolenCard):                    connector.DeclineDoNotRetry,
	string(stripego.DeclineCodeLostCard):                      connector.DeclineDoNotRetry,
	string(stripego.DeclineCodePickupCard):                    connector.DeclineDoNotRetry,
	string(stripego.DeclineCodeFraudulent):                    connector.DeclineDoNotRetry,
	string(stripego.DeclineCodeMerchantBlacklist):             connector.DeclineDoNotRetry,
	string(stripego.DeclineCodeDoNotTryAgain):                 connector.DeclineDoNotRetry,
	string(stripego.DeclineCodeRevocationOfAllAuthorizations): connector.DeclineDoNotRetry,
	string(stripego.DeclineCodeRevocationOfAuthorization):     connector.DeclineDoNotRetry,
	string(stripego.DeclineCodeRestrictedCard):                connector.DeclineDoNotRetry,
	string(stripego.DeclineCodeSecurityViolation):             connector.DeclineDoNotRetry,
	string(stripego.DeclineCodeStopPaymentOrder):              connector.DeclineDoNotRetry,
}

// declineReason is our word for a Stripe decline: its decline code first,
// then its error code.
func declineReason(declineCode, code string) connector.DeclineReason {
	if r, ok := declineReasons[declineCode]; ok {
		return r
	}
	if r, ok := declineReasons[code]; ok {
		return r
	}
	return connector.DeclineGeneric
}

// chargeOf maps a PaymentIntent onto a charge. A PaymentIntent still on its
// way (processing, or waiting for a confirmation we did not leave it
// waiting for) is an unknown outcome: the caller inquires again later.
func chargeOf(what string, pi *stripego.PaymentIntent) (connector.Charge, error) {
	c := connector.Charge{ID: pi.ID, Amount: fromStripe(pi.Amount, pi.Currency), Currency: strings.ToUpper(string(pi.Currency))}
	switch pi.Status {
	case stripego.PaymentIntentStatusRequiresCapture:
		c.Status = connector.Approved
	case stripego.PaymentIntentStatusSucceeded:
		c.Status, c.CapturedAmount = connector.Approved, fromStripe(pi.AmountReceived, pi.Currency)
	case stripego.PaymentIntentStatusCanceled:
		// Cancelled after an authorisation: a void. One cancelled after
		// a failed attempt is that attempt's decline.
		if e := pi.LastPaymentError; e != nil {
			c.Status, c.DeclineReason, c.Message = connector.Declined, declineReason(string(e.DeclineCode), string(e.Code)), e.Msg
		} else {
			c.Status, c.Voided = connector.Approved, true
		}
	case stripego.PaymentIntentStatusRequiresPaymentMethod:
		c.Status, c.DeclineReason = connector.Declined, connector.DeclineGeneric
		if e := pi.LastPaymentError; e != nil {
			c.DeclineReason, c.Message = declineReason(string(e.DeclineCode), string(e.Code)), e.Msg
		}
	case stripego.PaymentIntentStatusRequiresAction:
		c.Status, c.DeclineReason = connector.Declined, connector.DeclineAuthenticationRequired
	default:
		return connector.Charge{}, fmt.Errorf("%s: %w: PaymentIntent %s is %s", what, connector.ErrTimeout, pi.ID, pi.Status)
	}
	return c, nil
}

// refundOf maps a Stripe refund onto ours: pending while Stripe says so or
// waits for an action, done when it succeeded, failed otherwise.
func refundOf(r *stripego.Refund) connector.Refund {
	out := connector.Refund{ID: r.ID, Amount: fromStripe(r.Amount, r.Currency), Currency: strings.ToUpper(string(r.Currency)), Status: refund.Failed}
	if r.PaymentIntent != nil {
		out.ChargeID = r.PaymentIntent.ID
	}
	switch r.Status {
	case stripego.RefundStatusPending, stripego.RefundStatusRequiresAction:
		out.Status = refund.Pending
	case stripego.RefundStatusSucceeded:
		out.Status = refund.Succeeded
	}
	return out
}

// declinedOr answers a card error of a charge as the decline it is (Stripe
// answers a declined PaymentIntent with HTTP 402 and the PaymentIntent in
// the error), and any other error as errorOf does.
func declinedOr(ctx context.Context, what string, err error) (connector.Charge, error) {
	if se := cardError(err); se != nil {
		c := connector.Charge{Status: connector.Declined, DeclineReason: declineReason(string(se.DeclineCode), string(se.Code)), Message: se.Msg}
		if pi := se.PaymentIntent; pi != nil {
			c.ID, c.Amount, c.Currency = pi.ID, fromStripe(pi.Amount, pi.Currency), strings.ToUpper(string(pi.Currency))
		}
		return c, nil
	}
	return connector.Charge{}, errorOf(ctx, what, err)
}

// cardError is Stripe's card error in err (HTTP 402: the card, not the
// request, was refused), or nil.
func cardError(err error) *stripego.Error {
	var se *stripego.Error
	if errors.As(err, &se) && se.Type == stripego.ErrorTypeCard {
		return se
	}
	return nil
}

// conflicts are the error codes of an operation on a PaymentIntent or
// charge in the wrong state for it.
var conflicts = map[stripego.ErrorCode]bool{
	stripego.ErrorCodePaymentIntentUnexpectedState: true,
	stripego.ErrorCodeChargeAlreadyCaptured:        true,
	stripego.ErrorCodeChargeAlreadyRefunded:        true,
	stripego.ErrorCodeChargeExpiredForCapture:      true,
}

// errorOf maps a failed call onto the connector's errors. Stripe's own
// message is left out: some repeat what was sent.
func errorOf(ctx context.Context, what string, err error) error {
	if errors.Is(err, connector.ErrRejected) {
		// Refused here, before anything was sent.
		return err
	}
	var se *stripego.Error
	if !errors.As(err, &se) {
		return failures.Of(ctx, what, err)
	}
	detail := fmt.Sprintf("stripe %d %s %s (request %s)", se.HTTPStatusCode, se.Type, se.Code, se.RequestID)
	var kind error
	switch {
	case se.HTTPStatusCode == http.StatusConflict:
		// The same key in flight: Stripe answers 409, whatever type it
		// gives, while the first request under the key runs, and saves no
		// answer for it. The outcome is unknown until asked again; read as
		// a refusal, a refund Stripe then made would be recorded failed
		// and refunded a second time.
		kind = connector.ErrTimeout
	case se.Type == stripego.ErrorTypeIdempotency:
		// A key sent again with other parameters (400).
		kind = connector.ErrConflict
	case conflicts[se.Code]:
		kind = connector.ErrConflict
	case se.HTTPStatusCode == http.StatusNotFound || se.Code == stripego.ErrorCodeResourceMissing:
		kind = connector.ErrNotFound
	case se.HTTPStatusCode == http.StatusTooManyRequests:
		// Refused before anything was done: safe to send again.
		kind = connector.ErrUnavailable
	case se.HTTPStatusCode >= 500:
		// Stripe failed while working on it: the outcome is unknown
		// until asked again.
		kind = connector.ErrTimeout
	default:
		kind = connector.ErrRejected
	}
	return fmt.Errorf("%s: %w: %s", what, kind, detail)
}
