package activities

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/paygate/paygate/internal/adapters/vault"
	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/models"
)

// ThreeDSData is a 3-D Secure authentication a charge carries.
type ThreeDSData struct {
	AuthenticationID string
	ECI              string
	CAVV             string
	// External, XID and DSTransID: the merchant's own 3-D Secure server's
	// result (mpi_info). Empty in histories from before, which replay the
	// same.
	External  bool   `json:",omitempty"`
	XID       string `json:",omitempty"`
	DSTransID string `json:",omitempty"`
}

// ThreeDSInput asks the directory server whether the card needs a challenge.
type ThreeDSInput struct {
	// Connector names the order's connector; empty means the default.
	Connector      string
	CardToken      string
	IdempotencyKey string
	Amount         int64
	Currency       string
	Reference      string
	ReturnURL      string // where the ACS sends the shopper's browser back
	// Browser is the shopper's browser and device, from the order.
	Browser connector.Browser `json:",omitzero"`
}

// ThreeDSOutcome is the authentication: done (frictionless) or a challenge.
type ThreeDSOutcome struct {
	AuthenticationID string
	Status           connector.AuthenticationStatus
	ECI              string
	CAVV             string
	ACSURL           string
}

// Authenticate3DS starts 3-D Secure for a tokenised card. A connector that
// runs no 3-D Secure refuses it (non-retryable AcquirerRejected).
func (a *Activities) Authenticate3DS(ctx context.Context, in ThreeDSInput) (ThreeDSOutcome, error) {
	conn, err := a.threeDSConnector(in.Connector)
	if err != nil {
		return ThreeDSOutcome{}, err
	}
	c, err := a.Vault.Detokenize(ctx, in.CardToken)
	if errors.Is(err, vault.ErrUnknownToken) {
		return ThreeDSOutcome{}, temporal.NewNonRetryableApplicationError("card token not in the vault", ErrTypeCardUnavailable, err)
	}
	if err != nil {
		return ThreeDSOutcome{}, err
	}
	au, err := conn.Authenticate(ctx, connector.AuthenticationRequest{
		IdempotencyKey: in.IdempotencyKey,
		Card:           connector.Card{Number: c.Number, ExpiryMonth: c.ExpiryMonth, ExpiryYear: c.ExpiryYear},
		Amount:         in.Amount,
		Currency:       in.Currency,
		Reference:      in.Reference,
		ReturnURL:      in.ReturnURL,
		Browser:        in.Browser,
	})
	if err != nil {
		return ThreeDSOutcome{}, acquirerError("3-D Secure "+in.Reference, err)
	}
	return threeDSOutcomeOf(au), nil
}

func threeDSOutcomeOf(au connector.Authentication) ThreeDSOutcome {
	return ThreeDSOutcome{AuthenticationID: au.ID, Status: au.Status, ECI: au.ECI, CAVV: au.CAVV, ACSURL: au.ACSURL}
}

// threeDSConnector returns the order's connector if it runs 3-D Secure.
func (a *Activities) threeDSConnector(name string) (ThreeDSConnector, error) {
	conn, err := a.connector(name)
	if err != nil {
		return nil, err
	}
	c, ok := conn.(ThreeDSConnector)
	if !ok {
		return nil, acquirerError("3-D Secure", fmt.Errorf("connector %s: %w", conn.Name(), connector.ErrUnsupported))
	}
	return c, nil
}

// apmConnector returns the order's connector if it takes APM payments.
func (a *Activities) apmConnector(name string) (APMConnector, error) {
	conn, err := a.connector(name)
	if err != nil {
		return nil, err
	}
	c, ok := conn.(APMConnector)
	if !ok {
		return nil, acquirerError("APM payment", fmt.Errorf("connector %s: %w", conn.Name(), connector.ErrUnsupported))
	}
	return c, nil
}

// ThreeDSStatusInput names a 3-D Secure authentication.
type ThreeDSStatusInput struct {
	// Connector names the order's connector; empty means the default.
	Connector        string
	AuthenticationID string
}

// Get3DSAuthentication asks the ACS for an authentication's state: the
// order trusts this answer, never the shopper's browser. A challenge not yet
// answered is "challenge_required".
func (a *Activities) Get3DSAuthentication(ctx context.Context, in ThreeDSStatusInput) (ThreeDSOutcome, error) {
	conn, err := a.threeDSConnector(in.Connector)
	if err != nil {
		return ThreeDSOutcome{}, err
	}
	au, err := conn.GetAuthentication(ctx, in.AuthenticationID)
	if err != nil {
		return ThreeDSOutcome{}, acquirerError("3-D Secure status "+in.AuthenticationID, err)
	}
	return threeDSOutcomeOf(au), nil
}

// APMInput creates a payment at the APM provider.
type APMInput struct {
	// Connector names the order's connector; empty means the default.
	Connector      string
	IdempotencyKey string
	Method         string
	Amount         int64
	Currency       string
	Country        string
	BankCode       string
	Reference      string
	CallbackURL    string
	ReturnURL      string
	Name           string
	Email          string
	Document       string
}

