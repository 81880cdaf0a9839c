package connector

import "errors"

// ThreeDSCallback is what a connector reads from a 3-D Secure result its
// ACS had the shopper's browser post: which authentication and which order
// (the transaction id the connector was given as the reference). Nothing
// else a callback claims is taken: the order asks the ACS for the outcome.
type ThreeDSCallback struct {
	AuthenticationID string
	Reference        string
}

// APMCallback is what a connector reads from its APM provider's callback:
// which payment and which order.
type APMCallback struct {
	PaymentID string
	Reference string
}

// Why a connector does not read a callback.
var (
	// ErrCallbackUnsigned: the callback does not carry this connector's
	// signature (another connector's, a forged one, or none).
	ErrCallbackUnsigned = errors.New("callback not signed by this connector")
	// ErrCallbackMalformed: the connector signed it, but it lacks the ids.
	ErrCallbackMalformed = errors.New("callback signed but without its ids")
	// ErrCallbackIrrelevant: the connector signed it, and it tells nothing
	// an order waits for (an event of another kind, or of a payment the
	// gateway did not make).
	ErrCallbackIrrelevant = errors.New("callback signed but of nothing an order waits for")
)
