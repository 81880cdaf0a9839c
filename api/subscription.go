package api

import (
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

// recurringTimeFormat writes recurring_deduction_time (UTC).
const recurringTimeFormat = "2006-01-02 15:04:05"

// setRecurring fills an answer's recurring_* fields from what the payment's
// workflow answered.
func (r *Respon) setRecurring(rec *workflows.RecurringResult) {
	if rec == nil {
		return
	}
	r.ContractName, r.RecurringID, r.RecurringDeductionPeriod = rec.ContractName, rec.RecurringID, rec.Period
	if !rec.Next.IsZero() {
		r.RecurringDeductionTime = rec.Next.UTC().Format(recurringTimeFormat)
	}
}

// SetRecurringFrom fills an answer's recurring_* fields from the record of
// the subscription the order belongs to.
func (r *Respon) SetRecurringFrom(sub *models.Subscription) {
	if sub == nil {
		return
	}
	r.ContractName, r.RecurringID, r.RecurringDeductionPeriod = sub.ContractName, sub.RecurringID, sub.Period
	if sub.NextChargeAt != nil {
		r.RecurringDeductionTime = sub.NextChargeAt.UTC().Format(recurringTimeFormat)
	}
}
