package payouts

import (
	"net/http"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/api/apidoc"
	"github.com/paygate/paygate/internal/adapters/rail"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/payout"
)

// payoutAnswerSchema is the payout's answer (PayoutAnswer): the request as
// recorded, without its signature, and the payout's state.
func payoutAnswerSchema() apidoc.Schema {
	sch := api.DocSchemas.Of(payout.Request{}, false)
	props := sch["properties"].(apidoc.Schema)
	str := func(d string) apidoc.Schema { return apidoc.Schema{"type": "string", "description": d} }
	for name, d := range map[string]string{
		"request_id":                  "The merchant's id of the payout.",
		"amount_beneficiary_receives": "What the beneficiary receives, in payment_currency.",
		"amount_payer_pays":           "What the deposit account pays, fee included, in fee_currency.",
		"fee_amount":                  "The fee.",
		"fee_currency":                "The deposit account's currency.",
		"created_at":                  "When the payout was asked for (UTC, 2006-01-02T15:04:05-07:00).",
		"last_updated_at":             "When it last moved (UTC).",
		"short_reference_id":          "The rail's short reference.",
		"transaction_id":              "The gateway's id of the payout.",
		"payer_id":                    "The deposit account that pays.",
		"status":                      "pending, processing, completed, failed or cancelled.",
		"failure_type":                "Why it failed, when it did.",
		"failure_reason":              "The rail's words, when it failed.",
		"encryption_data":             "Signed over merchant_id, account_id, request_id, payment_currency and the payment amount (upper-case hex) when the request proved the key.",
	} {
		props[name] = str(d)
	}
	for _, n := range []string{"amount_beneficiary_receives", "amount_payer_pays", "fee_amount"} {
		props[n] = apidoc.Schema{"type": []any{"number", "string"}, "description": props[n].(apidoc.Schema)["description"]}
	}
	return sch
}

// Operations describe the payout routes (api.Documented).
func (h *Handler) Operations() []apidoc.Operation {
	answer := apidoc.Answer{Media: apidoc.JSON, Schema: payoutAnswerSchema(), Description: "The payout as it stands; a refusal is the ids and result_info."}
	payoutCodes := api.CodeIDs(append([]codes.Code{codes.OK, codes.InvalidAmount, codes.UnsupportedCurrency,
		codes.PayoutMismatch, codes.PayoutNotFound, codes.LiveAccountSimulator}, api.RequestCodes...)...)
	callback := apidoc.Answer{Media: apidoc.JSON, Schema: apidoc.Schema{"type": "object",
		"properties": apidoc.Schema{"ok": apidoc.Schema{"type": "boolean"}, "error": apidoc.Schema{"type": "string"}}}}
	callbackAnswers := apidoc.Described(callback, map[int]string{
		http.StatusOK:                 "Taken: the gateway reads the transfer from the rail before it acts.",
		http.StatusBadRequest:         "Unreadable or malformed.",
		http.StatusUnauthorized:       "Bad signature.",
		http.StatusNotFound:           "Rail callbacks are not configured, or the payout is unknown.",
		http.StatusServiceUnavailable: "Not taken now: send it again.",
	})
	return apidoc.WithExamples(map[string]any{
		"POST /v1/payout": map[string]any{"merchant_id": "10086", "account_id": "10086001", "request_id": "3f2c8a9e-1b4d-4c6a-9e2f-7a1b2c3d4e5f", "payment_currency": "USD",
			"payment_amount": "100.00", "payment_method": "SWIFT", "swift_charge_option": "SHARED", "fee_paid_by": "PAYER", "notify_url": "https://shop.example/notify",
			"beneficiary": map[string]any{"entity_type": "PERSONAL", "first_name": "Ada", "last_name": "Lovelace",
				"address": map[string]any{"street_address": "1 High Street", "city": "London", "postcode": "EC1A 1AA", "country_code": "GB"},
				"bank_details": map[string]any{"account_name": "Ada Lovelace", "bank_country_code": "GB", "iban": "GB33BUKB20201555555555",
					"swift_code": "BUKBGB22", "account_currency": "USD"}},
			"payer": map[string]any{"entity_type": "COMPANY", "company_name": "Demo Shop Ltd",
				"address": map[string]any{"street_address": "2 Market Square", "city": "London", "postcode": "EC2A 2BB", "country_code": "GB"}},
			"encryption_data": "<hex sha256 of the signed fields and the sign key>"},
		"POST /v1/payout/query":         map[string]any{"merchant_id": "10086", "account_id": "10086001", "request_id": "3f2c8a9e-1b4d-4c6a-9e2f-7a1b2c3d4e5f", "encryption_data": "<hex sha256 of the signed fields and the sign key>"},
		"POST /v1/payout/rail-callback": map[string]any{"transfer_id": "tr_1", "idempotency_key": "payout/1379868670095785984/r01"},
	}, []apidoc.Operation{
		{Method: http.MethodPost, Path: "/v1/payout", Tag: "Payouts", Security: apidoc.Signed, Forms: true,
			Summary:     "Pay money out to a beneficiary's bank account",
			Description: "Quotes the rate and the fee, reserves the amount on the account's deposit balance and sends the transfer to the rail; the answer waits up to 5 s for the outcome, then says where it stands (query it, or wait for the notification). The same request_id with the same content answers the same payout; with other content, I0022.",
			Request:     payout.Request{}, Required: []string{"merchant_id", "account_id", "request_id", "payment_currency", "payment_amount", "beneficiary"},
			Headers: api.MerchantHeaders, Codes: payoutCodes, Answers: api.JSONAnswers.Answers(answer)},
		{Method: http.MethodPost, Path: "/v1/payout/query", Tag: "Payouts", Security: apidoc.Signed, Forms: true,
			Summary: "Where a payout stands", Description: "Signed fields: merchant_id, account_id, request_id.",
			Request: payoutQueryRequest{}, Required: []string{"merchant_id", "account_id", "request_id", "encryption_data"},
			Headers: api.MerchantHeaders, Codes: payoutCodes, Answers: api.JSONAnswers.Answers(answer)},
		{Method: http.MethodPost, Path: "/v1/payout/rail-callback", Tag: "Provider callbacks", Security: apidoc.Provider,
			Summary:    "The rail says a transfer moved",
			RawRequest: &apidoc.Content{Media: apidoc.JSON, Schema: apidoc.StringFields([]string{"transfer_id", "idempotency_key"}, "transfer_id", "idempotency_key")},
			Headers:    []apidoc.Parameter{{Name: rail.SignatureHeader, Required: true, Description: "Hex HMAC-SHA256 of the body with PAYGATE_RAIL_CALLBACK_SECRET."}},
			Answers:    callbackAnswers},
	})
}
