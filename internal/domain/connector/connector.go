// Package connector is the vocabulary every acquirer connector speaks: what
// the gateway asks an acquirer (charge, inquiry, capture, void, refund,
// 3-D Secure, APM payments), what it answers, and how its failures are
// classified. Each connector maps its own wire format onto these types, so
// the activities never see an acquirer's request or status words.
package connector

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/paygate/paygate/internal/domain/refund"
)

// DefaultName is the connector of accounts and orders that name none: the
// simulated acquirer, the only connector before accounts chose theirs. A
// running order whose input carries no connector name was started then, so
// it must go on with this one.
const DefaultName = "sim-acquirer"

// Errors a connector's operations wrap, so callers decide whether to retry,
// inquire or give up without knowing the acquirer. Their messages never
// contain card data.
var (
	// ErrTimeout means no answer arrived in time, or the connection failed
	// after the request may have reached the acquirer: the outcome is
	// unknown and the caller must inquire before doing anything else.
	ErrTimeout = errors.New("acquirer: no answer in time, outcome unknown")
	// ErrUnavailable means the acquirer answered that it could not serve
	// the request, or could not be reached: nothing was done and it is
	// safe to retry with the same idempotency key.
	ErrUnavailable = errors.New("acquirer: unavailable")
	// ErrNotFound means the acquirer has no such charge, refund,
	// authentication or payment.
	ErrNotFound = errors.New("acquirer: not found")
	// ErrConflict means the idempotency key was used with a different
	// request, or the charge is in the wrong state for the operation.
	ErrConflict = errors.New("acquirer: conflict")
	// ErrRejected means the request itself is wrong; it must not be retried.
	ErrRejected = errors.New("acquirer: request rejected")
	// ErrUnsupported means the connector does not offer the operation at
	// all (3-D Secure or an APM on an acquirer without them).
	ErrUnsupported = errors.New("acquirer: operation not offered by this connector")
)

// Card is the card data a charge or an authentication sends. Its String,
// GoString, LogValue and JSON forms show only the last four digits, so a
// request that holds it can be logged or printed safely.
type Card struct {
	Number      string
	ExpiryMonth string // "1" to "12", with or without a leading zero
	ExpiryYear  string // two or four digits
	CVV         string
}

// String describes c without card data.
func (c Card) String() string { return maskCard(c.Number) }

// GoString describes c without card data, for the %#v verb.
func (c Card) GoString() string { return "connector.Card{" + maskCard(c.Number) + "}" }

// LogValue describes c for log/slog without card data.
func (c Card) LogValue() slog.Value { return slog.StringValue(maskCard(c.Number)) }

// MarshalJSON writes the masked card only.
func (c Card) MarshalJSON() ([]byte, error) { return json.Marshal(maskCard(c.Number)) }

func maskCard(number string) string {
	if len(number) < 4 {
		return "****"
	}
	return "****" + number[len(number)-4:]
}

// ChargeRequest asks the acquirer to authorise, and for a sale also capture,
// a card payment. The idempotency key makes a retried request safe.
type ChargeRequest struct {
	IdempotencyKey string
	Reference      string // our transaction id
	Card           Card
	Amount         int64 // minor units of Currency
	Currency       string
	Capture        bool
	// ThreeDS carries a successful 3-D Secure authentication; nil when the
	// charge is not authenticated.
	ThreeDS *ThreeDSData
	// StoredCredential marks a charge of a card the merchant keeps (a stored
	// token, a subscription's charge): the card has no security code any
	// more, and acquirers take such charges without one.
	StoredCredential bool
	// Installments is the number of monthly installments the shopper pays
	// in (installments), 0 for none.
	Installments int
}

// String describes r without card data.
func (r ChargeRequest) String() string {
	return fmt.Sprintf("ChargeRequest{IdempotencyKey:%q Reference:%q Card:%s Amount:%d Currency:%q Capture:%t}",
		r.IdempotencyKey, r.Reference, r.Card, r.Amount, r.Currency, r.Capture)
}

// GoString describes r without card data, for the %#v verb.
func (r ChargeRequest) GoString() string { return r.String() }

// LogValue describes r for log/slog without card data.
func (r ChargeRequest) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("idempotency_key", r.IdempotencyKey),
		slog.String("reference", r.Reference),
		slog.String("card", r.Card.String()),
		slog.Int64("amount", r.Amount),
		slog.String("currency", r.Currency),
		slog.Bool("capture", r.Capture),
	)
}

// ChargeStatus is the acquirer's decision on a charge.
type ChargeStatus string

// Charge decisions.
const (
	Approved ChargeStatus = "approved"
	Declined ChargeStatus = "declined"
)

// DeclineReason says why a charge was declined. The words are the ones the
// order workflow maps to result codes (and that recorded histories hold),
// whatever words or numbers the acquirer uses.
type DeclineReason string

// Decline reasons. Any other decline is DeclineGeneric.
const (
	DeclineGeneric                = DeclineReason("do_not_honor")
	DeclineInsufficientFunds      = DeclineReason("insufficient_funds")
	DeclineExpiredCard            = DeclineReason("expired_card")
	DeclineIncorrectCVC           = DeclineReason("incorrect_cvc")
	DeclineAuthenticationRequired = DeclineReason("authentication_required")
	DeclineAuthenticationFailed   = DeclineReason("authentication_failed")
	// DeclineDoNotRetry: the issuer says the card must not be tried again
	// (lost, stolen, kept by the issuer, fraud, do not try again). The
	// merchant hears a decline as for DeclineGeneric; no route sends the
	// card on to another acquirer.
	DeclineDoNotRetry = DeclineReason("do_not_retry")
)

