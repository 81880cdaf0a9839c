package operations

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/order"
	"github.com/paygate/paygate/workflows"
)

// batchEntry is one entry of any batch array. Every field is text; numbers
// are taken as their literal text.
type batchEntry struct {
	TransactionID order.Text `json:"transaction_id"`
	OrderNo       order.Text `json:"order_no"`
	Currency      order.Text `json:"currency"`
	Amount        order.Text `json:"amount"`
	CaptureAmount order.Text `json:"capture_amount"` // our extension: partial capture
	ReviewFlag    order.Text `json:"review_flag"`
	RefundAmount  order.Text `json:"refund_amount"`
	RefundReason  order.Text `json:"refund_reason"`
}

func (e *batchEntry) trim() {
	api.TrimTexts(&e.TransactionID, &e.OrderNo, &e.Currency, &e.Amount, &e.CaptureAmount,
		&e.ReviewFlag, &e.RefundAmount, &e.RefundReason)
}

// batchEntries is a batch array: a JSON array, or JSON text holding one,
// which is how a form sends it and how some merchants send it inside JSON
// too.
type batchEntries = api.JSONList[batchEntry]

// maxRefundReason is the longest refund_reason the record keeps, in characters.
const maxRefundReason = 500

// textField is a named field of an entry.
type textField struct {
	name  string
	value order.Text
}

// entrySender sends a checked entry to the workflow of its order.
type entrySender func(ctx context.Context, ops OrderOps, workflowID string) (workflows.OperationResult, error)

// prepare checks an entry's fields for op and returns the operation to send,
// or the code that refuses the entry.
func (op batchOp) prepare(e *batchEntry) (entrySender, *codes.Code) {
	fail := func(c codes.Code) (entrySender, *codes.Code) { return nil, &c }
	required := []textField{
		{"transaction_id", e.TransactionID}, {"order_no", e.OrderNo}, {"currency", e.Currency}, {"amount", e.Amount},
	}
	switch op.kind {
	case batchReview:
		required = append(required, textField{"review_flag", e.ReviewFlag})
	case batchRefund:
		required = append(required, textField{"refund_amount", e.RefundAmount})
	}
	for _, f := range required {
		if f.value == "" {
			return fail(codes.MissingField.With(f.name))
		}
	}
	currency := e.Currency.String()
	if !money.KnownCurrency(currency) {
		return fail(codes.UnsupportedCurrency.With("unknown currency " + currency))
	}
	amount, err := money.Parse(e.Amount.String(), currency)
	if err != nil {
		return fail(codes.InvalidAmount.With("amount"))
	}
	ref := workflows.EntryRef{
		TransactionID: e.TransactionID.String(),
		OrderNo:       e.OrderNo.String(),
		Currency:      currency,
		Amount:        amount.Minor,
	}
	switch op.kind {
	case batchReview:
		var approve bool
		switch e.ReviewFlag {
		case "1":
			approve = true
		case "0":
		default:
			return fail(codes.InvalidField.With("review_flag must be 1 (approve) or 0 (reject)"))
		}
		req := workflows.ReviewRequest{Entry: ref, Approve: approve}
		return func(ctx context.Context, ops OrderOps, id string) (workflows.OperationResult, error) {
			return ops.Review(ctx, id, req)
		}, nil
	case batchCancel:
		req := workflows.CancelRequest{Entry: ref}
		return func(ctx context.Context, ops OrderOps, id string) (workflows.OperationResult, error) {
			return ops.Cancel(ctx, id, req)
		}, nil
	case batchRefund:
		refund, code := positiveAmount("refund_amount", e.RefundAmount, currency)
		if code != nil {
			return nil, code
		}
		if utf8.RuneCountInString(e.RefundReason.String()) > maxRefundReason {
			return fail(codes.InvalidField.With(fmt.Sprintf("refund_reason must be at most %d characters", maxRefundReason)))
		}
		req := workflows.RefundRequest{Entry: ref, RefundAmount: refund, Reason: e.RefundReason.String()}
		return func(ctx context.Context, ops OrderOps, id string) (workflows.OperationResult, error) {
			return ops.Refund(ctx, id, req)
		}, nil
	default:
		req := workflows.CaptureRequest{Entry: ref}
		if e.CaptureAmount != "" {
			partial, code := positiveAmount("capture_amount", e.CaptureAmount, currency)
			if code != nil {
				return nil, code
			}
			req.CaptureAmount = partial
		}
		return func(ctx context.Context, ops OrderOps, id string) (workflows.OperationResult, error) {
			return ops.Capture(ctx, id, req)
		}, nil
	}
}

// positiveAmount parses an amount field that must be greater than zero.
func positiveAmount(name string, value order.Text, currency string) (int64, *codes.Code) {
	a, err := money.Parse(value.String(), currency)
	if err != nil {
		c := codes.InvalidAmount.With(name)
		return 0, &c
	}
	if a.Minor <= 0 {
		c := codes.InvalidAmount.With(name + " must be greater than zero")
		return 0, &c
	}
	return a.Minor, nil
}
