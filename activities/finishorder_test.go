package activities

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/paygate/paygate/internal/adapters/vault"
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
			checkFinishErr(t, err, tc.wantErr)
			if tc.wantErr == "retry" {
				if !errors.Is(err, dropFailed) {
					t.Fatalf("FinishOrder = %v, want it to wrap the drop's failure", err)
				}
				if tc.wantCode == "" && !strings.Contains(err.Error(), "the outcome's write") {
					t.Fatalf("FinishOrder = %v, want it to tell the write's failure too", err)
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

// TestFinishOrderPiped runs FinishOrder's piped path with the real vault, whose drop of
// the security code goes to Postgres in one pipeline with the outcome's
// write (finishPiped): each is done or refused on its own, as when they go
// one by one.
func TestFinishOrderPiped(t *testing.T) {
	db := testdb.Open(t, "paygate_finishpiped_")
	v := realVault(t, db)
	a := &Activities{Records: models.Records{DB: db}, Vault: v}
	tests := []struct {
		name     string
		recorded bool   // the order is recorded before the write
		version  int64  // the write's; the row holds version 1 of task 1 when recorded
		message  string // a NUL byte makes Postgres refuse it
		wantErr  string // "" none, "retry" an error the retry policy retries, or a non-retryable type
		wantCode string // the row's result_code afterwards
	}{
		{"both done", true, 2, "Approved", "", "0000"},
		{"the write refused, the code dropped", true, 2, "Appro\x00ved", ErrTypeRecordRejected, "0001"},
		{"an older write changes nothing, the code dropped", true, 1, "Approved", "", "0001"},
		{"an order not recorded: tried again, the code dropped", false, 2, "Approved", "retry", ""},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			txID := fmt.Sprintf("21000000000000000%d1", i)
			orderNo := "PIPE-" + txID
			token, _, err := v.Tokenize(t.Context(), orderNo, vault.Card{Number: "4242424242424242", ExpiryMonth: "12", ExpiryYear: "2030", CVV: "123"})
			if err != nil {
				t.Fatal(err)
			}
			if tc.recorded {
				if _, err := a.RecordOrder(t.Context(), recordInput(txID, orderNo, "card-fp-pipe", risk.Settings{})); err != nil {
					t.Fatal(err)
				}
				if err := a.Records.UpdateOrderResult(t.Context(), txID, models.OrderResult{PaymentStatus: status.Pending,
					OrderStatus: status.OrderPending, ResultCode: "0001", Version: 1, Task: 1}); err != nil {
					t.Fatal(err)
				}
			}
			piped, err := a.finishPiped(t.Context(), FinishOrderInput{TransactionID: txID, Version: tc.version, Task: 1,
				PaymentStatus: status.Paid, OrderStatus: status.OrderSuccess, ResultCode: "0000",
				ResultMessage: tc.message, CapturedAmount: 1234, Connector: "sim-acquirer", DropCVVToken: token})
			if !piped {
				t.Fatal("FinishOrder's statements were not piped")
			}
			checkFinishErr(t, err, tc.wantErr)
			c, err := v.Detokenize(t.Context(), token)
			if err != nil {
				t.Fatal(err)
			}
			if c.CVV != "" || c.Number != "4242424242424242" {
				t.Errorf("card after FinishOrder: security code kept %t, number kept %t; want dropped and kept", c.CVV != "", c.Number == "4242424242424242")
			}
			if !tc.recorded {
				return
			}
			o, err := models.FindOrderByNo(t.Context(), db, "A1", orderNo)
			if err != nil {
				t.Fatal(err)
			}
			if o.ResultCode != tc.wantCode {
				t.Fatalf("result_code = %q, want %q", o.ResultCode, tc.wantCode)
			}
		})
	}
}

// checkFinishErr fails t unless err is FinishOrder's end as want says: ""
// none, "retry" an error the retry policy retries, or else a non-retryable
// error of that type.
func checkFinishErr(t *testing.T, err error, want string) {
	t.Helper()
	var appErr *temporal.ApplicationError
	switch want {
	case "":
		if err != nil {
			t.Fatalf("FinishOrder = %v, want nil", err)
		}
	case "retry":
		if err == nil || errors.As(err, &appErr) && appErr.NonRetryable() {
			t.Fatalf("FinishOrder = %v, want an error the retry policy retries", err)
		}
	default:
		if !errors.As(err, &appErr) || appErr.Type() != want || !appErr.NonRetryable() {
			t.Fatalf("FinishOrder = %v, want a non-retryable %s", err, want)
		}
	}
}