// APMOutcome is the provider's payment.
type APMOutcome struct {
	PaymentID   string
	Status      connector.APMStatus
	RedirectURL string
}

// CreateAPMPayment creates the payment the shopper completes at the provider.
func (a *Activities) CreateAPMPayment(ctx context.Context, in APMInput) (APMOutcome, error) {
	conn, err := a.apmConnector(in.Connector)
	if err != nil {
		return APMOutcome{}, err
	}
	p, err := conn.CreateAPMPayment(ctx, connector.APMRequest{
		IdempotencyKey: in.IdempotencyKey,
		Method:         in.Method,
		Amount:         in.Amount,
		Currency:       in.Currency,
		Country:        in.Country,
		Reference:      in.Reference,
		CallbackURL:    in.CallbackURL,
		ReturnURL:      in.ReturnURL,
		BankCode:       in.BankCode,
		Customer:       connector.APMCustomer{Name: in.Name, Email: in.Email, Document: in.Document},
	})
	if err != nil {
		return APMOutcome{}, acquirerError("APM payment "+in.Reference, err)
	}
	return APMOutcome{PaymentID: p.ID, Status: p.Status, RedirectURL: p.RedirectURL}, nil
}

// APMStatusInput names a provider payment.
type APMStatusInput struct {
	// Connector names the order's connector; empty means the default.
	Connector string
	PaymentID string
}

// GetAPMPayment reads a provider payment's status: the order trusts this
// answer, never the callback that woke it.
func (a *Activities) GetAPMPayment(ctx context.Context, in APMStatusInput) (APMOutcome, error) {
	conn, err := a.apmConnector(in.Connector)
	if err != nil {
		return APMOutcome{}, err
	}
	p, err := conn.GetAPMPayment(ctx, in.PaymentID)
	if err != nil {
		return APMOutcome{}, acquirerError("APM status "+in.PaymentID, err)
	}
	return APMOutcome{PaymentID: p.ID, Status: p.Status, RedirectURL: p.RedirectURL}, nil
}

// CancelAPMPayment calls off the order's payment at the APM provider, for
// the merchant's cancel of a pending order, and returns it as it then
// stands. A connector whose provider cannot cancel refuses it
// (ErrTypeCannotCancel): the order keeps waiting.
func (a *Activities) CancelAPMPayment(ctx context.Context, in APMStatusInput) (APMOutcome, error) {
	conn, err := a.apmConnector(in.Connector)
	if err != nil {
		return APMOutcome{}, err
	}
	c, ok := conn.(APMCanceller)
	if !ok {
		return APMOutcome{}, temporal.NewNonRetryableApplicationError(conn.Name()+" cannot cancel a pending APM payment",
			ErrTypeCannotCancel, nil)
	}
	p, err := c.CancelAPMPayment(ctx, in.PaymentID)
	if err != nil {
		return APMOutcome{}, acquirerError("cancel APM payment "+in.PaymentID, err)
	}
	return APMOutcome{PaymentID: p.ID, Status: p.Status, RedirectURL: p.RedirectURL}, nil
}

// CancelAuthentication calls off the order's 3-D Secure authentication at
// connectors whose authentication holds something (AuthenticationCanceller),
// for the merchant's cancel of an order waiting at the challenge. At the
// others it does nothing: their authentication charges nothing, and the
// order no longer waits for it.
func (a *Activities) CancelAuthentication(ctx context.Context, in ThreeDSStatusInput) error {
	conn, err := a.connector(in.Connector)
	if err != nil {
		return err
	}
	c, ok := conn.(AuthenticationCanceller)
	if !ok {
		return nil
	}
	if err := c.CancelAuthentication(ctx, in.AuthenticationID); err != nil {
		return acquirerError("cancel authentication "+in.AuthenticationID, err)
	}
	return nil
}

// AttachPaymentMethodInput is the APM a shopper chose on the payment page.
type AttachPaymentMethodInput struct {
	TransactionID string
	Method        string
}

// AttachPaymentMethod records the APM the shopper chose on the order.
func (a *Activities) AttachPaymentMethod(ctx context.Context, in AttachPaymentMethodInput) error {
	return storeError(a.Records.AttachPaymentMethod(ctx, in.TransactionID, in.Method))
}

// AttachCardInput is the card a shopper gave on the payment page.
type AttachCardInput struct {
	TransactionID   string
	CardMasked      string
	CardBrand       string
	CardToken       string
	CardFingerprint string
}

// AttachCard records the shopper's card (masked, tokenised) on the order.
func (a *Activities) AttachCard(ctx context.Context, in AttachCardInput) error {
	return a.Records.AttachCard(ctx, in.TransactionID, models.OrderCard{
		Masked: in.CardMasked, Brand: in.CardBrand, Token: in.CardToken, Fingerprint: in.CardFingerprint,
	})
}
