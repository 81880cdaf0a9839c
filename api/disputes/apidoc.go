package disputes

import (
	"net/http"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/api/apidoc"
	"github.com/paygate/paygate/internal/domain/codes"
)

// Operations describe the dispute route (api.Documented).
func (h *Handler) Operations() []apidoc.Operation {
	req := api.DocSchemas.Of(disputeRequest{}, false)
	props := req["properties"].(apidoc.Schema)
	props["evidence"] = apidoc.Schema{"type": []any{"array", "null"}, "maxItems": 10, "items": api.DocSchemas.Of(piece{}, false),
		"description": "The evidence of action submit: named pieces of text or files (content_type and content_base64)."}
	props["evidence_sha256"] = apidoc.Schema{"type": "string", "description": "Hex SHA-256 of the evidence as sent, so that the signature covers it."}
	props["action"] = apidoc.Schema{"type": "string", "enum": []any{"", "list", "show", "accept", "submit"},
		"description": "list (the account's open disputes; the default), show (one), accept (concede it) or submit (answer with evidence)."}
	req["required"] = []any{"merchant_id", "account_id", "encryption_data"}
	return apidoc.WithExamples(map[string]any{
		"POST /v1/dispute": map[string]any{"merchant_id": "10086", "account_id": "10086001", "dispute_id": "dp_1", "action": "submit",
			"evidence":        []any{map[string]any{"name": "delivery", "text": "Delivered on 2026-11-20, signed for by the shopper."}},
			"evidence_sha256": "<hex sha256 of the evidence as sent>", "encryption_data": "<hex sha256 of the signed fields and the sign key>"},
	}, []apidoc.Operation{
		{Method: http.MethodPost, Path: "/v1/dispute", Tag: "Disputes", Security: apidoc.Signed, Forms: true,
			Summary:     "List, show, accept or answer disputes",
			Description: "Signed fields: merchant_id, account_id, dispute_id, action, evidence_sha256. An answer is sent to the acquirer once; the dispute's outcome comes as a notification.",
			RawRequest:  &apidoc.Content{Media: apidoc.JSON, Schema: req},
			Headers:     api.MerchantHeaders,
			Codes:       api.CodeIDs(append([]codes.Code{codes.OK, codes.DisputeNotFound, codes.DisputeNotAnswerable}, api.RequestCodes...)...),
			Answers:     api.JSONAnswers.Answers(apidoc.Answer{Media: apidoc.JSON, Body: disputeAnswer{}, Description: "The disputes named or listed."})},
	})
}
