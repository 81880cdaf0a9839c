package api

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/domain/codes"
)

// TestAnswerTo pins the one error-to-answer mapper: what each format
// answers to each refusal of the authenticated-request step, with the
// differences the formats have always had.
func TestAnswerTo(t *testing.T) {
	formats := []struct {
		name string
		f    AnswerFormat
	}{
		{"xml", XMLAnswers},
		{"batch", BatchAnswers("refund_orders")},
		{"query", QueryAnswers},
		{"refund query", RefundQueryAnswers},
		{"page", PageAnswers},
	}
	unreadable := codes.MalformedRequest.With("body could not be read")
	cases := []struct {
		name string
		err  error
		// want is the answer of every format not named in except.
		wantHTTP int
		want     codes.Code
		except   map[string]statusAndCode
	}{
		{"body too large", fmt.Errorf("read: %w", errTooLarge),
			http.StatusRequestEntityTooLarge, codes.RequestTooLarge, nil},
		{"body unreadable", fmt.Errorf("%w: connection reset", errBodyUnreadable),
			http.StatusBadRequest, unreadable, map[string]statusAndCode{
				"query": {http.StatusBadRequest, codes.MalformedRequest},
				"page":  {http.StatusRequestEntityTooLarge, codes.RequestTooLarge},
			}},
		{"body does not decode", refused(codes.MalformedRequest.With("truncated JSON")),
			http.StatusOK, codes.MalformedRequest.With("truncated JSON"), nil},
		{"merchant_id missing", missingIDs("", "10086001"),
			http.StatusOK, codes.MissingField.With("merchant_id"), map[string]statusAndCode{
				"page": {http.StatusOK, codes.MissingField.With("merchant_id, account_id")},
			}},
		{"account_id missing", missingIDs("10086", ""),
			http.StatusOK, codes.MissingField.With("account_id"), map[string]statusAndCode{
				"page": {http.StatusOK, codes.MissingField.With("merchant_id, account_id")},
			}},
		{"unknown account", fmt.Errorf("load: %w", merchant.ErrUnknownAccount),
			http.StatusOK, codes.UnknownMerchant, nil},
		{"account store down", errors.New("connection refused"),
			http.StatusServiceUnavailable, codes.SystemError, map[string]statusAndCode{
				"xml": {http.StatusOK, codes.SystemError},
			}},
		{"system error refused by the handler", refused(codes.SystemError),
			http.StatusServiceUnavailable, codes.SystemError, map[string]statusAndCode{
				"xml": {http.StatusOK, codes.SystemError},
			}},
		{"missing encryption_data", refused(codes.MissingField.With("encryption_data")),
			http.StatusOK, codes.MissingField.With("encryption_data"), nil},
		{"wrong signature", refused(codes.BadSignature),
			http.StatusOK, codes.BadSignature, nil},
		{"refusal after proof", refused(codes.IPNotAllowed.With("203.0.113.9")),
			http.StatusOK, codes.IPNotAllowed.With("203.0.113.9"), nil},
	}
	for _, tc := range cases {
		for _, format := range formats {
			t.Run(tc.name+"/"+format.name, func(t *testing.T) {
				want := statusAndCode{tc.wantHTTP, tc.want}
				if w, ok := tc.except[format.name]; ok {
					want = w
				}
				httpStatus, code := format.f.answerTo(tc.err)
				if httpStatus != want.httpStatus || code.String() != want.code.String() {
					t.Errorf("answerTo = %d %q, want %d %q", httpStatus, code.String(), want.httpStatus, want.code.String())
				}
			})
		}
	}
}
