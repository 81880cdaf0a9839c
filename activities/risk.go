package activities

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/paygate/paygate/internal/domain/risk"
	"github.com/paygate/paygate/models"
)

// RiskInput is what the risk check needs to know about a payment.
type RiskInput struct {
	MerchantID      string
	AccountID       string
	Amount          int64
	Currency        string
	CardFingerprint string

	// TransactionID is the payment being checked. Its order is already
	// recorded, and the velocity counts must leave it out.
	TransactionID string
	// CardBIN is the card's first six digits: risk.BIN of the masked card.
	CardBIN        string
	ShopperEmail   string
	ShopperIP      string
	BillingCountry string
}

// ErrTypeInvalidRiskInput marks a risk check the workflow asked for without
// the payment's transaction id: a bug, so it is not retried.
const ErrTypeInvalidRiskInput = "InvalidRiskInput"

// CheckRisk gathers the facts from Postgres (the account's settings, the
// blocked-card list, the counts of recent orders) and runs the pure risk
// rules on them.
func (a *Activities) CheckRisk(ctx context.Context, in RiskInput) (risk.Result, error) {
	if in.TransactionID == "" {
		return risk.Result{}, temporal.NewNonRetryableApplicationError("risk check without a transaction id", ErrTypeInvalidRiskInput, nil)
	}
	account, err := models.FindAccount(ctx, a.DB, in.MerchantID, in.AccountID)
	if err != nil {
		return risk.Result{}, fmt.Errorf("risk check: %w", err)
	}
	cfg := account.Risk.WithDefaults()
	blocked, err := models.CardBlocked(ctx, a.DB, in.CardFingerprint)
	if err != nil {
		return risk.Result{}, fmt.Errorf("risk check: %w", err)
	}
	now := time.Now()
	counts, err := models.CountVelocity(ctx, a.DB, models.VelocityQuery{
		AccountID:            in.AccountID,
		ExcludeTransactionID: in.TransactionID,
		Card:                 velocityWindow(cfg.CardVelocity, in.CardFingerprint, now),
		Email:                velocityWindow(cfg.EmailVelocity, in.ShopperEmail, now),
		IP:                   velocityWindow(cfg.IPVelocity, in.ShopperIP, now),
	})
	if err != nil {
		return risk.Result{}, fmt.Errorf("risk check: %w", err)
	}
	bin := risk.BIN(in.CardBIN)
	return risk.Evaluate(cfg, risk.Facts{
		Amount:         in.Amount,
		Currency:       in.Currency,
		AmountLimit:    account.AmountLimits[in.Currency],
		CardBlocked:    blocked,
		CardBIN:        bin,
		CardCountry:    risk.CardCountry(bin),
		BillingCountry: in.BillingCountry,
		CardOrders:     counts.Card,
		EmailOrders:    counts.Email,
		IPOrders:       counts.IP,
	}), nil
}

// velocityWindow is the count a velocity rule needs: none when the rule is
// off or the payment has no value to count by.
func velocityWindow(v risk.Velocity, value string, now time.Time) models.VelocityWindow {
	if !v.On() || value == "" {
		return models.VelocityWindow{}
	}
	return models.VelocityWindow{Value: value, Since: now.Add(-time.Duration(v.Window))}
}
