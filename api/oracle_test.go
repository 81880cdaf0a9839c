package api

import (
	"testing"
	"time"

	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/domain/signing"
	"github.com/paygate/paygate/models"
)

// TestAuthoriseNeverSignsForUnprovenCaller replays the signing-oracle attack
// and its neighbours: no answer to a request that did not prove
// the key carries a signature.
func TestAuthoriseNeverSignsForUnprovenCaller(t *testing.T) {
	paidTx := "1379868670095785984"
	cases := []struct {
		name       string
		build      func() fields
		wantResult string
	}{
		{
			name: "attack: paid order's transaction id as order_no, empty currency and amount, junk signature",
			build: func() fields {
				return fields{"merchant_id": testMerchantID, "account_id": testAccountID, "order_no": paidTx,
					"currency": "", "amount": "", "encryption_data": "00"}
			},
			wantResult: "I0013:Signature verification failed",
		},
		{
			name: "attack: no signature at all",
			build: func() fields {
				return fields{"merchant_id": testMerchantID, "account_id": testAccountID, "order_no": paidTx}
			},
			wantResult: "I0001:Missing required field: encryption_data",
		},
		{
			name: "card request signed with another key",
			build: func() fields {
				f := validCard()
				f.signWith(otherSignKey, cardRecipe)
				return f
			},
			wantResult: "I0013:Signature verification failed",
		},
		{
			name: "unknown account",
			build: func() fields {
				f := validCard()
				f["account_id"] = "10086999"
				return f
			},
			wantResult: "I0002:Unknown or inactive merchant account",
		},
		{
			name: "APM request with a wrong signature",
			build: func() fields {
				return fields{"merchant_id": testMerchantID, "account_id": testAccountID, "order_no": "A-1",
					"currency": "BRL", "amount": "10.00", "payment_method": "pix",
					"return_url": "https://attacker.example/", "encryption_data": "ab"}
			},
			wantResult: "I0013:Signature verification failed",
		},
	}
	for _, tc := range cases {
		for _, ct := range []string{ctJSON, ctForm} {
			t.Run(tc.name+"/"+ct, func(t *testing.T) {
				env := newTestEnv(t)
				f := tc.build()
				body := f.json(t)
				if ct == ctForm {
					body = f.form(t)
				}
				r := parseRespon(t, env.do(t, "/v1/authorise", ct, body, ""))
				if r.ResultInfo != tc.wantResult {
					t.Errorf("result_info = %q, want %q", r.ResultInfo, tc.wantResult)
				}
				if r.EncryptionData != "" {
					t.Errorf("encryption_data = %q, want empty for a caller who did not prove the key", r.EncryptionData)
				}
				if len(env.orders.inputs()) != 0 {
					t.Errorf("an order workflow was started")
				}
			})
		}
	}
}

