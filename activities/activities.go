// Package activities holds every Temporal activity: all I/O of the
// workflows (Postgres, the vault, acquirers) happens here.
package activities

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/paygate/paygate/internal/adapters/vault"
	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/models"
)

// Connector is one acquirer as the activities use it: card payments in the
// connector vocabulary (internal/domain/connector), whatever its wire
// format. Every error wraps one of connector's errors, which decide between
// retrying, inquiring and giving up.
type Connector interface {
	// Name is the name accounts and orders give the connector.
	Name() string
	Charge(ctx context.Context, req connector.ChargeRequest) (connector.Charge, error)
	// Inquire returns the charge made with idempotencyKey, or an error
	// wrapping connector.ErrNotFound when the acquirer made none.
	Inquire(ctx context.Context, idempotencyKey string) (connector.Charge, error)
	Capture(ctx context.Context, req connector.CaptureRequest) (connector.Charge, error)
	Void(ctx context.Context, req connector.VoidRequest) (connector.Charge, error)
	Refund(ctx context.Context, req connector.RefundRequest) (connector.Refund, error)
	GetRefund(ctx context.Context, refundID string) (connector.Refund, error)
}

// ThreeDSConnector is a connector that also runs 3-D Secure.
type ThreeDSConnector interface {
	Connector
	Authenticate(ctx context.Context, req connector.AuthenticationRequest) (connector.Authentication, error)
	GetAuthentication(ctx context.Context, id string) (connector.Authentication, error)
}

// APMConnector is a connector that also takes alternative payment methods.
type APMConnector interface {
	Connector
	CreateAPMPayment(ctx context.Context, req connector.APMRequest) (connector.APMPayment, error)
	GetAPMPayment(ctx context.Context, id string) (connector.APMPayment, error)
}

// APMCanceller is an APM connector whose provider can call off a payment
// the shopper has not completed; it returns the payment as it then stands.
type APMCanceller interface {
	CancelAPMPayment(ctx context.Context, id string) (connector.APMPayment, error)
}

// AuthenticationCanceller is a 3-D Secure connector whose authentication
// holds something at the acquirer until it ends (Stripe's PaymentIntent,
// which authorises once the shopper passes the challenge), and which can
// call it off. Connectors whose authentications hold nothing need not.
type AuthenticationCanceller interface {
	CancelAuthentication(ctx context.Context, id string) error
}

// Connectors finds a connector by the name an order carries; an empty name
// asks for the default (internal/adapters/connectors.Registry).
type Connectors interface {
	Get(name string) (Connector, error)
}

// Vault opens and forgets card data.
type Vault interface {
	Detokenize(ctx context.Context, token string) (vault.Card, error)
	DropCVV(ctx context.Context, token string) error
	Delete(ctx context.Context, token string) error
}

// ChargeSends notes each routed charge before it is sent, so that a later
// attempt knows an earlier one may have charged (migration 0026).
type ChargeSends interface {
	NoteChargeSend(ctx context.Context, key, connector string, at time.Time) (earlier bool, err error)
	ChargeSent(ctx context.Context, key string) (bool, error)
	ForgetChargeSend(ctx context.Context, key string) error
}

// Activities holds the clients the activities need. The worker registers one
// value; workflows call its methods through a nil pointer.
type Activities struct {
	Records models.Records // the record (Postgres)
	// Sends notes routed charges before they are sent (models.Records).
	Sends      ChargeSends
	Vault      Vault
	Connectors Connectors // the acquirers, by the name each order carries
	Accounts   SignKeys
	Notifier   *http.Client // delivers notifications; see notifyclient.NewClient
	// IDs hands out transaction ids for the orders workflows make.
	IDs    TransactionIDs
	Logger *slog.Logger
	// Metrics counts notification attempts; nil counts nothing.
	Metrics NotifyMetrics
	// Health keeps a circuit breaker per connector; nil keeps none.
	Health ConnectorHealth
	// Answers takes the answers of payments that API requests in this
	// process started eagerly; nil where no API runs beside the worker.
	Answers LocalAnswers
}

// ConnectorHealth is told how each charge fared at its connector, and says
// whether a charge that may fail over may try a connector
// (connectors.Health).
type ConnectorHealth interface {
	Allow(connector string) bool
	Record(connector string, failed bool)
}

// NotifyMetrics counts notification delivery attempts by outcome
// (telemetry.Metrics).
type NotifyMetrics interface {
	NotificationAttempt(outcome string)
}

// TransactionIDs hands out new transaction ids (txid.Generator).
type TransactionIDs interface {
	Next() string
}

// connector returns the connector an order names. One the configuration
// does not run is a non-retryable AcquirerRejected error: the order fails
// without a charge rather than wait for a connector that will not come.
func (a *Activities) connector(name string) (Connector, error) {
	c, err := a.Connectors.Get(name)
	if err != nil {
		return nil, ConnectorMissingError(err)
	}
	return c, nil
}

// connectorMissing is the detail that tells a connector missing from this
// worker's configuration from an acquirer's refusal: both are
// AcquirerRejected, but only the refusal is the acquirer's word.
const connectorMissing = "connector-missing"

// ConnectorMissingError is the error of an activity whose connector this
// worker's configuration does not run (cause says which).
func ConnectorMissingError(cause error) error {
	return temporal.NewApplicationErrorWithOptions("connector not configured", ErrTypeAcquirerRejected,
		temporal.ApplicationErrorOptions{NonRetryable: true, Cause: cause, Details: []any{connectorMissing}})
}

// IsConnectorMissing reports whether err is ConnectorMissingError's: the
// request never reached an acquirer, which therefore said nothing of it.
func IsConnectorMissing(err error) bool {
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || appErr.Type() != ErrTypeAcquirerRejected || !appErr.HasDetails() {
		return false
	}
	var detail string
	return appErr.Details(&detail) == nil && detail == connectorMissing
}

// Error types of application errors the activities return, for the
// workflows' retry policies and branches.
const (
	ErrTypeAcquirerTimeout  = "AcquirerTimeout"
	ErrTypeAcquirerRejected = "AcquirerRejected"
	ErrTypeCardUnavailable  = "CardUnavailable"
	// ErrTypeAcquirerDown: the connector could not be reached or said it
	// could not serve the charge before taking it; nothing was charged.
	// Only a charge that may fail over (AuthoriseInput.Failover) gets it.
	ErrTypeAcquirerDown = "AcquirerDown"
	// ErrTypeAcquirerSkipped: the connector's circuit breaker is open, so
	// a charge that may fail over was not sent to it.
	ErrTypeAcquirerSkipped = "AcquirerSkipped"
	// ErrTypeCardDeleted: the stored card the charge names was deleted by
	// the merchant; nothing was sent to the acquirer.
	ErrTypeCardDeleted = "CardDeleted"
	// ErrTypeRecordRejected: Postgres refused a record write for its
	// values (see models.IsDataError); the same write can never succeed.
	ErrTypeRecordRejected = "RecordRejected"
	// ErrTypeTransactionIDConflict: the order's transaction id is already
	// another order's, so the order cannot be recorded under it.
	ErrTypeTransactionIDConflict = "TransactionIDConflict"
	// ErrTypeCannotCancel: the connector cannot call off a pending
	// payment; the order keeps waiting.
	ErrTypeCannotCancel = "CannotCancel"
)
