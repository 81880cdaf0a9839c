package subscriptions

import (
	"net/http"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/api/apidoc"
	"github.com/paygate/paygate/internal/domain/codes"
)

// Operations describe the subscription and stored-card routes
// (api.Documented).
func (h *Handler) Operations() []apidoc.Operation {
	subCodes := api.CodeIDs(append([]codes.Code{codes.OK, codes.InvalidAmount, codes.SubscriptionNotFound, codes.SubscriptionEnded},
		api.RequestCodes...)...)
	sub := apidoc.Answer{Media: apidoc.JSON, Body: subscriptionAnswer{}, Description: "The subscription as it stands; a refusal is the ids and result_info."}
	return apidoc.WithExamples(map[string]any{
		"POST /v1/cancelsubscription": map[string]any{"merchant_id": "10086", "account_id": "10086001", "recurring_id": "R1379868670095785984", "encryption_data": "<hex sha256 of the signed fields and the sign key>"},
		"POST /v1/subscription": map[string]any{"merchant_id": "10086", "account_id": "10086001", "recurring_id": "R1379868670095785984",
			"action": "change_amount", "contract_amount": "19.99", "encryption_data": "<hex sha256 of the signed fields and the sign key>"},
		"POST /v1/token/delete": map[string]any{"merchant_id": "10086", "account_id": "10086001", "token_id": "tk_0123456789abcdef0123456789abcdef01234567", "encryption_data": "<hex sha256 of the signed fields and the sign key>"},
	}, []apidoc.Operation{
		{Method: http.MethodPost, Path: "/v1/cancelsubscription", Tag: "Subscriptions", Security: apidoc.Signed, Forms: true,
			Summary:     "End a subscription",
			Description: "No charge is made after it; ending it again answers the same. Signed fields: merchant_id, account_id, recurring_id.",
			Request:     cancelSubscriptionRequest{}, Required: []string{"merchant_id", "account_id", "recurring_id", "encryption_data"},
			Headers: api.MerchantHeaders, Codes: subCodes, Answers: api.JSONAnswers.Answers(sub)},
		{Method: http.MethodPost, Path: "/v1/subscription", Tag: "Subscriptions", Security: apidoc.Signed, Forms: true,
			Summary: "Pause, resume or change a subscription",
			Description: "action is pause, resume, change_amount (contract_amount, in the subscription's currency, from the next charge) or change_date (recurring_deduction_time, 2006-01-02 15:04:05 UTC, the next charge). " +
				"Signed fields: merchant_id, account_id, recurring_id, action, contract_amount, recurring_deduction_time.",
			Request: subscriptionRequest{}, Required: []string{"merchant_id", "account_id", "recurring_id", "action", "encryption_data"},
			Headers: api.MerchantHeaders, Codes: subCodes, Answers: api.JSONAnswers.Answers(sub)},
		{Method: http.MethodPost, Path: "/v1/token/delete", Tag: "Stored cards", Security: apidoc.Signed, Forms: true,
			Summary:     "Delete a stored card",
			Description: "The card can no longer be charged; deleting it again answers the same. Signed fields: merchant_id, account_id, token_id.",
			Request:     deleteTokenRequest{}, Required: []string{"merchant_id", "account_id", "token_id", "encryption_data"},
			Headers: api.MerchantHeaders, Codes: api.CodeIDs(append([]codes.Code{codes.OK, codes.TokenNotFound}, api.RequestCodes...)...),
			Answers: api.JSONAnswers.Answers(apidoc.Answer{Media: apidoc.JSON, Body: deleteTokenAnswer{}, Description: "The card's token and result_info."})},
	})
}
