package payoutschedule_test

import (
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/dev/testdb"

	"gorm.io/gorm"

	"github.com/paygate/paygate/internal/adapters/ledger"
	"github.com/paygate/paygate/internal/adapters/payoutschedule"
	"github.com/paygate/paygate/internal/domain/payout"
	"github.com/paygate/paygate/models"
)

func testDB(t *testing.T) *gorm.DB { return testdb.Open(t, "paygate_sched_") }

type seqIDs struct{ n int }

func (s *seqIDs) Next() string { s.n++; return "900000000000000000" + string(rune('0'+s.n)) }

func template() payout.Request {
	return payout.Request{PaymentMethod: "SWIFT", SwiftChargeOption: "SHARED", FundSource: "DepositAccount",
		Beneficiary: &payout.Beneficiary{EntityType: "COMPANY", CompanyName: "Muller GmbH",
			Address: payout.BeneficiaryAddress{City: "Berlin", CountryCode: "DE"},
			BankDetails: payout.BankDetails{AccountName: "Muller GmbH", BankCountryCode: "DE", IBAN: "DE89370400440532013000",
				SwiftCode: "COBADEFFXXX", AccountCurrency: "EUR"}},
		Payer: &payout.Payer{EntityType: "COMPANY", CompanyName: "Demo Ltd", Address: payout.PayerAddress{CountryCode: "US"}}}
}

// TestDue: on a Thursday, a daily schedule with 1,000.00 available and 10%
// held back pays 900.00; a Monday schedule is not due; one whose balance is
// below its minimum, one whose payout of the day is made and one inactive
// account pay nothing, each skipped with why.
func TestDue(t *testing.T) {
	db := testDB(t)
	ctx := t.Context()
	thursday := time.Date(2026, 11, 26, 7, 0, 0, 0, time.UTC)
	l := ledger.New(db)
	accounts := []struct {
		id        string
		sched     *payout.Schedule
		active    bool
		available int64
	}{
		{"daily", &payout.Schedule{Interval: payout.Daily, Currency: "EUR", Minimum: 100_00, ReserveBasisPoints: 1000}, true, 1_000_00},
		{"monday", &payout.Schedule{Interval: payout.Weekly, Weekday: 1, Currency: "EUR"}, true, 1_000_00},
		{"short", &payout.Schedule{Interval: payout.Daily, Currency: "EUR", Minimum: 100_00}, true, 50_00},
		{"made", &payout.Schedule{Interval: payout.Daily, Currency: "EUR"}, true, 1_000_00},
		{"inactive", &payout.Schedule{Interval: payout.Daily, Currency: "EUR"}, false, 1_000_00},
		{"none", nil, true, 1_000_00},
	}
	if err := db.Create(&models.Merchant{ID: "M", Name: "M"}).Error; err != nil {
		t.Fatal(err)
	}
	for _, a := range accounts {
		if a.sched != nil {
			a.sched.Template = template()
		}
		row := models.Account{ID: a.id, MerchantID: "M", Name: a.id, SignKeyID: "k", SignKeySealed: []byte{1}, AllowedQueryIPs: []string{},
			Currencies: []string{"EUR"}, AmountLimits: map[string]int64{}, PayoutSchedule: a.sched}
		if err := db.Create(&row).Error; err != nil {
			t.Fatal(err)
		}
		if !a.active {
			if err := db.Model(&models.Account{}).Where("id = ?", a.id).Update("active", false).Error; err != nil {
				t.Fatal(err)
			}
		}
		if _, err := l.TopUp(ctx, ledger.TopUp{Reference: "t/" + a.id, MerchantID: "M", AccountID: a.id, Currency: "EUR", Amount: a.available}); err != nil {
			t.Fatal(err)
		}
	}
	made := models.Payout{ID: "payout/M/x", MerchantID: "M", AccountID: "made", RequestID: payout.ScheduledRequestID("M", "made", thursday),
		TransactionID: "8000000000000000001", ShortReferenceID: "P261126ABCDEFG", Status: "COMPLETED", PaymentCurrency: "EUR",
		SourceCurrency: "EUR", Request: []byte("{}")}
	if err := db.Create(&made).Error; err != nil {
		t.Fatal(err)
	}
	p := &payoutschedule.Planner{DB: db, Ledger: l, IDs: &seqIDs{}}
	plan, err := p.Due(ctx, thursday)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Payouts) != 1 || plan.Payouts[0].AccountID != "daily" || plan.Payouts[0].Instruction.PaymentAmount.Minor != 900_00 ||
		plan.Payouts[0].Instruction.FeePaidBy != payout.FeeBeneficiary || plan.Payouts[0].RequestID != payout.ScheduledRequestID("M", "daily", thursday) {
		t.Errorf("payouts %+v, want 900.00 of the daily account", plan.Payouts)
	}
	skipped := map[string]string{}
	for _, s := range plan.Skipped {
		skipped[s.AccountID] = s.Reason
	}
	if len(skipped) != 2 || !strings.Contains(skipped["short"], "below the minimum") || skipped["made"] != "the day's payout is made" {
		t.Errorf("skipped %v", skipped)
	}
}

// TestDuePaysWhatIsNotOwed: a merchant owing 300.00 beside a deposit of
// 1,000.00 (a dispute's debt and a top-up posted before top-ups and
// releases repaid debts, 2026-11-29) gets 700.00: what it owes is repaid
// before anything is paid out.
func TestDuePaysWhatIsNotOwed(t *testing.T) {
	db := testDB(t)
	ctx := t.Context()
	thursday := time.Date(2026, 11, 26, 7, 0, 0, 0, time.UTC)
	l := ledger.New(db)
	if err := db.Create(&models.Merchant{ID: "M", Name: "M"}).Error; err != nil {
		t.Fatal(err)
	}
	sched := &payout.Schedule{Interval: payout.Daily, Currency: "EUR", Template: template()}
	if err := db.Create(&models.Account{ID: "owing", MerchantID: "M", Name: "owing", SignKeyID: "k", SignKeySealed: []byte{1},
		AllowedQueryIPs: []string{}, Currencies: []string{"EUR"}, AmountLimits: map[string]int64{}, PayoutSchedule: sched}).Error; err != nil {
		t.Fatal(err)
	}
	if _, err := l.TopUp(ctx, ledger.TopUp{Reference: "t/owing", MerchantID: "M", AccountID: "owing", Currency: "EUR", Amount: 1_000_00}); err != nil {
		t.Fatal(err)
	}
	if err := db.Model(&models.LedgerAccount{}).Where("merchant_id = ? AND account_id = ? AND currency = ? AND kind = ?", "M", "owing", "EUR",
		models.LedgerDebt).Update("balance", -300_00).Error; err != nil {
		t.Fatal(err)
	}
	if b, err := l.Balance(ctx, "M", "owing", "EUR"); err != nil || b.Available != 1_000_00 || b.Owed != 300_00 || b.Payable() != 700_00 {
		t.Fatalf("Balance() = %+v, %v; want 1,000.00 available, 300.00 owed, 700.00 payable", b, err)
	}
	plan, err := (&payoutschedule.Planner{DB: db, Ledger: l, IDs: &seqIDs{}}).Due(ctx, thursday)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Payouts) != 1 || plan.Payouts[0].Instruction.PaymentAmount.Minor != 700_00 {
		t.Errorf("payouts %+v, want one of 700.00", plan.Payouts)
	}
}
