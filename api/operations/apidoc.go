package operations

import (
	"maps"
	"net/http"
	"slices"
	"strconv"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/api/apidoc"
	"github.com/paygate/paygate/internal/domain/codes"
)

// Operations describe the four batches (api.Documented).
func (h *Handler) Operations() []apidoc.Operation {
	type doc struct {
		op      batchOp
		path    string
		summary string
		fields  []string // the entry's fields besides the order's
		answer  any
		example map[string]any // the entry's own fields
	}
	entryCodes := api.CodeIDs(append([]codes.Code{codes.OK, codes.RefundPending, codes.InvalidAmount, codes.UnsupportedCurrency,
		codes.TooManyOrders, codes.OrderNotFound, codes.InvalidState, codes.OrderMismatch, codes.CompatibleRefundLimit,
		codes.RefundNotFound, codes.TooManyRefunds, codes.RefundDisputed, codes.PendingNotCancellable, codes.ConnectorError, codes.AcquirerTimeout,
		codes.AuthorisationExpired}, api.RequestCodes...)...)
	var ops []apidoc.Operation
	for _, d := range []doc{
		{captureOp, "/v1/capture", "Capture authorised payments", []string{"capture_amount"}, captureAnswer{}, map[string]any{"capture_amount": "12.34"}},
		{reviewOp, "/v1/review", "Approve or reject payments held for review", []string{"review_flag"}, reviewAnswer{}, map[string]any{"review_flag": "1"}},
		{cancelOp, "/v1/cancel", "Cancel authorised payments before capture", nil, cancelAnswer{}, nil},
		{refundOp, "/v1/refund", "Refund paid payments, wholly or in part", []string{"refund_amount", "refund_reason"}, refundAnswer{}, map[string]any{"refund_amount": "5.00", "refund_reason": "returned"}},
	} {
		entry := api.DocSchemas.Of(batchEntry{}, false)
		props := entry["properties"].(apidoc.Schema)
		for _, f := range []string{"capture_amount", "review_flag", "refund_amount", "refund_reason"} {
			if !slices.Contains(d.fields, f) {
				delete(props, f)
			}
		}
		entry["required"] = []any{"transaction_id", "order_no", "currency", "amount"}
		req := apidoc.Schema{"type": "object", "required": []any{"merchant_id", "account_id", d.op.array}, "properties": apidoc.Schema{
			"merchant_id":     apidoc.Schema{"type": []any{"string", "number"}, "description": "The merchant's id."},
			"account_id":      apidoc.Schema{"type": []any{"string", "number"}, "description": "The account the orders belong to."},
			"encryption_data": apidoc.Schema{"type": "string", "description": "The compatible signature over merchant_id, account_id and each entry's transaction_id in order."},
			d.op.array: apidoc.Schema{"type": []any{"array", "string"}, "maxItems": d.op.limit, "items": entry,
				"description": "The entries, at most " + strconv.Itoa(d.op.limit) + " (a JSON list, or the list as JSON text)."},
		}}
		answer := apidoc.Schema{"type": "object", "properties": apidoc.Schema{
			"merchant_id":     apidoc.Schema{"type": "string"},
			"account_id":      apidoc.Schema{"type": "string"},
			"return_status":   apidoc.Schema{"type": "string", "enum": []any{"0", "1"}, "description": "1 when the batch was taken (each entry has its own status), 0 when it was refused."},
			"return_message":  apidoc.Schema{"type": "string", "description": "The result code and its message."},
			"encryption_data": apidoc.Schema{"type": "string", "description": "Signed over merchant_id, account_id, return_status and the entries' transaction ids (upper-case hex), when the request proved the key."},
			d.op.array:        apidoc.Schema{"type": []any{"array", "null"}, "items": api.DocSchemas.Of(d.answer, false)},
		}}
		entryExample := map[string]any{"transaction_id": "1379868670095785984", "order_no": "ORDER-1001", "currency": "USD", "amount": "12.34"}
		maps.Copy(entryExample, d.example)
		example := map[string]any{"merchant_id": "10086", "account_id": "10086001", d.op.array: []any{entryExample},
			"encryption_data": "<hex sha256 of merchant_id, account_id, the transaction ids and the sign key>"}
		ok := apidoc.Answer{Media: apidoc.JSON, Schema: answer, Description: "Each entry's outcome; a refused batch answers return_status 0 and no entries."}
		answers := api.BatchAnswers(d.op.array).Answers(ok)
		ops = append(ops, apidoc.Operation{Method: http.MethodPost, Path: d.path, Tag: "Order operations", Security: apidoc.Signed,
			Summary: d.summary, Forms: true, RawRequest: &apidoc.Content{Media: apidoc.JSON, Schema: req},
			Description: "Each entry names an order by transaction_id with its order_no, currency and amount as paid; entries are carried out one by one and each answers its own status. The same body sent again within 24 hours is answered as the first time.",
			Headers:     api.MerchantHeaders, Codes: entryCodes, Answers: answers, Example: example})
	}
	return ops
}
