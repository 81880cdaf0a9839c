package api

import (
	"context"
	"errors"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/api/flows"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/workflows"
)

// What a compatible signature, once seen, can do is bounded on the
// accounts that keep that scheme for operations that move money
// (docs/decisions.md, "Strong signatures for money"): refunds signed with
// encryption_data count against a daily limit, and the same signature with
// other content is reported to ops.

// cappedRefunds sends refunds through OrderOps only while the account's
// daily limit for compatibly signed refunds holds. A refund the order
// refused gives its amount back; one done, pending or unanswered keeps it.
type cappedRefunds struct {
	OrderOps
	s         *Server
	accountID string
	limit     int64
}

func (o *cappedRefunds) Refund(ctx context.Context, workflowID string, req workflows.RefundRequest) (workflows.OperationResult, error) {
	if o.s.Records == nil {
		return workflows.OperationResult{}, errors.New("compatible refund limit: no database")
	}
	day, currency, amount := o.s.Now().UTC(), req.Entry.Currency, req.RefundAmount
	ok, err := o.s.Records.ReserveCompatibleRefund(ctx, o.accountID, day, currency, amount, o.limit)
	if err != nil {
		return workflows.OperationResult{}, err
	}
	if !ok {
		return workflows.OperationResult{}, &flows.ErrEntryRefused{Code: codes.CompatibleRefundLimit.ID, Message: codes.CompatibleRefundLimit.Message}
	}
	res, err := o.OrderOps.Refund(ctx, workflowID, req)
	var refused *flows.ErrEntryRefused
	if errors.As(err, &refused) || err == nil && res.Status == workflows.EntryRefused {
		if rerr := o.s.Records.ReleaseCompatibleRefund(context.WithoutCancel(ctx), o.accountID, day, currency, amount); rerr != nil {
			o.s.Logger.Error("release compatible refund", "account_id", o.accountID, "error", rerr)
		}
	}
	return res, err
}

// orderOpsFor is the OrderOps a batch of m's runs through.
func (s *Server) orderOpsFor(c *gin.Context, m *Merchant, op batchOp) OrderOps {
	limit := m.account.CompatibleRefundDailyLimit
	if op.kind != batchRefund || c.GetBool(ctxStrong) || limit <= 0 {
		return s.Ops
	}
	return &cappedRefunds{OrderOps: s.Ops, s: s, accountID: m.account.ID, limit: limit}
}

// signatureReuse is counted by metrics that can.
type signatureReuse interface{ SignatureReused(operation string) }

// noteSignatureUse remembers a compatible signature of an operation that
// moves money with the body it came with, and reports it to ops when it
// comes again with another body. It never refuses: the merchant's capture
// and later refund of one order carry the same signature.
func (s *Server) noteSignatureUse(c *gin.Context, accountID, sig string, body []byte) {
	if s.Records == nil || sig == "" {
		return
	}
	op, fingerprint := c.FullPath(), s.bodyFingerprint(body)
	use, err := s.Records.SignatureSeen(c.Request.Context(), accountID, s.signatureHash(sig), op, fingerprint, s.Now())
	if err != nil {
		s.Logger.Error("record signature use", "account_id", accountID, "error", err)
		return
	}
	if use.BodyFingerprint == fingerprint {
		return
	}
	s.Logger.Warn("a compatible signature seen again with other content", "account_id", accountID,
		"operation", op, "first_operation", use.Operation, "first_seen", use.FirstSeen, "other_content_uses", use.OtherContentUses)
	if m, ok := s.Metrics.(signatureReuse); ok {
		m.SignatureReused(op)
	}
}

// signatureHash names a signature in the record without keeping it. The
// signature is hex, checked whatever its case, so it is named in one case:
// the same signature upper-cased is the same signature.
func (s *Server) signatureHash(sig string) string {
	return s.keyedHex("paygate signature uses", []byte(strings.ToLower(strings.TrimSpace(sig))))
}
