package queries

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/order"
	"github.com/paygate/paygate/models"
)

// maxQueryRefunds is the most transaction ids and refund ids one refund
// query may name together.
const maxQueryRefunds = 100

type retrievalRefundRequest struct {
	MerchantID        order.Text `json:"merchant_id"`
	AccountID         order.Text `json:"account_id"`
	EncryptionData    order.Text `json:"encryption_data"`
	Trades            order.Text `json:"trades"`
	RefundReferenceID order.Text `json:"refund_reference_id"`
}

func (r *retrievalRefundRequest) Trim() {
	api.TrimTexts(&r.MerchantID, &r.AccountID, &r.EncryptionData)
}

func (r *retrievalRefundRequest) Echo() api.Echo {
	return api.Echo{MerchantID: r.MerchantID.String(), AccountID: r.AccountID.String()}
}

func (r *retrievalRefundRequest) Signature() string { return r.EncryptionData.String() }

// SignedValues are the query recipe's: the ids alone (docs/design.md §3).
func (r *retrievalRefundRequest) SignedValues() []string {
	return []string{r.MerchantID.String(), r.AccountID.String()}
}

// retrievalRefund answers the refunds of the orders named in trades and the
// refunds named in refund_reference_id, with their statuses.
func (h *Handler) retrievalRefund(c *gin.Context) {
	var req retrievalRefundRequest
	m, ok := h.Gate.AcceptMerchant(c, api.RefundQueryAnswers, &req)
	if !ok || !m.FromQueryAddress() {
		return
	}
	ctx := c.Request.Context()
	merchantID, accountID := req.MerchantID.String(), req.AccountID.String()
	trades, refundIDs := splitList(req.Trades.String()), splitList(req.RefundReferenceID.String())
	switch {
	case len(trades)+len(refundIDs) == 0:
		m.Refuse(codes.MissingField.With("trades or refund_reference_id"))
		return
	case len(trades)+len(refundIDs) > maxQueryRefunds:
		m.Refuse(codes.TooManyOrders.With("at most 100 trades and refund_reference_id together"))
		return
	}
	refunds, err := h.Gate.Records.FindRefunds(ctx, merchantID, accountID, trades, refundIDs)
	if err != nil {
		h.Gate.Logger.Error("query refunds", "account_id", accountID, "error", err)
		m.Refuse(codes.SystemError)
		return
	}
	list := make([]api.QueriedRefund, 0, len(refunds))
	foundTrade, foundID := map[string]bool{}, map[string]bool{}
	for i := range refunds {
		list = append(list, toQueriedRefund(&refunds[i]))
		foundTrade[refunds[i].TransactionID], foundID[refunds[i].RefundReferenceID] = true, true
	}
	// An id the query named and nothing answers gets an entry that says so,
	// as the order query answers an order it cannot find.
	notFound := codes.RefundNotFound.String()
	for _, t := range trades {
		if !foundTrade[t] {
			list = append(list, api.QueriedRefund{TransactionID: t, QueryResult: queryNotFound, RefundMessage: notFound})
			foundTrade[t] = true
		}
	}
	for _, id := range refundIDs {
		if !foundID[id] {
			list = append(list, api.QueriedRefund{RefundReferenceID: id, QueryResult: queryNotFound, RefundMessage: notFound})
			foundID[id] = true
		}
	}
	c.Set(api.ContextResultCode, codes.OK.ID)
	c.JSON(http.StatusOK, api.RefundQueryAnswer{
		MerchantID: merchantID, AccountID: accountID,
		ReturnStatus: "1", ReturnMessage: "OK", RefundList: list,
	})
}

// refundStatus is the refund_status of a recorded refund: 1 succeeded, 0
// failed, -1 still pending at the acquirer.
func refundStatus(s string) string {
	switch s {
	case string(models.RefundSucceeded):
		return api.EntryDone
	case string(models.RefundFailed):
		return api.EntryRefused
	default:
		return api.EntryPending
	}
}

// dateFormat is the interface's 14-digit date, always in UTC.
const dateFormat = "20060102150405"

func toQueriedRefund(r *models.Refund) api.QueriedRefund {
	q := api.QueriedRefund{
		TransactionID:     r.TransactionID,
		OrderNo:           r.OrderNo,
		Currency:          r.Currency,
		RefundAmount:      money.FromMinor(r.Amount, r.Currency).String(),
		RefundReason:      r.Reason,
		RefundStatus:      refundStatus(string(r.Status)),
		RefundReference:   r.AcquirerRef,
		RefundReferenceID: r.RefundReferenceID,
		RefundDate:        r.CreatedAt.UTC().Format(dateFormat),
		QueryResult:       queryFound,
	}
	if r.ResultCode != "" {
		q.RefundMessage = codes.Code{ID: r.ResultCode, Message: r.ResultMessage}.String()
	}
	if r.SettledAt != nil {
		q.SettledDate = r.SettledAt.UTC().Format(dateFormat)
	}
	return q
}
