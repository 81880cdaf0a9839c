package operations

import (
	"context"
	"errors"

	"github.com/gin-gonic/gin"
	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/api/flows"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/workflows"
)

// What a compatible signature, once seen, can do is bounded on the
// accounts that keep that scheme for operations that move money
// (docs/decisions.md, "Strong signatures for money"): refunds signed with
// encryption_data count against a daily limit (here), and the same
// signature with other content is reported to ops (api.noteSignatureUse).

// cappedRefunds sends refunds through OrderOps only while the account's
// daily limit for compatibly signed refunds holds. A refund the order
// refused gives its amount back; one done, pending or unanswered keeps it.
type cappedRefunds struct {
	OrderOps
	gate      *api.Server
	accountID string
	limit     int64
}

func (o *cappedRefunds) Refund(ctx context.Context, workflowID string, req workflows.RefundRequest) (workflows.OperationResult, error) {
	if o.gate.Records == nil {
		return workflows.OperationResult{}, errors.New("compatible refund limit: no database")
	}
	day, currency, amount := o.gate.Now().UTC(), req.Entry.Currency, req.RefundAmount
	ok, err := o.gate.Records.ReserveCompatibleRefund(ctx, o.accountID, day, currency, amount, o.limit)
	if err != nil {
		return workflows.OperationResult{}, err
	}
	if !ok {
		return workflows.OperationResult{}, &flows.ErrEntryRefused{Code: codes.CompatibleRefundLimit.ID, Message: codes.CompatibleRefundLimit.Message}
	}
	res, err := o.OrderOps.Refund(ctx, workflowID, req)
	var refused *flows.ErrEntryRefused
	if errors.As(err, &refused) || err == nil && res.Status == workflows.EntryRefused {
		if rerr := o.gate.Records.ReleaseCompatibleRefund(context.WithoutCancel(ctx), o.accountID, day, currency, amount); rerr != nil {
			o.gate.Logger.Error("release compatible refund", "account_id", o.accountID, "error", rerr)
		}
	}
	return res, err
}

// orderOpsFor is the OrderOps a batch of m's runs through.
func (h *Handler) orderOpsFor(c *gin.Context, m *api.Merchant, op batchOp) OrderOps {
	limit := m.Account().CompatibleRefundDailyLimit
	if op.kind != batchRefund || api.StrongSigned(c) || limit <= 0 {
		return h.Ops
	}
	return &cappedRefunds{OrderOps: h.Ops, gate: h.Gate, accountID: m.Account().ID, limit: limit}
}
