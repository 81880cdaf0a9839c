package workflows

import (
	"github.com/paygate/paygate/internal/domain/status"
)

// Updates that operate on an existing order, one per batch entry.
const (
	UpdateCapture = "capture"
	UpdateCancel  = "cancel"
	UpdateReview  = "review"
	UpdateRefund  = "refund"
)

// ErrTypeEntryRefused is the application error type with which an order's
// update validator refuses an entry; the error's message says why and its
// first detail is the result code ID.
const ErrTypeEntryRefused = "EntryRefused"

// EntryRef is what every batch entry says about its order. The validator
// refuses an entry that does not match the order it is sent to.
type EntryRef struct {
	TransactionID string
	OrderNo       string
	Currency      string
	Amount        int64 // the order's amount, in minor units
}

// CaptureRequest captures an authorised order, in full or in part, once.
type CaptureRequest struct {
	Entry EntryRef
	// CaptureAmount is what to capture; 0 means the full authorised amount.
	// The rest of the authorisation is released.
	CaptureAmount int64
}

// CancelRequest voids an order's authorisation before capture.
type CancelRequest struct {
	Entry EntryRef
}

// ReviewRequest decides on an order held by risk review.
type ReviewRequest struct {
	Entry   EntryRef
	Approve bool
}

// RefundRequest refunds part or all of a paid order.
type RefundRequest struct {
	Entry        EntryRef
	RefundAmount int64
	Reason       string
}

// Per-entry statuses (docs/design.md §4).
const (
	EntryDone    = 1
	EntryRefused = 0
	EntryPending = -1
)

// OperationResult is the answer to one batch entry.
type OperationResult struct {
	Status        int // EntryDone, EntryRefused or EntryPending
	ResultCode    string
	ResultMessage string
	PaymentStatus status.Payment // the order's status after the operation

	// Refunds only.
	RefundReferenceID string // <transaction_id>-NN
	RefundReference   string // the acquirer's refund id
}
