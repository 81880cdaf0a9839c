package activities

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/paygate/paygate/internal/dev/testdb"
	"github.com/paygate/paygate/internal/domain/risk"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/models"
)

// TestFinishOrderDropAndWrite runs FinishOrder on Postgres with the
// security code's drop and the outcome's write failing in turn. A failed
// drop is tried again whatever the write did, since a write Postgres
// refused must not stop the retry that forgets the code; a refused write
// alone is RecordRejected, which the workflow answers by writing the bare
// outcome; a write that went through stays written.
func TestFinishOrderDropAndWrite(t *testing.T) {
	db := testdb.Open(t, "paygate_finishdrop_")
	dropFailed := errors.New("vault: connection reset")
	tests := []struct {
		name      string
		token     string // DropCVVToken
		dropErr   error
		message   string // the outcome's ResultMessage; a NUL byte makes Postgres refuse it
		wantErr   string // "" none, "retry" an error the retry policy retries, or a non-retryable type
		wantDrops int
		wantCode  string // the row's result_code afterwards
	}{
		{"both done", "tok-1", nil, "Approved", "", 1, "0000"},
		{"no card named: nothing to drop", "", nil, "Approved", "", 0, "0000"},
		{"the drop failed, the write done", "tok-1", dropFailed, "Approved", "retry", 1, "0000"},
		{"the write refused, the drop done", "tok-1", nil, "Appro\x00ved", ErrTypeRecordRejected, 1, ""},
		{"both failed: the drop is tried again", "tok-1", dropFailed, "Appro\x00ved", "retry", 1, ""},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := &cardVault{dropErr: tc.dropErr}
			a := &Activities{Records: models.Records{DB: db}, Vault: v}
			txID := fmt.Sprintf("20000000000000000%d1", i)
			if _, err := a.RecordOrder(t.Context(), recordInput(txID, "FIN-"+txID, "card-fp-fin", risk.Settings{})); err != nil {
				t.Fatal(err)
			}
			err := a.FinishOrder(t.Context(), FinishOrderInput{TransactionID: txID, Version: 2, Task: 1,
				PaymentStatus: status.Paid, OrderStatus: status.OrderSuccess, ResultCode: "0000",
				ResultMessage: tc.message, CapturedAmount: 1234, Connector: "sim-acquirer", DropCVVToken: tc.token})
			var appErr *temporal.ApplicationError
			switch tc.wantErr {
			case "":
				if err != nil {
					t.Fatalf("FinishOrder = %v, want nil", err)
				}
			case "retry":
				if err == nil || errors.As(err, &appErr) && appErr.NonRetryable() {
					t.Fatalf("FinishOrder = %v, want an error the retry policy retries", err)
				}
				if !errors.Is(err, dropFailed) {
					t.Fatalf("FinishOrder = %v, want it to wrap the drop's failure", err)
				}
				if tc.wantCode == "" && !strings.Contains(err.Error(), "the outcome's write") {
					t.Fatalf("FinishOrder = %v, want it to tell the write's failure too", err)
				}
			default:
				if !errors.As(err, &appErr) || appErr.Type() != tc.wantErr || !appErr.NonRetryable() {
					t.Fatalf("FinishOrder = %v, want a non-retryable %s", err, tc.wantErr)
				}
			}
			if len(v.drops) != tc.wantDrops {
				t.Fatalf("drops = %q, want %d", v.drops, tc.wantDrops)
			}
			o, err := models.FindOrderByNo(t.Context(), db, "A1", "FIN-"+txID)
			if err != nil {
				t.Fatal(err)
			}
			if o.ResultCode != tc.wantCode {
				t.Fatalf("result_code = %q, want %q", o.ResultCode, tc.wantCode)
			}
		})
	}
}
