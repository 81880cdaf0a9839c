package operations

import (
	"errors"
	"fmt"
	"testing"

	"github.com/paygate/paygate/api/flows"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/models"
)

// TestEntryErrorOutcome: each error of an entry's lookup or operation and
// the entry status and code it is answered with.
func TestEntryErrorOutcome(t *testing.T) {
	cases := []struct {
		name       string
		err        error
		wantStatus string
		wantCode   codes.Code
	}{
		{"refused by the validator", &flows.ErrEntryRefused{Code: "I0019", Message: "Entry does not match the order: currency"},
			"0", codes.Code{ID: "I0019", Message: "Entry does not match the order: currency"}},
		{"refused, wrapped", fmt.Errorf("op: %w", &flows.ErrEntryRefused{Code: "I0018", Message: "closed"}),
			"0", codes.Code{ID: "I0018", Message: "closed"}},
		{"order not found", fmt.Errorf("find: %w", models.ErrNotFound), "0", codes.OrderNotFound},
		{"outcome not known", fmt.Errorf("refund update: %w", flows.ErrOutcomeUnknown), "-1", codes.AcquirerTimeout},
		{"anything else", errors.New("boom"), "0", codes.SystemError},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := entryErrorOutcome(c.err)
			if got.status != c.wantStatus || got.code != c.wantCode {
				t.Errorf("outcome = %s %v, want %s %v", got.status, got.code, c.wantStatus, c.wantCode)
			}
		})
	}
}
