package payments

import (
	"net/http"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/api/apidoc"
	"github.com/paygate/paygate/internal/domain/codes"
)

// Result codes of a payment (docs/result-codes.md).
var paymentCodes = api.CodeIDs(append([]codes.Code{codes.OK, codes.AwaitingShopper, codes.InvalidAmount, codes.UnsupportedCurrency,
	codes.InvalidCardNumber, codes.InvalidExpiry, codes.InvalidCVV, codes.DuplicateOrder, codes.PaymentTypeConflict,
	codes.UnsupportedMethod, codes.TokenNotFound, codes.TokenDeleted, codes.TestCardOnLive, codes.TestAccountConnector,
	codes.LiveAccountSimulator, codes.ConnectorCannot, codes.RiskReview, codes.RiskAmountLimit, codes.RiskBlockedCard,
	codes.RiskRejected, codes.RiskVelocity, codes.RiskBlockedBIN, codes.RiskBlockedCountry, codes.RiskCountryMismatch,
	codes.RiskTestValue, codes.ConnectorError, codes.ThreeDSNotAvailable, codes.RecordRejected, codes.TransactionIDConflict,
	codes.AcquirerTimeout, codes.Declined, codes.InsufficientFunds, codes.ExpiredCard, codes.WrongCVV, codes.ThreeDSFailed,
	codes.ShopperCancelled, codes.SessionExpired}, api.RequestCodes...)...)

