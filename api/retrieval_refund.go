package api

import (
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/internal/adapters/merchant"
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
	ctx := c.Request.Context()
	var req retrievalRefundRequest
	refuse := func(httpStatus int, code codes.Code) {
		c.Set(ctxResultCode, code.ID)
		c.JSON(httpStatus, retrievalRefundResponse{
			MerchantID: req.MerchantID.String(), AccountID: req.AccountID.String(),
			ReturnStatus: "0", ReturnMessage: code.String(), RefundList: []queriedRefund{},
		})
	}
	body, err := readBody(c.Request.Body)
	if errors.Is(err, errTooLarge) {
		refuse(http.StatusRequestEntityTooLarge, codes.RequestTooLarge)
		return
	}
	if err != nil {
		refuse(http.StatusBadRequest, codes.MalformedRequest.With("body could not be read"))
		return
	}
	if code := decodeBody(body, &req); code != nil {
		req = retrievalRefundRequest{}
		refuse(http.StatusOK, *code)
		return
	}
	merchantID, accountID := strings.TrimSpace(req.MerchantID.String()), strings.TrimSpace(req.AccountID.String())
	req.MerchantID, req.AccountID = order.Text(merchantID), order.Text(accountID)
	if missing := firstEmpty(map[string]string{"merchant_id": merchantID, "account_id": accountID}); missing != "" {
		refuse(http.StatusOK, codes.MissingField.With(missing))
		return
	}
	account, err := s.Accounts.Load(ctx, merchantID, accountID)
	if errors.Is(err, merchant.ErrUnknownAccount) {
		refuse(http.StatusOK, codes.UnknownMerchant)
		return
	}
	if err != nil {
		s.Logger.Error("load account", "account_id", accountID, "error", err)
		refuse(http.StatusServiceUnavailable, codes.SystemError)
		return
	}
	if _, ok := s.authenticate(c, account, strings.TrimSpace(req.EncryptionData.String()), merchantID, accountID); !ok {
		refuse(http.StatusOK, codes.BadSignature)
		return
	}
	if !account.AllowsQueryFrom(c.ClientIP()) {
		refuse(http.StatusOK, codes.IPNotAllowed.With(c.ClientIP()))
		return
	}
	trades, refundIDs := splitList(req.Trades.String()), splitList(req.RefundReferenceID.String())
	switch {
	case len(trades)+len(refundIDs) == 0:
		refuse(http.StatusOK, codes.MissingField.With("trades or refund_reference_id"))
		return
	case len(trades)+len(refundIDs) > maxQueryRefunds:
		refuse(http.StatusOK, codes.TooManyOrders.With("at most 100 trades and refund_reference_id together"))
		return
	}
	refunds, err := s.Store.FindRefunds(ctx, merchantID, accountID, trades, refundIDs)
	if err != nil {
		s.Logger.Error("query refunds", "account_id", accountID, "error", err)
		refuse(http.StatusServiceUnavailable, codes.SystemError)
		return
	}
	list := make([]queriedRefund, 0, len(refunds))
	for i := range refunds {
		list = append(list, toQueriedRefund(&refunds[i]))
	}
	c.Set(ctxResultCode, codes.OK.ID)
	c.JSON(http.StatusOK, retrievalRefundResponse{
		MerchantID: merchantID, AccountID: accountID,
		ReturnStatus: "1", ReturnMessage: "OK", RefundList: list,
	})
}

// refundStatus is the refund_status of a recorded refund: 1 succeeded, 0
// failed, -1 still pending at the acquirer.
func refundStatus(s string) string {
	switch s {
	case models.RefundSucceeded:
		return entryDone
	case models.RefundFailed:
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
		RefundStatus:      refundStatus(r.Status),
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
