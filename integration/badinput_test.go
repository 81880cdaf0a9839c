package integration

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/models"
)

// TestMalformedRequestsRecordNothing sends broken and refused requests and
// checks that each gets a clear code, never a 500, and leaves no order and
// no card behind.
func TestMalformedRequestsRecordNothing(t *testing.T) {
	creds := env.auto
	valid := func(orderNo string) map[string]string {
		return signCard(cardOrder(creds, orderNo, "4242424242424242"), creds.SignKey)
	}
	tests := []struct {
		name       string
		build      func(orderNo string) (contentType, body string)
		httpStatus int
		code       codes.Code
	}{
		{"truncated JSON", func(no string) (string, string) {
			b := jsonBody(t, valid(no))
			return "application/json", b[:len(b)/2]
		}, 200, codes.MalformedRequest},
		{"amount is an object", func(no string) (string, string) {
			b := jsonBody(t, valid(no))
			return "application/json", strings.Replace(b, `"amount":"12.34"`, `"amount":{"v":1}`, 1)
		}, 200, codes.MalformedRequest},
		{"cart_items is a number", func(no string) (string, string) {
			b := jsonBody(t, valid(no))
			return "application/json", strings.Replace(b, `{`, `{"cart_items":7,`, 1)
		}, 200, codes.MalformedRequest},
		{"2 MiB body", func(no string) (string, string) {
			f := valid(no)
			f["note"] = strings.Repeat("x", 2<<20)
			return formType, form(f)
		}, 413, codes.RequestTooLarge},
		{"missing card fields", func(no string) (string, string) {
			f := valid(no)
			delete(f, "security_code")
			delete(f, "expiration_month")
			return formType, form(signCard(f, creds.SignKey))
		}, 200, codes.MissingField},
		{"missing order_no", func(no string) (string, string) {
			f := valid(no)
			delete(f, "order_no")
			return formType, form(signCard(f, creds.SignKey))
		}, 200, codes.MissingField},
		{"bad signature", func(no string) (string, string) {
			f := valid(no)
			f["amount"] = "12.35"
			return formType, form(f)
		}, 200, codes.BadSignature},
		{"bad Luhn", func(no string) (string, string) {
			return formType, form(signCard(cardOrder(creds, no, "4242424242424241"), creds.SignKey))
		}, 200, codes.InvalidCardNumber},
		{"expired card", func(no string) (string, string) {
			f := cardOrder(creds, no, "4242424242424242")
			f["expiration_year"] = "2020"
			return formType, form(signCard(f, creds.SignKey))
		}, 200, codes.InvalidExpiry},
		{"three fraction digits", func(no string) (string, string) {
			f := cardOrder(creds, no, "4242424242424242")
			f["amount"] = "12.345"
			return formType, form(signCard(f, creds.SignKey))
		}, 200, codes.InvalidAmount},
		{"currency not enabled", func(no string) (string, string) {
			f := cardOrder(creds, no, "4242424242424242")
			f["currency"] = "GBP"
			return formType, form(signCard(f, creds.SignKey))
		}, 200, codes.UnsupportedCurrency},
		{"not a form nor JSON", func(no string) (string, string) {
			return formType, "%zz%"
		}, 200, codes.MalformedRequest},
		{"empty body", func(no string) (string, string) {
			return "application/json", ""
		}, 200, codes.MalformedRequest},
	}
	ctx := context.Background()
	vaultRows := func() int64 {
		var n int64
		if err := env.gw.DB.WithContext(ctx).Model(&models.VaultCard{}).Count(&n).Error; err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			orderNo := newOrderNo(t)
			before := vaultRows()
			ct, body := tc.build(orderNo)
			status, r := authoriseBody(t, ct, body)
			if status != tc.httpStatus {
				t.Errorf("HTTP status = %d, want %d", status, tc.httpStatus)
			}
			if got := codes.Parse(r.ResultInfo); got.ID != tc.code.ID || r.OrderStatus != "0" {
				t.Errorf("result_info = %q order_status %q, want code %s and 0", r.ResultInfo, r.OrderStatus, tc.code.ID)
			}
			if _, err := models.FindOrderByNo(ctx, env.gw.DB, creds.AccountID, orderNo); err != models.ErrNotFound {
				t.Errorf("an order was recorded for a refused request (err %v)", err)
			}
			if after := vaultRows(); after != before {
				t.Errorf("vault rows %d → %d for a refused request", before, after)
			}
		})
	}
}

func TestUnknownPathsAndMethods(t *testing.T) {
	resp, err := http.Get(env.api.URL + "/v1/authorise")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /v1/authorise = %d", resp.StatusCode)
	}
}
