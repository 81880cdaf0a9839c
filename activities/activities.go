// Package activities holds every Temporal activity: all I/O of the
// workflows (Postgres, the vault, acquirers) happens here.
package activities

import (
	"context"
	"log/slog"
	"net/http"

	"gorm.io/gorm"

	"github.com/paygate/paygate/internal/connector/acquirer"
	"github.com/paygate/paygate/internal/vault"
)

// Acquirer is the card acquirer the connector activities talk to.
type Acquirer interface {
	Charge(ctx context.Context, req acquirer.ChargeRequest) (acquirer.Charge, error)
	Inquire(ctx context.Context, idempotencyKey string) (acquirer.Charge, error)
	Capture(ctx context.Context, chargeID, idempotencyKey string, amount int64) (acquirer.Charge, error)
	Void(ctx context.Context, chargeID, idempotencyKey string) (acquirer.Charge, error)
	Refund(ctx context.Context, chargeID, idempotencyKey string, amount int64) (acquirer.Refund, error)
	GetRefund(ctx context.Context, refundID string) (acquirer.Refund, error)
	Authenticate(ctx context.Context, req acquirer.AuthenticationRequest) (acquirer.Authentication, error)
	GetAuthentication(ctx context.Context, id string) (acquirer.Authentication, error)
	CreateAPMPayment(ctx context.Context, req acquirer.APMRequest) (acquirer.APMPayment, error)
	GetAPMPayment(ctx context.Context, id string) (acquirer.APMPayment, error)
}

// Vault opens and forgets card data.
type Vault interface {
	Detokenize(ctx context.Context, token string) (vault.Card, error)
	DropCVV(ctx context.Context, token string) error
	Delete(ctx context.Context, token string) error
}

// Activities holds the clients the activities need. The worker registers one
// value; workflows call its methods through a nil pointer.
type Activities struct {
	DB        *gorm.DB
	Vault     Vault
	Acquirer  Acquirer
	Accounts  SignKeys
	Notifier  *http.Client // delivers notifications; see notify.NewClient
	Connector string       // the connector name shown to merchants
	Logger    *slog.Logger
}

// Error types of application errors the activities return, for the
// workflows' retry policies and branches.
const (
	ErrTypeAcquirerTimeout  = "AcquirerTimeout"
	ErrTypeAcquirerRejected = "AcquirerRejected"
	ErrTypeCardUnavailable  = "CardUnavailable"
	// ErrTypeRecordRejected: Postgres refused a record write for its
	// values (see models.IsDataError); the same write can never succeed.
	ErrTypeRecordRejected = "RecordRejected"
	// ErrTypeTransactionIDConflict: the order's transaction id is already
	// another order's, so the order cannot be recorded under it.
	ErrTypeTransactionIDConflict = "TransactionIDConflict"
)