// TestAuthoriseSignsWithTheProvenKey: during a rotation's grace period a
// caller holding only the old key is answered under the old key, never the
// new one, and after the grace period not at all.
func TestAuthoriseSignsWithTheProvenKey(t *testing.T) {
	const newKey = "new-key-0123456789abcdef"
	account := func(until time.Time) *merchant.Account {
		return merchant.NewTestAccountRotating(models.Account{
			ID: testAccountID, MerchantID: testMerchantID, Active: true, CaptureMode: models.CaptureAuto,
			Currencies: []string{"USD"}, AmountLimits: map[string]int64{},
		}, newKey, testSignKey, until)
	}
	cases := []struct {
		name       string
		until      time.Time
		signKey    string
		cvv        string
		wantResult string
		wantKey    string // the key the answer is signed with; empty: unsigned
	}{
		{"old key in grace, refused CVV", testNow.Add(time.Hour), testSignKey, "73", "I0007:Invalid security code: security_code must be 3 digits (4 for American Express)", testSignKey},
		{"new key in grace, refused CVV", testNow.Add(time.Hour), newKey, "73", "I0007:Invalid security code: security_code must be 3 digits (4 for American Express)", newKey},
		{"old key in grace, paid", testNow.Add(time.Hour), testSignKey, testCVV, "0000:Success", testSignKey},
		{"old key after grace", testNow.Add(-time.Second), testSignKey, testCVV, "I0013:Signature verification failed", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := newTestEnv(t)
			env.accounts.accounts[testMerchantID+"/"+testAccountID] = account(tc.until)
			f := validCard()
			f["security_code"] = tc.cvv
			f.signWith(tc.signKey, cardRecipe)
			r := parseRespon(t, env.do(t, "/v1/authorise", ctJSON, f.json(t), ""))
			if r.ResultInfo != tc.wantResult {
				t.Fatalf("result_info = %q, want %q", r.ResultInfo, tc.wantResult)
			}
			want := ""
			if tc.wantKey != "" {
				want = signing.SignUpper(tc.wantKey, r.MerchantID, r.AccountID, r.TransactionID, r.OrderNo, r.Currency,
					r.Amount, r.OrderStatus, r.ResultInfo)
			}
			if r.EncryptionData != want {
				t.Errorf("encryption_data = %q, want %q", r.EncryptionData, want)
			}
		})
	}
}

// TestAuthoriseRefusalEchoesOnlyWellFormedValues: a signed refusal carries
// order_no, currency and amount only when they are well-formed, so no
// caller-shaped text reaches a signed answer.
func TestAuthoriseRefusalEchoesOnlyWellFormedValues(t *testing.T) {
	cases := []struct {
		name                           string
		field, value                   string
		wantNo, wantCurrency, wantAmnt string
		wantResult                     string
	}{
		{"unknown currency", "currency", "XYZ", "ORD-2026-0002", "", "", "I0004:Currency not supported for this account: unknown currency XYZ"},
		{"malformed amount", "amount", "12.345", "ORD-2026-0002", "USD", "", "I0003:Invalid amount: amount must be a positive decimal with at most two fraction digits"},
		{"order_no with a space", "order_no", "ORD 1", "", "USD", "12.34", "I0008:Invalid field value: order_no must be 1 to 64 printable characters without spaces"},
		{"a subscription charge's order_no", "order_no", "R1379868670095785984-c4", "R1379868670095785984-c4", "USD", "12.34",
			"I0008:Invalid field value: order_no of the form R<19 digits>-c<n> is the gateway's own, for subscription charges"},
		{"digit in first_name", "first_name", "4Ada", "ORD-2026-0002", "USD", "12.34", "I0008:Invalid field value: first_name must not contain digits"},
		{"digit in last_name", "last_name", "Lovelace4", "ORD-2026-0002", "USD", "12.34", "I0008:Invalid field value: last_name must not contain digits"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := newTestEnv(t)
			f := validCard()
			f[tc.field] = tc.value
			f.signWith(testSignKey, cardRecipe)
			r := parseRespon(t, env.do(t, "/v1/authorise", ctJSON, f.json(t), ""))
			if r.ResultInfo != tc.wantResult {
				t.Fatalf("result_info = %q, want %q", r.ResultInfo, tc.wantResult)
			}
			if r.OrderNo != tc.wantNo || r.Currency != tc.wantCurrency || r.Amount != tc.wantAmnt {
				t.Errorf("echo = %q %q %q, want %q %q %q", r.OrderNo, r.Currency, r.Amount, tc.wantNo, tc.wantCurrency, tc.wantAmnt)
			}
			want := signing.SignUpper(testSignKey, r.MerchantID, r.AccountID, r.TransactionID, r.OrderNo, r.Currency,
				r.Amount, r.OrderStatus, r.ResultInfo)
			if r.EncryptionData != want {
				t.Errorf("encryption_data = %q, want %q", r.EncryptionData, want)
			}
		})
	}
}
