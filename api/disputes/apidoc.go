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
		"description": "The evidence of action evidence: 1 to 10 named pieces, each a text (20,000 characters at most; line breaks allowed) or a file (content_type application/pdf, image/png, image/jpeg or text/plain, content_base64 of 512 KiB at most), the whole body 1 MiB at most. A file's name says its kind: receipt, customer_communication, customer_signature, shipping_documentation, service_documentation, refund_policy, cancellation_policy or duplicate_charge_documentation (any case, an extension allowed, as Receipt.pdf); any other name is the uncategorized file. One file of each kind an answer; a later answer's file of a kind replaces the earlier one; a text/plain file goes to the acquirer as text. Sent as JSON."}
	props["evidence_sha256"] = apidoc.Schema{"type": "string", "description": "Hex SHA-256 of the evidence as sent, so that the signature covers it."}
	props["action"] = apidoc.Schema{"type": "string", "enum": []any{"list", "query", "evidence", "accept"},
		"description": "list (the account's 100 newest disputes, any status), query (the one named by dispute_id), evidence (answer it with the evidence) or accept (concede it)."}
	req["required"] = []any{"merchant_id", "account_id", "action", "encryption_data"}
	return apidoc.WithExamples(map[string]any{
		"POST /v1/dispute": map[string]any{"merchant_id": "10086", "account_id": "10086001", "dispute_id": "sim-acquirer:dp_1", "action": "evidence",
			"evidence":        []any{map[string]any{"name": "delivery", "text": "Delivered on 2026-11-20, signed for by the shopper."}},
			"evidence_sha256": "<hex sha256 of the evidence as sent>", "encryption_data": "<hex sha256 of the signed fields and the sign key>"},
	}, []apidoc.Operation{
		{Method: http.MethodPost, Path: "/v1/dispute", Tag: "Disputes", Security: apidoc.Signed, Forms: true,
			Summary:     "List, show, accept or answer disputes",
			Description: "Signed fields: merchant_id, account_id, dispute_id, action, evidence_sha256. An answer is sent to the acquirer once; the dispute's outcome comes as a notification. A form body serves list, query and accept; evidence comes as JSON.",
			RawRequest:  &apidoc.Content{Media: apidoc.JSON, Schema: req},
			Headers:     api.MerchantHeaders,
			Codes:       api.CodeIDs(append([]codes.Code{codes.OK, codes.DisputeNotFound, codes.DisputeNotAnswerable, codes.EvidenceRefused}, api.RequestCodes...)...),
			Answers:     api.JSONAnswers.Answers(apidoc.Answer{Media: apidoc.JSON, Body: disputeAnswer{}, Description: "The disputes named or listed."})},
	})
}
