package payouts

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/domain/payout"
)

// TestPayoutExampleIsValid: the reference's example payout is one the
// gateway takes, not only one its schema admits.
func TestPayoutExampleIsValid(t *testing.T) {
	for _, op := range (&Handler{}).Operations() {
		if op.Method != http.MethodPost || op.Path != "/v1/payout" {
			continue
		}
		raw, err := json.Marshal(op.Example)
		if err != nil {
			t.Fatal(err)
		}
		var r payout.Request
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		if _, err := payout.Validate(r, time.Now()); err != nil {
			t.Errorf("the example payout is refused: %v", err)
		}
		return
	}
	t.Fatal("no POST /v1/payout operation")
}
