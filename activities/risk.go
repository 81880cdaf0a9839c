package activities

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/paygate/paygate/internal/domain/risk"
	"github.com/paygate/paygate/internal/domain/testmode"
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
	// recorded, and the velocity counts must leave it out; the verdict is
	// written on it (KeepRiskVerdict).
	TransactionID string
	// CardBIN is the card's first six digits: risk.BIN of the masked card.
	CardBIN string
	// CardMasked is the masked card (first six, last four), by which a
	// test account's test cards are known.
	CardMasked     string
	ShopperEmail   string
	ShopperIP      string
	BillingCountry string
	// DeviceFingerprint is the order's device_fingerprint.
	DeviceFingerprint string
	// Settings are the account's risk settings as the order took them
	// when it was made (workflows.OrderInput.Risk); nil reads them from
	// the account now.
	Settings *risk.Settings `json:",omitempty"`
}

// ErrTypeInvalidRiskInput marks a risk check the workflow asked for without
// the payment's transaction id: a bug, so it is not retried.
const ErrTypeInvalidRiskInput = "InvalidRiskInput"

// CheckRisk gathers the facts (the account's settings the order carries, the
// blocked-card list and the counts of recent orders, one statement to
// Postgres) and runs the pure risk rules on them.
func (a *Activities) CheckRisk(ctx context.Context, in RiskInput) (risk.Result, error) {
	if in.TransactionID == "" {
		return risk.Result{}, temporal.NewNonRetryableApplicationError("risk check without a transaction id", ErrTypeInvalidRiskInput, nil)
	}
	settings, err := a.riskSettings(ctx, in)
	if err != nil {
		return risk.Result{}, err
	}
	cfg := settings.Config.WithDefaults()
	now := time.Now()
	test := settings.Test
	card, email, ip := in.CardFingerprint, in.ShopperEmail, in.ShopperIP
	if test {
		// A test account's test data is not a shopper's: it never counts
		// towards velocity, so a newcomer can pay the README's payment
		// again and again. The velocity test email counts, against a limit
		// of one.
		if testmode.IsTestCardMasked(in.CardBIN, last4(in.CardMasked)) {
			card = ""
		}
		if testmode.IsTestIP(ip) {
			ip = ""
		}
		switch {
		case strings.EqualFold(email, testmode.EmailVelocity):
			cfg.EmailVelocity = risk.Velocity{Max: 1, Window: risk.Duration(time.Hour), Score: cfg.RejectScore}
		case testmode.IsTestEmail(email):
			email = ""
		}
	}
	counts, err := a.Records.CountVelocity(ctx, models.VelocityQuery{
		AccountID:            in.AccountID,
		ExcludeTransactionID: in.TransactionID,
		Card:                 velocityWindow(cfg.CardVelocity, card, now),
		Email:                velocityWindow(cfg.EmailVelocity, email, now),
		IP:                   velocityWindow(cfg.IPVelocity, ip, now),
		Device:               velocityWindow(cfg.DeviceVelocity, in.DeviceFingerprint, now),
		Blocklist:            in.CardFingerprint,
	})
	if err != nil {
		return risk.Result{}, fmt.Errorf("risk check: %w", err)
	}
	bin := risk.BIN(in.CardBIN)
	res := risk.Evaluate(cfg, risk.Facts{
		Amount:         in.Amount,
		Currency:       in.Currency,
		AmountLimit:    settings.AmountLimit,
		CardBlocked:    counts.CardBlocked,
		CardBIN:        bin,
		CardCountry:    risk.CardCountry(bin),
		BillingCountry: in.BillingCountry,
		CardOrders:     counts.Card,
		EmailOrders:    counts.Email,
		IPOrders:       counts.IP,
		DeviceOrders:   counts.Device,
	})
	if test {
		switch {
		case strings.EqualFold(in.ShopperEmail, testmode.EmailReview):
			res = res.Forced(risk.Review, cfg)
		case strings.EqualFold(in.ShopperEmail, testmode.EmailReject):
			res = res.Forced(risk.Reject, cfg)
		}
	}
	// The verdict is the order's once written: a check run again (the
	// payment's workflow task run again after a worker died, perhaps after
	// the charge was sent) answers the first, never one reached on facts
	// that moved since (another order of the card, a card blocked), which
	// could stop an order whose card was charged.
	kept, err := a.Records.KeepRiskVerdict(ctx, in.TransactionID, keptVerdict(res))
	if err != nil {
		return risk.Result{}, fmt.Errorf("risk check: %w", err)
	}
	if kept.Action != res.Action || kept.Score != res.Score || kept.Rule != res.Rule || !sameReasons(kept.Reasons, res.Reasons) {
		res = verdictOf(kept)
	}
	return res, nil
}

// keptVerdict is a risk verdict as the order's row keeps it.
func keptVerdict(r risk.Result) models.RiskVerdict {
	v := models.RiskVerdict{Action: r.Action, Score: r.Score, Rule: r.Rule}
	if r.Reasons != nil {
		v.Reasons = make([]models.RiskReason, 0, len(r.Reasons))
		for _, reason := range r.Reasons {
			v.Reasons = append(v.Reasons, models.RiskReason{Name: reason.Name, Status: reason.Status})
		}
	}
	return v
}

// verdictOf is the risk verdict an order's row keeps.
func verdictOf(v models.RiskVerdict) risk.Result {
	r := risk.Result{Action: v.Action, Score: v.Score, Rule: v.Rule}
	if v.Reasons != nil {
		r.Reasons = make([]risk.Reason, 0, len(v.Reasons))
		for _, reason := range v.Reasons {
			r.Reasons = append(r.Reasons, risk.Reason{Name: reason.Name, Status: reason.Status})
		}
	}
	return r
}

// sameReasons reports whether a kept verdict's reasons are rs.
func sameReasons(kept []models.RiskReason, rs []risk.Reason) bool {
	if len(kept) != len(rs) {
		return false
	}
	for i, r := range rs {
		if kept[i].Name != r.Name || kept[i].Status != r.Status {
			return false
		}
	}
	return true
}

// riskSettings are the settings the order carries, or else (an order made
// before orders carried them) the account's of this moment.
func (a *Activities) riskSettings(ctx context.Context, in RiskInput) (risk.Settings, error) {
	if in.Settings != nil {
		return *in.Settings, nil
	}
	account, err := a.Records.FindAccount(ctx, in.MerchantID, in.AccountID)
	if err != nil {
		return risk.Settings{}, fmt.Errorf("risk check: %w", err)
	}
	return account.RiskSettings(in.Currency), nil
}

// last4 is the last four characters of a masked card, "" when shorter.
func last4(masked string) string {
	if len(masked) < 4 {
		return ""
	}
	return masked[len(masked)-4:]
}

// velocityWindow is the count a velocity rule needs: none when the rule is
// off or the payment has no value to count by.
func velocityWindow(v risk.Velocity, value string, now time.Time) models.VelocityWindow {
	if !v.On() || value == "" {
		return models.VelocityWindow{}
	}
	return models.VelocityWindow{Value: value, Since: now.Add(-time.Duration(v.Window))}
}
