package queries

import (
	"net/http"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/api/apidoc"
	"github.com/paygate/paygate/internal/domain/codes"
)

// Operations describe the query routes (api.Documented).
func (h *Handler) Operations() []apidoc.Operation {
	queryCodes := api.CodeIDs(append([]codes.Code{codes.OK, codes.IPNotAllowed, codes.TooManyOrders}, api.RequestCodes...)...)
	return apidoc.WithExamples(map[string]any{
		"POST /v1/retrievalTrans":  map[string]any{"merchant_id": "10086", "account_id": "10086001", "trades": "1379868670095785984", "encryption_data": "<hex sha256 of the signed fields and the sign key>"},
		"POST /v1/retrievalRefund": map[string]any{"merchant_id": "10086", "account_id": "10086001", "trades": "1379868670095785984", "encryption_data": "<hex sha256 of the signed fields and the sign key>"},
	}, []apidoc.Operation{
		{Method: http.MethodPost, Path: "/v1/retrievalTrans", Tag: "Queries", Security: apidoc.Signed, Forms: true,
			Summary: "Query orders",
			Description: "From the account's registered query addresses only. Names orders (orders: order numbers, trades: transaction ids, comma-separated, at most 100 together); or a window (start_time and end_time, yyyyMMddHHmmss UTC) paged by cursor; or neither: the orders as they last changed, from cursor on (next_cursor of the last answer). " +
				"Signed fields: merchant_id, account_id.",
			Request: retrievalRequest{}, Required: []string{"merchant_id", "account_id", "encryption_data"},
			Headers: api.MerchantHeaders, Codes: queryCodes,
			Answers: api.QueryAnswers.Answers(apidoc.Answer{Media: apidoc.JSON, Body: api.QueryAnswer{}, Description: "The orders found."})},
		{Method: http.MethodPost, Path: "/v1/retrievalRefund", Tag: "Queries", Security: apidoc.Signed, Forms: true,
			Summary:     "Query refunds",
			Description: "The refunds of orders (trades) or by their refund_reference_id, comma-separated, from the account's registered query addresses only. Signed fields: merchant_id, account_id.",
			Request:     retrievalRefundRequest{}, Required: []string{"merchant_id", "account_id", "encryption_data"},
			Headers: api.MerchantHeaders, Codes: queryCodes,
			Answers: api.RefundQueryAnswers.Answers(apidoc.Answer{Media: apidoc.JSON, Body: api.RefundQueryAnswer{}, Description: "The refunds found."})},
	})
}
