package operations

import (
	"context"
	"errors"
	"strconv"
	"sync"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/api/flows"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

// batchConcurrency is how many orders of one batch are worked on at once.
const batchConcurrency = 8

// runBatch works the entries, a few orders at a time, and returns their
// outcomes in the entries' order. Entries naming the same transaction are
// worked one after another in array order, so that, say, two refunds of one
// order are numbered as the merchant listed them.
func (h *Handler) runBatch(ctx context.Context, ops OrderOps, op batchOp, merchantID, accountID string, entries []batchEntry) []entryOutcome {
	out := make([]entryOutcome, len(entries))
	var groups [][]int
	byTransaction := map[string]int{}
	for i := range entries {
		id := entries[i].TransactionID.String()
		if g, ok := byTransaction[id]; ok && id != "" {
			groups[g] = append(groups[g], i)
			continue
		}
		byTransaction[id] = len(groups)
		groups = append(groups, []int{i})
	}
	slots := make(chan struct{}, batchConcurrency)
	var wg sync.WaitGroup
	for _, group := range groups {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			for _, i := range group {
				out[i] = h.runEntrySafely(ctx, ops, op, merchantID, accountID, &entries[i])
			}
		})
	}
	wg.Wait()
	return out
}

// runEntrySafely keeps a panic in one entry from taking the process down:
// the entry is answered as a system error.
func (h *Handler) runEntrySafely(ctx context.Context, ops OrderOps, op batchOp, merchantID, accountID string, e *batchEntry) (o entryOutcome) {
	defer func() {
		if r := recover(); r != nil {
			h.Gate.Logger.Error("batch entry panic", "operation", op.array, "transaction_id", e.TransactionID.String(), "panic", r)
			o = refusedEntry(codes.SystemError)
		}
	}()
	return h.runEntry(ctx, ops, op, merchantID, accountID, e)
}

// runEntry checks one entry, finds its order and sends the operation to the
// order's workflow.
func (h *Handler) runEntry(ctx context.Context, ops OrderOps, op batchOp, merchantID, accountID string, e *batchEntry) entryOutcome {
	send, code := op.prepare(e)
	if code != nil {
		return refusedEntry(*code)
	}
	o, err := h.Gate.Records.FindOrderByTransaction(ctx, merchantID, accountID, e.TransactionID.String())
	if err != nil {
		return h.entryFailed(op, e, err)
	}
	if op.kind == batchRefund {
		// The order does not know of its disputes; their record does.
		d, err := h.Gate.Records.RefundBlockingDispute(ctx, o.TransactionID)
		if err != nil {
			return h.entryFailed(op, e, err)
		}
		if d != nil {
			return refusedEntry(codes.RefundDisputed.With(d.Stage + " " + d.Status))
		}
	}
	workflowID := o.WorkflowID
	if workflowID == "" {
		workflowID = workflows.OrderWorkflowID(o.MerchantID, o.AccountID, o.OrderNo)
	}
	res, err := send(ctx, ops, workflowID)
	if err != nil {
		return h.entryFailed(op, e, err)
	}
	return resultOutcome(res)
}

// resultOutcome turns the workflow's answer into the entry's outcome.
func resultOutcome(res workflows.OperationResult) entryOutcome {
	o := entryOutcome{
		status:            strconv.Itoa(res.Status),
		code:              codes.Code{ID: res.ResultCode, Message: res.ResultMessage},
		refundReference:   res.RefundReference,
		refundReferenceID: res.RefundReferenceID,
	}
	if res.ResultCode == "" {
		// Every answer carries a code; keep the message well-formed if not.
		o.code = codes.OK
		if res.Status == workflows.EntryRefused {
			o.code = codes.SystemError
		}
	}
	return o
}

// entryFailed answers an entry whose lookup or operation failed, logging
// what the merchant cannot act on.
func (h *Handler) entryFailed(op batchOp, e *batchEntry, err error) entryOutcome {
	o := entryErrorOutcome(err)
	switch {
	case o.code.Is(codes.SystemError):
		h.Gate.Logger.Error("batch entry failed", "operation", op.array, "transaction_id", e.TransactionID.String(), "error", err)
	case o.status == api.EntryPending:
		h.Gate.Logger.Warn("batch entry outcome not known in time", "operation", op.array, "transaction_id", e.TransactionID.String(), "error", err)
	}
	return o
}

// entryErrorOutcome maps the error of an entry's lookup or operation to the
// entry's outcome.
func entryErrorOutcome(err error) entryOutcome {
	var refused *flows.ErrEntryRefused
	switch {
	case errors.As(err, &refused):
		return refusedEntry(codes.Code{ID: refused.Code, Message: refused.Message})
	case errors.Is(err, models.ErrNotFound):
		return refusedEntry(codes.OrderNotFound)
	case errors.Is(err, flows.ErrOutcomeUnknown):
		// Sent and maybe done: the merchant must not send it again blindly
		// (a refund would be a second refund) but look the order up.
		return entryOutcome{status: api.EntryPending, code: codes.AcquirerTimeout}
	default:
		return refusedEntry(codes.SystemError)
	}
}