// Operations describe the payment routes (api.Documented).
func (h *Handler) Operations() []apidoc.Operation {
	page := apidoc.Answer{Media: apidoc.HTML, Schema: apidoc.Schema{"type": "string"}}
	pageAnswer := func(d string) apidoc.Answer { a := page; a.Description = d; return a }
	redirect := apidoc.Answer{Description: "See Other: the shopper's browser goes on (Location).",
		Headers: []apidoc.Parameter{{Name: "Location", Description: "Where the browser goes next."}}}
	jsonAnswer := apidoc.Answer{Media: apidoc.JSON, Schema: apidoc.Schema{"type": "object",
		"properties": apidoc.Schema{"ok": apidoc.Schema{"type": "boolean"}, "ignored": apidoc.Schema{"type": "string"}, "error": apidoc.Schema{"type": "string"}}}}
	callbackAnswers := func() map[int]apidoc.Answer {
		return apidoc.Described(jsonAnswer, map[int]string{
			http.StatusOK:                    "Taken: the gateway asks the provider before it acts on it.",
			http.StatusBadRequest:            "Unreadable or malformed.",
			http.StatusUnauthorized:          "Bad signature.",
			http.StatusNotFound:              "Unknown reference.",
			http.StatusServiceUnavailable:    "Not taken now: send it again.",
			http.StatusRequestEntityTooLarge: "The body is over 1 MiB.",
		})
	}
	providerHeader := []apidoc.Parameter{{Name: "X-Provider-Signature", Required: true, Description: "Lower-case hex HMAC-SHA256 of the body with the provider's secret."}}
	callbackBody := func(fields ...string) *apidoc.Content {
		return &apidoc.Content{Media: apidoc.JSON, Schema: apidoc.StringFields(fields, fields...)}
	}
	shopperForm := func(fields ...string) *apidoc.Content {
		return &apidoc.Content{Media: apidoc.Form, Schema: apidoc.StringFields(fields)}
	}
	shopperAnswers := map[int]apidoc.Answer{
		http.StatusOK:                 pageAnswer("A page for the shopper: the payment page again with what to correct, or a message."),
		http.StatusSeeOther:           redirect,
		http.StatusBadRequest:         pageAnswer("The form could not be read (I0010)."),
		http.StatusForbidden:          pageAnswer("The session is not the gateway's (I0013)."),
		http.StatusServiceUnavailable: pageAnswer("A system error (S0001): try again."),
	}
	return []apidoc.Operation{
		{Method: http.MethodPost, Path: "/v1/authorise", Tag: "Payments", Security: apidoc.Signed, Forms: true,
			Summary: "Pay with a card, a stored card or an alternative payment method",
			Description: "A direct card payment (card, expiry, security code), a stored card's (token_id, no card) or an APM's (payment_method, no card): the gateway checks the order, runs the risk rules, charges the card (3-D Secure when open3d is do3DS) and answers the outcome. " +
				"Signed fields: merchant_id, account_id, order_no, currency, amount, first_name, last_name, card, expiration_year, expiration_month, security_code, shopper_email (an APM: merchant_id, account_id, order_no, currency, amount, payment_method, return_url). " +
				"The answer is signed over merchant_id, account_id, transaction_id, order_no, currency, amount, order_status, result_info. A repeated order_no with the same content answers the first result; with other content, I0009.",
			Request:  authoriseRequest{},
			Required: []string{"merchant_id", "account_id", "order_no", "currency", "amount", "first_name", "last_name", "shopper_email"},
			Headers:  api.MerchantHeaders,
			Codes:    paymentCodes,
			Answers: api.XMLAnswers.Answers(apidoc.Answer{Media: apidoc.XML, Body: api.Respon{},
				Description: "The payment's outcome (order_status and result_info), also when it was refused; an APM's or a 3-D Secure challenge's carries issuer_url, where to send the shopper.",
				Headers:     []apidoc.Parameter{{Name: api.HeaderMode, Description: "test or live: the account's mode."}}}),
			Example: map[string]any{"merchant_id": "10086", "account_id": "10086001", "order_no": "ORDER-1001", "currency": "USD", "amount": "12.34",
				"first_name": "Ada", "last_name": "Lovelace", "card": "4111111111111111", "expiration_year": "2031", "expiration_month": "12",
				"security_code": "123", "shopper_email": "ada@example.com", "encryption_data": "<hex sha256 of the signed fields and the key>"}},
		{Method: http.MethodPost, Path: "/v1/checkout", Tag: "Payments", Security: apidoc.Signed, Forms: true,
			Summary: "Start a hosted payment",
			Description: "The merchant's page posts the order here from the shopper's browser; the gateway answers a page that carries it on to its payment page, where the shopper gives the card or chooses an APM. " +
				"Signed fields: merchant_id, account_id, order_no, currency, amount, return_url.",
			Request:  checkoutRequest{},
			Required: []string{"merchant_id", "account_id", "order_no", "currency", "amount", "return_url"},
			Headers:  api.MerchantHeaders,
			Codes:    paymentCodes,
			Answers:  api.PageAnswers.Answers(pageAnswer("The forwarding page, then the payment page; a refusal is a page naming its result code.")),
			Example: map[string]any{"merchant_id": "10086", "account_id": "10086001", "order_no": "ORDER-1002", "currency": "USD", "amount": "25.00",
				"return_url": "https://shop.example/return", "notify_url": "https://shop.example/notify", "shopper_email": "ada@example.com",
				"encryption_data": "<hex sha256 of the signed fields and the sign key>"}},
		{Method: http.MethodPost, Path: "/v1/checkout/pay", Tag: "Shopper pages", Summary: "The payment page's card form",
			RawRequest: shopperForm("session", "card_holder", "card_number", "expiry_month", "expiry_year", "security_code"),
			Answers:    shopperAnswers,
			Example: map[string]any{"session": "1379868670095785984.<32 hex>", "card_holder": "Ada Lovelace", "card_number": "4242 4242 4242 4242",
				"expiry_month": "12", "expiry_year": "2031", "security_code": "739"}},
		{Method: http.MethodPost, Path: "/v1/checkout/cancel", Tag: "Shopper pages", Summary: "The shopper cancels on the payment page",
			RawRequest: shopperForm("session"), Answers: shopperAnswers, Example: map[string]any{"session": "1379868670095785984.<32 hex>"}},
		{Method: http.MethodPost, Path: "/v1/checkout/apm", Tag: "Shopper pages", Summary: "The shopper chooses an alternative payment method",
			RawRequest: shopperForm("session", "payment_method", "document_number", "bank_code"), Answers: shopperAnswers,
			Example: map[string]any{"session": "1379868670095785984.<32 hex>", "payment_method": "PIX", "document_number": "12345678909"}},
		{Method: http.MethodGet, Path: "/v1/checkout/apm/return", Tag: "Shopper pages", Summary: "The shopper comes back from the APM provider",
			Query: []apidoc.Parameter{{Name: "session", Required: true, Description: "The payment page's session."}}, Answers: shopperAnswers},
		{Method: http.MethodPost, Path: "/v1/3ds/callback", Tag: "Shopper pages", Security: apidoc.Provider,
			Summary:     "The shopper comes back from 3-D Secure (form post)",
			Description: "The ACS sends the shopper's browser back with the authentication's result, signed; the gateway asks the provider before it goes on, then sends the shopper to return_url with the signed result.",
			RawRequest:  shopperForm("authentication_id", "status", "cavv", "reference", "signature", "connector", "payment_intent"),
			Answers:     shopperAnswers,
			Example: map[string]any{"authentication_id": "auth_1", "status": "authenticated", "cavv": "AAABBBCCC", "reference": "1379868670095785984",
				"signature": "<hex HMAC-SHA256>"}},
		{Method: http.MethodGet, Path: "/v1/3ds/callback", Tag: "Shopper pages", Security: apidoc.Provider,
			Summary: "The shopper comes back from 3-D Secure (a provider that returns by GET)",
			Query: []apidoc.Parameter{{Name: "connector"}, {Name: "reference"}, {Name: "signature"}, {Name: "payment_intent"},
				{Name: "authentication_id"}, {Name: "status"}, {Name: "cavv"}},
			Answers: shopperAnswers},
		{Method: http.MethodPost, Path: "/v1/apm/callback", Tag: "Provider callbacks", Security: apidoc.Provider,
			Summary: "An APM provider says a payment moved", RawRequest: callbackBody("payment_id", "reference"),
			Headers: providerHeader, Answers: callbackAnswers(),
			Example: map[string]any{"payment_id": "apm_1", "reference": "1379868670095785984"}},
		{Method: http.MethodPost, Path: "/v1/disputes/callback", Tag: "Provider callbacks", Security: apidoc.Provider,
			Summary: "An acquirer says a payment is disputed", RawRequest: callbackBody("dispute_id", "reference"),
			Headers: providerHeader, Answers: callbackAnswers(),
			Example: map[string]any{"dispute_id": "dp_1", "reference": "1379868670095785984"}},
		{Method: http.MethodPost, Path: "/v1/webhooks/:connector", Tag: "Provider callbacks", Security: apidoc.Provider,
			Summary:     "A connector's own webhook (Stripe: payment_intent.* and charge.dispute.* events)",
			Description: "Signed in the connector's own way (Stripe-Signature); the gateway asks the connector before it acts.",
			RawRequest:  &apidoc.Content{Media: apidoc.JSON, Schema: apidoc.Schema{"type": "object"}},
			Headers:     []apidoc.Parameter{{Name: "Stripe-Signature", Description: "Stripe's signature of the event."}},
			Answers:     callbackAnswers(),
			Example:     map[string]any{"id": "evt_1", "type": "payment_intent.succeeded", "data": map[string]any{"object": map[string]any{"id": "pi_1"}}}},
	}
}
