// Package activities holds every Temporal activity: all I/O of the
// workflows (Postgres, the vault, acquirers) happens here.
package activities

import (
	"context"
	"log/slog"
	"net/http"

	"gorm.io/gorm"

	"github.com/paygate/paygate/internal/adapters/connectors/simacquirer"
	"github.com/paygate/paygate/internal/adapters/vault"
)

// Acquirer is the card acquirer the connector activities talk to.
type Acquirer interface {
	Charge(ctx context.Context, req simacquirer.ChargeRequest) (simacquirer.Charge, error)
	Inquire(ctx context.Context, idempotencyKey string) (simacquirer.Charge, error)
	Capture(ctx context.Context, chargeID, idempotencyKey string, amount int64) (simacquirer.Charge, error)
	Void(ctx context.Context, chargeID, idempotencyKey string) (simacquirer.Charge, error)
	Refund(ctx context.Context, chargeID, idempotencyKey string, amount int64) (simacquirer.Refund, error)
	GetRefund(ctx context.Context, refundID string) (simacquirer.Refund, error)
	Authenticate(ctx context.Context, req simacquirer.AuthenticationRequest) (simacquirer.Authentication, error)
	GetAuthentication(ctx context.Context, id string) (simacquirer.Authentication, error)
	CreateAPMPayment(ctx context.Context, req simacquirer.APMRequest) (simacquirer.APMPayment, error)
	GetAPMPayment(ctx context.Context, id string) (simacquirer.APMPayment, error)
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
	Notifier  *http.Client // delivers notifications; see notifyclient.NewClient
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
