package activities

import (
	"context"
	"errors"
	"log/slog"

	"go.temporal.io/sdk/temporal"

	"github.com/paygate/paygate/internal/domain/payout"
)

// ErrTypePayoutReserveFailed is PayoutOpen's error when the reservation,
// not the record, failed: the run ends FAILED for it once retries run out.
const ErrTypePayoutReserveFailed = "PayoutReserveFailed"

// PayoutOpenInput is the first step of a payout run of shape 1: its record
// at NEW, its price (unless Charges, a re-run's recorded charges, are set)
// and the reservation of its money, in one local activity.
type PayoutOpenInput struct {
	Start   PayoutRecordStartInput
	Charges *payout.Charges `json:",omitempty"`
	// Reference is the run's ledger reservation.
	Reference string
}

// PayoutOpenResult is what the first step came to: the charges, or why the
// payout cannot be priced (FailureType set, nothing reserved), or a
// reservation that was refused (Insufficient, or ReserveRefused with the
// ledger's reason).
type PayoutOpenResult struct {
	Charges        payout.Charges
	FailureType    payout.FailureType `json:",omitempty"`
	FailureReason  string             `json:",omitempty"`
	Insufficient   bool               `json:",omitempty"`
	ReserveRefused string             `json:",omitempty"`
	// ShortReferenceID is the payout's short reference when the record's
	// differs from the run's (another payout held the one drawn); the run
	// goes on with it.
	ShortReferenceID string `json:",omitempty"`
}

// PayoutOpen records a run's start, prices it, records the charges and
// reserves the money: what PayoutRecordStart, PayoutPrice, PayoutRecord and
// PayoutReserve do one by one for runs of shape 0, and in the same order.
// Each step finds its own work done on a retry, so the whole is retried as
// one. A write Postgres refuses is a RecordRejected error (the run ends, as
// when its record fails); a price or a reservation refused is a result.
func (p *PayoutActivities) PayoutOpen(ctx context.Context, in PayoutOpenInput) (PayoutOpenResult, error) {
	ref, err := p.recordStart(ctx, in.Start)
	if err != nil {
		return PayoutOpenResult{}, err
	}
	var out PayoutOpenResult
	if ref != in.Start.ShortReferenceID {
		out.ShortReferenceID = ref
	}
	if in.Charges != nil {
		out.Charges = *in.Charges
	} else {
		priced, err := p.PayoutPrice(ctx, PayoutPriceInput{Instruction: in.Start.Instruction, At: in.Start.At})
		if err != nil {
			return PayoutOpenResult{}, err
		}
		if priced.FailureType != "" {
			out.FailureType, out.FailureReason = priced.FailureType, priced.FailureReason
			return out, nil
		}
		out.Charges = priced.Charges
	}
	ch := out.Charges
	err = p.PayoutRecord(ctx, PayoutRecordInput{ID: in.Start.ID, Status: payout.StatusNew, Charges: &ch, At: in.Start.At})
	if err != nil {
		return PayoutOpenResult{}, err
	}
	reserved, err := p.PayoutReserve(ctx, PayoutReserveInput{Reference: in.Reference, MerchantID: in.Start.MerchantID,
		AccountID: in.Start.AccountID, Currency: ch.Transfer.Currency, Amount: ch.Transfer.Minor, Fee: ch.Fee.Minor})
	if reason, refused := refusal(err); refused {
		// The merchant reads this in the failure reason.
		out.ReserveRefused = reason
	} else if err != nil {
		// Retried as the whole step; if the retries run out, the payout
		// fails for it as a run of shape 0 does, rather than stay NEW.
		return PayoutOpenResult{}, temporal.NewApplicationErrorWithCause(err.Error(), ErrTypePayoutReserveFailed, err)
	}
	out.Insufficient = reserved.Insufficient
	return out, nil
}

// PayoutCloseInput is the last step of a payout run of shape 1: its
// reservation settled (the rail paid) or released (it did not), its final
// status recorded, and its notification stored for delivery.
type PayoutCloseInput struct {
	// Reference is the reservation; empty when the run reserved nothing.
	Reference string `json:",omitempty"`
	Settle    bool   `json:",omitempty"`
	Record    PayoutRecordInput
	// Notification, when set, is stored after the record.
	Notification *RecordNotificationInput `json:",omitempty"`
}

// PayoutClose settles or releases the reservation, records the outcome and
// stores the notification: what PayoutSettle or PayoutRelease, PayoutRecord
// and RecordNotification do one by one for runs of shape 0. A reservation
// the ledger refuses to close is logged and the outcome recorded all the
// same, as the steps did; each step finds its own work done on a retry.
func (p *PayoutActivities) PayoutClose(ctx context.Context, in PayoutCloseInput) error {
	if in.Reference != "" {
		var err error
		if in.Settle {
			err = p.PayoutSettle(ctx, PayoutReservationInput{Reference: in.Reference})
		} else {
			err = p.PayoutRelease(ctx, PayoutReservationInput{Reference: in.Reference})
		}
		if _, refused := refusal(err); refused {
			p.log().Error("payout reservation not closed: the ledger refused", "payout", in.Record.ID, "settle", in.Settle, "error", err)
		} else if err != nil {
			return err
		}
	}
	if err := p.PayoutRecord(ctx, in.Record); err != nil {
		return err
	}
	if n := in.Notification; n != nil {
		return p.Records.InsertNotification(ctx, n.record())
	}
	return nil
}

// refusal reports whether err is an application error that retrying cannot
// mend (a refused record or ledger posting), and its own message, without
// Temporal's wrapping.
func refusal(err error) (string, bool) {
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.NonRetryable() {
		return app.Message(), true
	}
	return "", false
}

func (p *PayoutActivities) log() *slog.Logger {
	if p.Logger != nil {
		return p.Logger
	}
	return slog.Default()
}