// Charge is the acquirer's record of a charge. It holds no card data.
type Charge struct {
	ID             string
	Status         ChargeStatus
	DeclineReason  DeclineReason // set when declined
	Message        string        // the acquirer's words, for logs and support
	AuthCode       string
	Amount         int64
	Currency       string
	CapturedAmount int64
	RefundedAmount int64
	Voided         bool
}

// Approved reports whether the acquirer approved the charge.
func (c Charge) Approved() bool { return c.Status == Approved }

// CaptureRequest captures Amount of an approved, uncaptured charge; the
// rest of the authorisation is released.
type CaptureRequest struct {
	ChargeID       string
	IdempotencyKey string
	Amount         int64
	Currency       string // the charge's; acquirers that write decimals need it
}

// VoidRequest releases an approved charge that was not captured.
type VoidRequest struct {
	ChargeID       string
	IdempotencyKey string
}

// RefundRequest returns Amount of a captured charge to the card.
type RefundRequest struct {
	ChargeID       string
	IdempotencyKey string
	Amount         int64
	Currency       string // the charge's; acquirers that write decimals need it
}

// Refund is the acquirer's record of a refund.
type Refund struct {
	ID       string
	ChargeID string
	Amount   int64
	Currency string
	// Status is in our words: a connector maps its own (anything it does
	// not call pending or done is failed).
	Status refund.Status
}

// ThreeDSData is a successful 3-D Secure authentication a charge carries.
type ThreeDSData struct {
	AuthenticationID string
	ECI              string
	CAVV             string
	// External marks a result the merchant's own 3-D Secure server (MPI)
	// produced (additional_information.mpi_info): no authentication of the
	// connector's names it, and XID and DSTransID identify it instead.
	External  bool
	XID       string
	DSTransID string
}

// AuthenticationRequest starts a 3-D Secure authentication of a card.
type AuthenticationRequest struct {
	IdempotencyKey string
	Card           Card
	Amount         int64
	Currency       string
	Reference      string
	ReturnURL      string // where the ACS sends the shopper's browser back
	// Browser is the shopper's browser and device as the merchant sent
	// them: the data an ACS weighs for a frictionless authentication and
	// lays its challenge out by.
	Browser Browser
}

// Browser is the shopper's browser and device for 3-D Secure, as the
// payment order's fields give them (browser_lang, user_agent, time_zone,
// resolution, color_depth, challenge_window_size, shopper_ip, os, browser).
type Browser struct {
	Language            string `json:"language,omitempty"`
	UserAgent           string `json:"user_agent,omitempty"`
	TimeZone            string `json:"time_zone,omitempty"`
	ScreenResolution    string `json:"screen_resolution,omitempty"`
	ColorDepth          string `json:"color_depth,omitempty"`
	ChallengeWindowSize string `json:"challenge_window_size,omitempty"`
	IP                  string `json:"ip,omitempty"`
	OS                  string `json:"os,omitempty"`
	Name                string `json:"name,omitempty"`
}

// String describes r without card data.
func (r AuthenticationRequest) String() string {
	return fmt.Sprintf("AuthenticationRequest{IdempotencyKey:%q Reference:%q Card:%s Amount:%d Currency:%q ReturnURL:%q}",
		r.IdempotencyKey, r.Reference, r.Card, r.Amount, r.Currency, r.ReturnURL)
}

// GoString describes r without card data, for the %#v verb.
func (r AuthenticationRequest) GoString() string { return r.String() }

// LogValue describes r for log/slog without card data.
func (r AuthenticationRequest) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("idempotency_key", r.IdempotencyKey),
		slog.String("reference", r.Reference),
		slog.String("card", r.Card.String()),
		slog.Int64("amount", r.Amount),
		slog.String("currency", r.Currency),
		slog.String("return_url", r.ReturnURL),
	)
}

// AuthenticationStatus is where a 3-D Secure authentication stands.
type AuthenticationStatus string

// Authentication statuses.
const (
	Authenticated        AuthenticationStatus = "authenticated"
	ChallengeRequired    AuthenticationStatus = "challenge_required"
	AuthenticationFailed AuthenticationStatus = "failed"
)

// Authentication is the state of a 3-D Secure authentication. When Status
// is ChallengeRequired the shopper must be sent to ACSURL.
type Authentication struct {
	ID     string
	Status AuthenticationStatus
	ECI    string
	CAVV   string
	ACSURL string
}

// APMCustomer identifies the payer of an APM payment.
type APMCustomer struct {
	Name     string
	Email    string
	Document string
}

// APMRequest asks the APM provider to start a payment. The provider posts
// the outcome to CallbackURL and sends the shopper back to ReturnURL.
type APMRequest struct {
	IdempotencyKey string
	Method         string
	Amount         int64
	Currency       string
	Country        string
	Reference      string
	CallbackURL    string
	ReturnURL      string
	BankCode       string
	Customer       APMCustomer
}

// APMStatus is where an APM payment stands at the provider.
type APMStatus string

// APM payment statuses.
const (
	APMPending   APMStatus = "pending"
	APMSucceeded APMStatus = "succeeded"
	APMCancelled APMStatus = "cancelled"
)

// APMPayment is the provider's record of an APM payment. The shopper pays at
// RedirectURL.
type APMPayment struct {
	ID          string
	Status      APMStatus
	RedirectURL string
}

// CheckIDs refuses, with ErrRejected, an operation on a charge that names
// no charge or carries no idempotency key; what says which operation.
func CheckIDs(what, chargeID, idempotencyKey string) error {
	if chargeID == "" {
		return fmt.Errorf("%s: %w: empty charge id", what, ErrRejected)
	}
	if idempotencyKey == "" {
		return fmt.Errorf("%s: %w: empty idempotency key", what, ErrRejected)
	}
	return nil
}
