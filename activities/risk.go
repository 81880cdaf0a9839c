package activities

import (
	"context"
	"fmt"
	"slices"
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
	q, err := a.questionOf(ctx, in)
	if err != nil {
		return risk.Result{}, err
	}
	counts, err := a.Records.CountVelocity(ctx, q.velocity)
	if err != nil {
		return risk.Result{}, fmt.Errorf("risk check: %w", err)
	}
	return a.riskVerdict(ctx, q, counts)
}

// riskQuestion is what a risk check asks of the record about one payment:
// the rules that apply and the velocity windows to count.
type riskQuestion struct {
	in       RiskInput
	cfg      risk.Config
	settings risk.Settings
	velocity models.VelocityQuery
}

// questionOf is CheckRisk's first half: the question, before the record
// is asked it.
func (a *Activities) questionOf(ctx context.Context, in RiskInput) (riskQuestion, error) {
	if in.TransactionID == "" {
		return riskQuestion{}, temporal.NewNonRetryableApplicationError("risk check without a transaction id", ErrTypeInvalidRiskInput, nil)
	}
	settings, err := a.riskSettings(ctx, in)
	if err != nil {
		return riskQuestion{}, err
	}
	cfg := settings.Config.WithDefaults()
	now := time.Now()
	card, email, ip := in.CardFingerprint, in.ShopperEmail, in.ShopperIP
	if settings.Test {
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
	return riskQuestion{in: in, cfg: cfg, settings: settings, velocity: models.VelocityQuery{
		AccountID:            in.AccountID,
		ExcludeTransactionID: in.TransactionID,
		Card:                 velocityWindow(cfg.CardVelocity, card, now),
		Email:                velocityWindow(cfg.EmailVelocity, email, now),
		IP:                   velocityWindow(cfg.IPVelocity, ip, now),
		Device:               velocityWindow(cfg.DeviceVelocity, in.DeviceFingerprint, now),
		Blocklist:            in.CardFingerprint,
	}}, nil
}

// riskVerdict is CheckRisk's second half: the rules run on the record's
// counts, and the verdict kept on the order.
func (a *Activities) riskVerdict(ctx context.Context, q riskQuestion, counts models.VelocityCounts) (risk.Result, error) {
	in, cfg := q.in, q.cfg
	bin := risk.BIN(in.CardBIN)
	res := risk.Evaluate(cfg, risk.Facts{
		Amount:         in.Amount,
		Currency:       in.Currency,
		AmountLimit:    q.settings.AmountLimit,
		CardBlocked:    counts.CardBlocked,
		CardBIN:        bin,
		CardCountry:    risk.CardCountry(bin),
		BillingCountry: in.BillingCountry,
		CardOrders:     counts.Card,
		EmailOrders:    counts.Email,
		IPOrders:       counts.IP,
		DeviceOrders:   counts.Device,
	})
	if q.settings.Test {
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
	want := keptVerdict(res)
	kept, err := a.Records.KeepRiskVerdict(ctx, in.TransactionID, want)
	if err != nil {
		return risk.Result{}, fmt.Errorf("risk check: %w", err)
	}
	if kept.Action != want.Action || kept.Score != want.Score || kept.Rule != want.Rule || !slices.Equal(kept.Reasons, want.Reasons) {
		res = risk.Result{Action: kept.Action, Score: kept.Score, Rule: kept.Rule,
			Reasons: mapReasons(kept.Reasons, func(r models.RiskReason) risk.Reason { return risk.Reason{Name: r.Name, Status: r.Status} })}
	}
	return res, nil
}

// keptVerdict is a risk verdict as the order's row keeps it.
func keptVerdict(r risk.Result) models.RiskVerdict {
	return models.RiskVerdict{Action: r.Action, Score: r.Score, Rule: r.Rule,
		Reasons: mapReasons(r.Reasons, func(r risk.Reason) models.RiskReason { return models.RiskReason{Name: r.Name, Status: r.Status} })}
}

// mapReasons converts a verdict's reasons between the rules' and the
// record's types; none stays nil.
func mapReasons[From, To any](in []From, f func(From) To) []To {
	if in == nil {
		return nil
	}
	out := make([]To, 0, len(in))
	for _, r := range in {
		out = append(out, f(r))
	}
	return out
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
