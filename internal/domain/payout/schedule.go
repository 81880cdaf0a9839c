package payout

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/paygate/paygate/internal/domain/money"
)

// Intervals of a payout schedule.
const (
	Daily   = "daily"
	Weekly  = "weekly"
	Monthly = "monthly"
)

// Schedule pays a merchant account's available balance out on its own:
// every day, every week on Weekday (1 Monday to 7 Sunday) or every month on
// MonthDay (1 to 28), in Currency, when what may go out reaches Minimum
// (minor units). ReserveBasisPoints of the available balance are held back,
// rounded up, for refunds and disputes; since each payout holds back its
// share of what is there, the reserve rolls with the balance. Template is
// the payout request as the merchant would send it (beneficiary, method,
// reason), without the amount, the request id or the date, which each
// payout gets; the beneficiary bears the rail's fee, so what leaves the
// balance is exactly what was computed.
type Schedule struct {
	Interval           string  `json:"interval"`
	Weekday            int     `json:"weekday,omitempty"`
	MonthDay           int     `json:"month_day,omitempty"`
	Currency           string  `json:"currency"`
	Minimum            int64   `json:"minimum"`
	ReserveBasisPoints int64   `json:"reserve_basis_points"`
	Template           Request `json:"template"`
}

// ErrSchedule wraps what is wrong with a schedule.
var ErrSchedule = errors.New("invalid payout schedule")

// Validate checks the schedule, and that its template makes a valid payout
// request (with an amount, an id and today's date filled in).
func (s Schedule) Validate(merchantID, accountID string, today time.Time) error {
	switch {
	case s.Interval != Daily && s.Interval != Weekly && s.Interval != Monthly:
		return fmt.Errorf("%w: interval must be daily, weekly or monthly", ErrSchedule)
	case s.Interval == Weekly && (s.Weekday < 1 || s.Weekday > 7):
		return fmt.Errorf("%w: weekday must be 1 (Monday) to 7 (Sunday)", ErrSchedule)
	case s.Interval == Monthly && (s.MonthDay < 1 || s.MonthDay > 28):
		return fmt.Errorf("%w: month_day must be 1 to 28, a day every month has", ErrSchedule)
	case !money.KnownCurrency(s.Currency):
		return fmt.Errorf("%w: unknown currency %q", ErrSchedule, s.Currency)
	case s.Minimum < 0 || s.Minimum > money.MaxMinor:
		return fmt.Errorf("%w: minimum out of range", ErrSchedule)
	case s.ReserveBasisPoints < 0 || s.ReserveBasisPoints >= 10000:
		return fmt.Errorf("%w: reserve_basis_points must be 0 to 9999", ErrSchedule)
	}
	if _, err := Validate(s.Request(merchantID, accountID, today, max(s.Minimum, 100)), today); err != nil {
		return fmt.Errorf("%w: template: %w", ErrSchedule, err)
	}
	return nil
}

// Due reports whether the schedule pays out on day (UTC).
func (s Schedule) Due(day time.Time) bool {
	day = day.UTC()
	switch s.Interval {
	case Daily:
		return true
	case Weekly:
		wd := int(day.Weekday())
		if wd == 0 {
			wd = 7
		}
		return wd == s.Weekday
	case Monthly:
		return day.Day() == s.MonthDay
	}
	return false
}

// Amount is what a payout takes of an available balance: all of it but the
// reserve (rounded up), or nothing when that is below the minimum or not
// positive.
func (s Schedule) Amount(available int64) int64 {
	reserve := (available*s.ReserveBasisPoints + 9999) / 10000
	out := available - reserve
	if out <= 0 || out < s.Minimum {
		return 0
	}
	return out
}

// Request is the payout request of day for amount (minor units of
// Currency): the template with the account, the amount, the date, the
// beneficiary bearing the fee, and a request id made of the account and the
// day, so that one day's payout is requested once however often it is
// planned.
func (s Schedule) Request(merchantID, accountID string, day time.Time, amount int64) Request {
	r := s.Template
	r.MerchantID, r.AccountID = merchantID, accountID
	r.RequestID = ScheduledRequestID(merchantID, accountID, day)
	r.PaymentCurrency, r.SourceCurrency = s.Currency, s.Currency
	r.PaymentAmount = Text(money.FromMinor(amount, s.Currency).String())
	r.SourceAmount = ""
	r.PaymentDate = day.UTC().Format(time.DateOnly)
	r.FeePaidBy = string(FeeBeneficiary)
	r.EncryptionData = ""
	return r
}

// ScheduledRequestID is the request id of an account's scheduled payout of
// a day: a UUID (version 8, made of a hash) that no merchant's random one
// meets.
func ScheduledRequestID(merchantID, accountID string, day time.Time) string {
	sum := sha256.Sum256([]byte("paygate scheduled payout/" + merchantID + "/" + accountID + "/" + day.UTC().Format(time.DateOnly)))
	b := sum[:16]
	b[6] = b[6]&0x0f | 0x80
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
