package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

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

func (r *retrievalRefundRequest) Trim() { TrimTexts(&r.MerchantID, &r.AccountID, &r.EncryptionData) }

func (r *retrievalRefundRequest) Echo() Echo {
	return Echo{MerchantID: r.MerchantID.String(), AccountID: r.AccountID.String()}
}

func (r *retrievalRefundRequest) Signature() string { return r.EncryptionData.String() }

// SignedValues are the query recipe's: the ids alone (docs/design.md §3).
func (r *retrievalRefundRequest) SignedValues() []string {
	return []string{r.MerchantID.String(), r.AccountID.String()}
}

type retrievalRefundResponse struct {
	MerchantID    string          `json:"merchant_id"`
	AccountID     string          `json:"account_id"`
	ReturnStatus  string          `json:"return_status"`
	ReturnMessage string          `json:"return_message"`
	RefundList    []queriedRefund `json:"refund_list"`
}

type queriedRefund struct {
	TransactionID     string `json:"transaction_id"`
	OrderNo           string `json:"order_no"`
	Currency          string `json:"currency"`
	RefundAmount      string `json:"refund_amount"`
	RefundReason      string `json:"refund_reason"`
	RefundStatus      string `json:"refund_status"`
	RefundMessage     string `json:"refund_message"`
	RefundReference   string `json:"refund_reference"`
	RefundReferenceID string `json:"refund_reference_id"`
	RefundDate        string `json:"refund_date"`
	SettledDate       string `json:"settled_date"`
}

// retrievalRefund answers the refunds of the orders named in trades and the
// refunds named in refund_reference_id, with their statuses.
func (s *Server) retrievalRefund(c *gin.Context) {
	var req retrievalRefundRequest
	m, ok := s.AcceptMerchant(c, refundQueryAnswers, &req)
	if !ok || !m.fromQueryAddress() {
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
	refunds, err := s.Records.FindRefunds(ctx, merchantID, accountID, trades, refundIDs)
	if err != nil {
		s.Logger.Error("query refunds", "account_id", accountID, "error", err)
		m.Refuse(codes.SystemError)
		return
	}
	list := make([]queriedRefund, 0, len(refunds))
	for i := range refunds {
		list = append(list, toQueriedRefund(&refunds[i]))
	}
	c.Set(ContextResultCode, codes.OK.ID)
	c.JSON(http.StatusOK, retrievalRefundResponse{
		MerchantID: merchantID, AccountID: accountID,
		ReturnStatus: "1", ReturnMessage: "OK", RefundList: list,
	})
}

// refundStatus is the refund_status of a recorded refund: 1 succeeded, 0
// failed, -1 still pending at the acquirer.
func refundStatus(s string) string {
	switch s {
	case string(models.RefundSucceeded):
		return entryDone
	case string(models.RefundFailed):
		return entryRefused
	default:
		return entryPending
	}
}

// dateFormat is the interface's 14-digit date, always in UTC.
const dateFormat = "20060102150405"

func toQueriedRefund(r *models.Refund) queriedRefund {
	q := queriedRefund{
		TransactionID:     r.TransactionID,
		OrderNo:           r.OrderNo,
		Currency:          r.Currency,
		RefundAmount:      money.FromMinor(r.Amount, r.Currency).String(),
		RefundReason:      r.Reason,
		RefundStatus:      refundStatus(string(r.Status)),
		RefundReference:   r.AcquirerRef,
		RefundReferenceID: r.RefundReferenceID,
		RefundDate:        r.CreatedAt.UTC().Format(dateFormat),
	}
	if r.ResultCode != "" {
		q.RefundMessage = codes.Code{ID: r.ResultCode, Message: r.ResultMessage}.String()
	}
	if r.SettledAt != nil {
		q.SettledDate = r.SettledAt.UTC().Format(dateFormat)
	}
	return q
}
