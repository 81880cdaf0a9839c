// Package payoutschedule plans merchant accounts' scheduled payouts: on a
// day, for every account whose payout schedule is due, what its available
// balance lets go out, as a payout request the existing payout workflow
// runs.
package payoutschedule

import (
	"cmp"
	"context"
	"crypto/rand"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/paygate/paygate/internal/adapters/ledger"
	"github.com/paygate/paygate/internal/domain/payout"
	"github.com/paygate/paygate/internal/domain/testmode"
	"github.com/paygate/paygate/models"
)

// Planned is one scheduled payout to start.
type Planned struct {
	MerchantID       string
	AccountID        string
	RequestID        string
	TransactionID    string
	ShortReferenceID string
	Mode             string
	Instruction      payout.Instruction
}

// Skipped is an account whose schedule was due and paid nothing, and why.
type Skipped struct {
	MerchantID string
	AccountID  string
	Reason     string
}

// Plan is a day's scheduled payouts.
type Plan struct {
	Payouts []Planned
	Skipped []Skipped
}

// Balances reads an account's balance (ledger.Ledger).
type Balances interface {
	Balance(ctx context.Context, merchantID, accountID, currency string) (ledger.Balance, error)
}

// IDs makes transaction ids.
type IDs interface {
	Next() string
}

// Planner plans scheduled payouts.
type Planner struct {
	DB     *gorm.DB
	Ledger Balances
	IDs    IDs
	Now    func() time.Time
}

// Due plans day's payouts: every active account whose schedule is due pays
// out its available balance in the schedule's currency less the reserve,
// when that reaches the minimum. A payout already made for the day (its
// request id is the account's and the day's) is not planned again.
func (p *Planner) Due(ctx context.Context, day time.Time) (Plan, error) {
	day = day.UTC().Truncate(24 * time.Hour)
	var accounts []models.Account
	if err := p.DB.WithContext(ctx).Where("payout_schedule IS NOT NULL AND active").Order("merchant_id, id").
		Find(&accounts).Error; err != nil {
		return Plan{}, fmt.Errorf("accounts with payout schedules: %w", err)
	}
	var plan Plan
	for _, a := range accounts {
		s := a.PayoutSchedule
		if s == nil || !s.Due(day) {
			continue
		}
		skip := func(reason string) { plan.Skipped = append(plan.Skipped, Skipped{a.MerchantID, a.ID, reason}) }
		requestID := payout.ScheduledRequestID(a.MerchantID, a.ID, day)
		var n int64
		if err := p.DB.WithContext(ctx).Model(&models.Payout{}).Where("merchant_id = ? AND request_id = ?", a.MerchantID, requestID).
			Count(&n).Error; err != nil {
			return Plan{}, fmt.Errorf("find scheduled payout of %s/%s: %w", a.MerchantID, a.ID, err)
		}
		if n > 0 {
			skip("the day's payout is made")
			continue
		}
		b, err := p.Ledger.Balance(ctx, a.MerchantID, a.ID, s.Currency)
		if err != nil {
			return Plan{}, err
		}
		// What the merchant owes is repaid before anything is paid out.
		amount := s.Amount(b.Payable())
		if amount == 0 {
			skip(fmt.Sprintf("available %d %s, less %d owed and the reserve, is below the minimum %d", b.Available, s.Currency, b.Owed, s.Minimum))
			continue
		}
		in, err := payout.Validate(s.Request(a.MerchantID, a.ID, day, amount), day)
		if err != nil {
			skip("the schedule's payout request is refused: " + err.Error())
			continue
		}
		short, err := payout.NewShortReference(p.now(), rand.Reader)
		if err != nil {
			return Plan{}, err
		}
		plan.Payouts = append(plan.Payouts, Planned{MerchantID: a.MerchantID, AccountID: a.ID, RequestID: in.RequestID,
			TransactionID: p.IDs.Next(), ShortReferenceID: short, Mode: cmp.Or(a.Mode, testmode.Live), Instruction: in})
	}
	return plan, nil
}

func (p *Planner) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}
