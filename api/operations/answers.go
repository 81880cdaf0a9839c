package operations

import (
	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/internal/domain/codes"
)

// The answers of one entry, per operation (interface, batch order entries).
type captureAnswer struct {
	entryHead
	CaptureAmount string `json:"capture_amount,omitempty"`
	CaptureStatus string `json:"capture_status"`
	ErrorMessage  string `json:"error_message"`
}

type reviewAnswer struct {
	entryHead
	ReviewFlag   string `json:"review_flag"`
	ReviewStatus string `json:"review_status"`
	ErrorMessage string `json:"error_message"`
}

type cancelAnswer struct {
	entryHead
	CancelStatus string `json:"cancel_status"`
	ErrorMessage string `json:"error_message"`
}

type refundAnswer struct {
	entryHead
	RefundAmount      string `json:"refund_amount"`
	RefundReason      string `json:"refund_reason"`
	RefundStatus      string `json:"refund_status"`
	RefundMessage     string `json:"refund_message"`
	RefundReference   string `json:"refund_reference"`
	RefundReferenceID string `json:"refund_reference_id"`
}

// entryHead is how every entry's answer begins: the entry as sent.
type entryHead struct {
	TransactionID string `json:"transaction_id"`
	OrderNo       string `json:"order_no"`
	Currency      string `json:"currency"`
	Amount        string `json:"amount"`
}

// entryOutcome is what happened to one entry.
type entryOutcome struct {
	status            string     // entryDone, entryRefused or entryPending
	code              codes.Code // why, for a refused entry; the result otherwise
	refundReference   string
	refundReferenceID string
}

func refusedEntry(code codes.Code) entryOutcome {
	return entryOutcome{status: api.EntryRefused, code: code}
}

// errorMessage is the entry's error_message: empty unless it was refused.
func (o entryOutcome) errorMessage() string {
	if o.status != api.EntryRefused {
		return ""
	}
	return o.code.String()
}

// answer renders an entry's outcome for op, echoing what the merchant sent.
func (op batchOp) answer(e *batchEntry, o entryOutcome) any {
	head := entryHead{TransactionID: e.TransactionID.String(), OrderNo: e.OrderNo.String(),
		Currency: e.Currency.String(), Amount: e.Amount.String()}
	switch op.kind {
	case batchReview:
		return reviewAnswer{entryHead: head, ReviewFlag: e.ReviewFlag.String(), ReviewStatus: o.status,
			ErrorMessage: o.errorMessage()}
	case batchCancel:
		return cancelAnswer{entryHead: head, CancelStatus: o.status, ErrorMessage: o.errorMessage()}
	case batchRefund:
		return refundAnswer{entryHead: head, RefundAmount: e.RefundAmount.String(),
			RefundReason: e.RefundReason.String(), RefundStatus: o.status, RefundMessage: o.code.String(),
			RefundReference: o.refundReference, RefundReferenceID: o.refundReferenceID}
	default:
		return captureAnswer{entryHead: head, CaptureAmount: e.CaptureAmount.String(), CaptureStatus: o.status,
			ErrorMessage: o.errorMessage()}
	}
}
