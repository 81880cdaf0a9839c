package payout

import (
	"errors"
	"testing"
	"time"
)

func scheduleTemplate() Request {
	r := validRequest()
	r.MerchantID, r.AccountID, r.RequestID, r.PaymentAmount, r.PaymentDate = "", "", "", "", ""
	r.PaymentCurrency, r.SourceCurrency, r.FeePaidBy = "", "", ""
	return r
}

// TestScheduleDue: daily every day, weekly on its weekday, monthly on its
// day of the month.
func TestScheduleDue(t *testing.T) {
	thu := time.Date(2026, 11, 26, 7, 0, 0, 0, time.UTC) // a Thursday, the 26th
	tests := []struct {
		name string
		s    Schedule
		day  time.Time
		want bool
	}{
		{"daily", Schedule{Interval: Daily}, thu, true},
		{"weekly on Thursdays", Schedule{Interval: Weekly, Weekday: 4}, thu, true},
		{"weekly on Mondays", Schedule{Interval: Weekly, Weekday: 1}, thu, false},
		{"weekly on Sundays, a Sunday", Schedule{Interval: Weekly, Weekday: 7}, thu.AddDate(0, 0, 3), true},
		{"monthly on the 26th", Schedule{Interval: Monthly, MonthDay: 26}, thu, true},
		{"monthly on the 1st", Schedule{Interval: Monthly, MonthDay: 1}, thu, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.s.Due(tc.day); got != tc.want {
				t.Errorf("Due(%s) = %t, want %t", tc.day.Format(time.DateOnly), got, tc.want)
			}
		})
	}
}

// TestScheduleAmount: the available balance less the reserve rounded up,
// or nothing below the minimum.
func TestScheduleAmount(t *testing.T) {
	tests := []struct {
		name      string
		minimum   int64
		reserveBP int64
		available int64
		want      int64
	}{
		{"no reserve, no minimum", 0, 0, 12345, 12345},
		{"10% held back", 0, 1000, 100000, 90000},
		{"the reserve rounds up", 0, 1000, 12345, 11110},
		{"at the minimum", 90000, 1000, 100000, 90000},
		{"below the minimum", 90001, 1000, 100000, 0},
		{"nothing available", 0, 0, 0, 0},
		{"a cent, all of it reserved", 0, 1, 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := Schedule{Minimum: tc.minimum, ReserveBasisPoints: tc.reserveBP}
			if got := s.Amount(tc.available); got != tc.want {
				t.Errorf("Amount(%d) = %d, want %d", tc.available, got, tc.want)
			}
		})
	}
}

// TestScheduleValidate: what a schedule must be, and that its payout request
// is one the API would take.
func TestScheduleValidate(t *testing.T) {
	today := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	ok := Schedule{Interval: Weekly, Weekday: 5, Currency: "EUR", Minimum: 10000, ReserveBasisPoints: 500, Template: scheduleTemplate()}
	tests := []struct {
		name   string
		change func(*Schedule)
		ok     bool
	}{
		{"valid", func(*Schedule) {}, true},
		{"an unknown interval", func(s *Schedule) { s.Interval = "hourly" }, false},
		{"weekday 0", func(s *Schedule) { s.Weekday = 0 }, false},
		{"monthly on the 29th", func(s *Schedule) { s.Interval, s.MonthDay = Monthly, 29 }, false},
		{"an unknown currency", func(s *Schedule) { s.Currency = "EUX" }, false},
		{"a negative minimum", func(s *Schedule) { s.Minimum = -1 }, false},
		{"all held back", func(s *Schedule) { s.ReserveBasisPoints = 10000 }, false},
		{"a template without a beneficiary", func(s *Schedule) { s.Template.Beneficiary = nil; s.Template.BeneficiaryID = "" }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := ok
			s.Template = scheduleTemplate()
			tc.change(&s)
			err := s.Validate("10086", "10086001", today)
			if (err == nil) != tc.ok || err != nil && !errors.Is(err, ErrSchedule) {
				t.Errorf("Validate() = %v, want ok %t", err, tc.ok)
			}
		})
	}
}

// TestScheduledRequest: a day's payout request is valid, for the amount,
// with the beneficiary bearing the fee, under one request id per account
// and day.
func TestScheduledRequest(t *testing.T) {
	day := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	s := Schedule{Interval: Daily, Currency: "EUR", Template: scheduleTemplate()}
	in, err := Validate(s.Request("10086", "10086001", day, 123456), day)
	if err != nil {
		t.Fatal(err)
	}
	if in.PaymentAmount.Minor != 123456 || in.PaymentAmount.Currency != "EUR" || in.SourceCurrency != "EUR" ||
		in.FeePaidBy != FeeBeneficiary || !in.PaymentDate.Equal(day) {
		t.Errorf("instruction %+v", in)
	}
	if a, b := ScheduledRequestID("10086", "10086001", day), ScheduledRequestID("10086", "10086001", day); a != b || a != in.RequestID {
		t.Errorf("request ids %s, %s, %s: want one", a, b, in.RequestID)
	}
	if ScheduledRequestID("10086", "10086001", day.AddDate(0, 0, 1)) == in.RequestID ||
		ScheduledRequestID("10086", "10086002", day) == in.RequestID {
		t.Error("another day or account has the same request id")
	}
}
