package admin

import (
	"net/http"

	"github.com/paygate/paygate/api/apidoc"
	"github.com/paygate/paygate/internal/adapters/payoutrerun"
	"github.com/paygate/paygate/internal/adapters/redeliver"
	"github.com/paygate/paygate/models"
)

// Operations describe the admin API's routes (api.Documented). They answer
// 404 as if absent while the admin API is off (no PAYGATE_ADMIN_TOKEN).
func (a *API) Operations() []apidoc.Operation {
	refusal := func(d string) apidoc.Answer {
		return apidoc.Answer{Description: d, Media: apidoc.JSON, Body: answerError{}}
	}
	common := map[int]apidoc.Answer{
		http.StatusUnauthorized: refusal("No token, or not the admin token."),
		http.StatusNotFound: {Description: "Nothing matched (JSON); or the admin API is off, answered as a route that does not exist (text).",
			Media: apidoc.JSON, Body: answerError{}, Also: []apidoc.Content{{Media: apidoc.Text, Schema: apidoc.Schema{"type": "string"}}}},
		http.StatusServiceUnavailable: refusal("The service behind it is unavailable: try again."),
	}
	with := func(ok int, a apidoc.Answer, more ...int) map[int]apidoc.Answer {
		out := map[int]apidoc.Answer{ok: a}
		for st, r := range common {
			out[st] = r
		}
		for _, st := range more {
			out[st] = refusal(http.StatusText(st) + ": the message says which field and why.")
		}
		return out
	}
	return apidoc.WithExamples(map[string]any{
		"POST /admin/notifications/resend": map[string]any{"merchant_id": "10086", "account_id": "10086001", "order_nos": []any{"ORDER-1001"}},
		"POST /admin/payouts/rerun":        map[string]any{"ids": []any{"1379868670095785984"}, "dry_run": true, "by": "finance@example.com"},
		"POST /admin/shoppers/erase": map[string]any{"merchant_id": "10086", "email": "ada@example.com", "by": "ops@example.com",
			"reason": "the shopper's request of 2026-11-20"},
	}, []apidoc.Operation{
		{Method: http.MethodPost, Path: "/admin/notifications/resend", Tag: "Admin", Security: apidoc.Admin,
			Summary:     "Send notifications again",
			Description: "Redelivers the latest notification of the selected orders (order_nos or notify_ids, or a window from..to, RFC 3339) of one account, each as a new delivery with the retry schedule.",
			Request:     resendRequest{}, Required: []string{"merchant_id", "account_id"},
			Answers: with(http.StatusAccepted, apidoc.Answer{Media: apidoc.JSON, Body: redeliver.Result{}, Description: "The deliveries started."}, http.StatusBadRequest)},
		{Method: http.MethodPost, Path: "/admin/payouts/rerun", Tag: "Admin", Security: apidoc.Admin,
			Summary:     "Re-run failed payouts",
			Description: "Plans the selected payouts (ids, or failure_type and merchant_id in a window from..to) and, unless dry_run, re-runs the failed ones as one re-run batch; resume continues a batch cut short.",
			Request:     payoutRerunRequest{},
			Answers:     with(http.StatusOK, apidoc.Answer{Media: apidoc.JSON, Body: payoutrerun.Result{}, Description: "The batch's record and each payout's outcome."}, http.StatusBadRequest)},
		{Method: http.MethodGet, Path: "/admin/payouts/reruns", Tag: "Admin", Security: apidoc.Admin,
			Summary: "List payout re-runs",
			Query:   []apidoc.Parameter{{Name: "limit", Description: "1 to 1000 (default 50).", Schema: apidoc.Schema{"type": "integer", "minimum": 1, "maximum": 1000}}},
			Answers: with(http.StatusOK, apidoc.Answer{Media: apidoc.JSON, Description: "The latest re-runs, newest first.",
				Schema: apidoc.Schema{"type": "object", "properties": apidoc.Schema{"reruns": apidoc.Schema{"type": []any{"array", "null"}, "items": apidoc.Schemas{}.Of(models.PayoutRerun{}, false)}}}}, http.StatusBadRequest)},
		{Method: http.MethodGet, Path: "/admin/payouts/reruns/:id", Tag: "Admin", Security: apidoc.Admin,
			Summary: "Show a payout re-run",
			Answers: with(http.StatusOK, apidoc.Answer{Media: apidoc.JSON, Body: payoutrerun.Result{}, Description: "The batch's record and each payout's outcome."}, http.StatusBadRequest)},
		{Method: http.MethodPost, Path: "/admin/shoppers/erase", Tag: "Admin", Security: apidoc.Admin,
			Summary:     "Erase a shopper's personal data",
			Description: "Erases the personal data of a merchant's shopper, named by email or by one of their orders' transaction_id, from orders, payouts, stored cards and the vault, and keeps an audit record (by, reason).",
			Request:     eraseRequest{}, Required: []string{"merchant_id", "by", "reason"},
			Answers: with(http.StatusOK, apidoc.Answer{Media: apidoc.JSON, Body: ErasureAnswer{}, Description: "What the erasure reached."}, http.StatusBadRequest)},
	})
}
