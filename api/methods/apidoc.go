package methods

import (
	"net/http"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/api/apidoc"
	"github.com/paygate/paygate/internal/domain/codes"
)

// Operations describe the optimise route (api.Documented).
func (h *Handler) Operations() []apidoc.Operation {
	return apidoc.WithExamples(map[string]any{
		"POST /v1/optimise": map[string]any{"merchant_id": "10086", "account_id": "10086001", "request_id": "OPT-1", "currency": "BRL", "amount": "100.00",
			"shopper_email": "ada@example.com", "country": "BR", "encryption_data": "<hex sha256 of the signed fields and the sign key>"},
	}, []apidoc.Operation{
		{Method: http.MethodPost, Path: "/v1/optimise", Tag: "Payments", Security: apidoc.Signed, Forms: true,
			Summary:     "The payment methods to offer a shopper, best first",
			Description: "Ranks the account's payment methods for the amount, currency, country and shopper by their recent approval rates. Signed fields: merchant_id, account_id, request_id, currency, amount, shopper_email.",
			Request:     optimiseRequest{}, Required: []string{"merchant_id", "account_id", "request_id", "currency", "amount", "encryption_data"},
			Headers: api.MerchantHeaders,
			Codes:   api.CodeIDs(append([]codes.Code{codes.OK, codes.InvalidAmount, codes.UnsupportedCurrency}, api.RequestCodes...)...),
			Answers: api.OptimiseAnswers.Answers(apidoc.Answer{Media: apidoc.JSON, Body: api.OptimiseAnswer{}, Description: "The methods, best first."})},
	})
}
