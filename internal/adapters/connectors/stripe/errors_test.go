package stripe

import (
	"context"
	"errors"
	"net/http"
	"testing"

	stripego "github.com/stripe/stripe-go/v82"

	"github.com/paygate/paygate/internal/domain/connector"
)

// TestErrorOf: Stripe's errors as the connector's. A 409 is the same key
// still in flight, whatever its type: unknown, to be asked again, never a
// refusal (a refund read as refused would be refunded twice).
func TestErrorOf(t *testing.T) {
	tests := []struct {
		name   string
		status int
		typ    stripego.ErrorType
		code   stripego.ErrorCode
		want   error
	}{
		{"the same key in flight", http.StatusConflict, stripego.ErrorTypeIdempotency, "", connector.ErrTimeout},
		{"a 409 of another type", http.StatusConflict, stripego.ErrorTypeAPI, "", connector.ErrTimeout},
		{"the key sent with other parameters", http.StatusBadRequest, stripego.ErrorTypeIdempotency, "", connector.ErrConflict},
		{"already refunded", http.StatusBadRequest, stripego.ErrorTypeInvalidRequest, stripego.ErrorCodeChargeAlreadyRefunded, connector.ErrConflict},
		{"no such refund", http.StatusNotFound, stripego.ErrorTypeInvalidRequest, stripego.ErrorCodeResourceMissing, connector.ErrNotFound},
		{"too many requests", http.StatusTooManyRequests, stripego.ErrorTypeInvalidRequest, stripego.ErrorCodeRateLimit, connector.ErrUnavailable},
		{"Stripe failed", http.StatusInternalServerError, stripego.ErrorTypeAPI, "", connector.ErrTimeout},
		{"a bad request", http.StatusBadRequest, stripego.ErrorTypeInvalidRequest, stripego.ErrorCodeParameterInvalidInteger, connector.ErrRejected},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := errorOf(context.Background(), "refund", &stripego.Error{HTTPStatusCode: tc.status, Type: tc.typ, Code: tc.code})
			if !errors.Is(err, tc.want) {
				t.Errorf("errorOf = %v, want %v", err, tc.want)
			}
		})
	}
}
