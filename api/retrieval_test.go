package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/paygate/paygate/internal/domain/codes"
)

// validQuery is a correctly signed query from a registered address.
func validQuery() fields {
	return fields{"merchant_id": testMerchantID, "account_id": testAccountID, "orders": "ORD-1"}.
		signWith(testSignKey, []string{"merchant_id", "account_id"})
}

// TestRetrievalTransRefuses covers the refusals answered before any database
// read: the Server has no DB, so reaching one would panic and answer 503.
func TestRetrievalTransRefuses(t *testing.T) {
	querySig := []string{"merchant_id", "account_id"}
	numbered := func(prefix string, n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprintf("%s%03d", prefix, i)
		}
		return strings.Join(parts, ",")
	}
	cases := []struct {
		name       string
		mutate     func(f fields)
		body       []byte
		remoteAddr string
		header     map[string]string
		wantCode   codes.Code
		wantHTTP   int
	}{
		{
			name: "I0001 missing merchant_id", wantCode: codes.MissingField,
			mutate: func(f fields) { delete(f, "merchant_id"); f.signWith(testSignKey, querySig) },
		},
		{
			name: "I0001 missing account_id", wantCode: codes.MissingField,
			mutate: func(f fields) { delete(f, "account_id"); f.signWith(testSignKey, querySig) },
		},
		{
			name: "I0001 blank ids", wantCode: codes.MissingField,
			mutate: func(f fields) { f["merchant_id"], f["account_id"] = " ", " "; f.signWith(testSignKey, querySig) },
		},
		{
			name: "I0001 start_time without end_time", wantCode: codes.MissingField,
			mutate: func(f fields) { delete(f, "orders"); f["start_time"] = "20260614000000" },
		},
		{
			// A query of the orders as they changed takes back only the
			// cursor it was given.
			name: "I0008 a cursor not ours", wantCode: codes.InvalidField,
			mutate: func(f fields) { delete(f, "orders"); f["cursor"] = "1379868670095785984" },
		},
		{
			name: "I0008 time window the wrong way round", wantCode: codes.InvalidField,
			mutate: func(f fields) {
				delete(f, "orders")
				f["start_time"], f["end_time"] = "20260615000000", "20260614000000"
			},
		},
		{
			name: "I0002 unknown account", wantCode: codes.UnknownMerchant,
			mutate: func(f fields) { f["account_id"] = "10086999"; f.signWith(testSignKey, querySig) },
		},
		{
			name: "I0013 wrong signature", wantCode: codes.BadSignature,
			mutate: func(f fields) { f["encryption_data"] = strings.Repeat("a", 64) },
		},
		{
			name: "I0013 missing signature", wantCode: codes.BadSignature,
			mutate: func(f fields) { delete(f, "encryption_data") },
		},
		{
			name: "I0013 signature by another key", wantCode: codes.BadSignature,
			mutate: func(f fields) { f.signWith(otherSignKey, querySig) },
		},
		{
			name: "I0014 unregistered caller", wantCode: codes.IPNotAllowed,
			remoteAddr: "203.0.113.9:5555",
		},
		{
			name: "I0014 default test address", wantCode: codes.IPNotAllowed,
			remoteAddr: "192.0.2.1:1234",
		},
		{
			name: "I0014 forwarded header does not get around the allow-list", wantCode: codes.IPNotAllowed,
			remoteAddr: "203.0.113.9:5555",
			header:     map[string]string{"X-Forwarded-For": testQueryIP, "X-Real-IP": testQueryIP},
		},
		{
			name: "I0015 101 order numbers", wantCode: codes.TooManyOrders,
			mutate: func(f fields) { f["orders"] = numbered("ORD-", 101) },
		},
		{
			name: "I0015 orders and trades over 100 together", wantCode: codes.TooManyOrders,
			mutate: func(f fields) { f["orders"], f["trades"] = numbered("ORD-", 60), numbered("1379868670095785", 41) },
		},
		{
			name: "I0010 malformed body", wantCode: codes.MalformedRequest,
			body: []byte(`{"merchant_id":`),
		},
		{
			name: "I0011 body of 2 MiB", wantCode: codes.RequestTooLarge, wantHTTP: http.StatusRequestEntityTooLarge,
			body: []byte(`{"orders":"` + strings.Repeat("x", 2<<20) + `"}`),
		},
	}
	for _, c := range cases {
		for _, ct := range []string{ctForm, ctJSON} {
			t.Run(c.name+" "+ct, func(t *testing.T) {
				env := newTestEnv(t)
				body := c.body
				if body == nil {
					f := validQuery()
					if c.mutate != nil {
						c.mutate(f)
					}
					body = f.form(t)
					if ct == ctJSON {
						body = f.json(t)
					}
				}
				remote := c.remoteAddr
				if remote == "" {
					remote = testQueryIP + ":40000"
				}
				req := newPost(t, "/v1/retrievalTrans", ct, body, remote)
				for k, v := range c.header {
					req.Header.Set(k, v)
				}
				rec := serve(env, req)
				wantHTTP := c.wantHTTP
				if wantHTTP == 0 {
					wantHTTP = http.StatusOK
				}
				if rec.Code != wantHTTP {
					t.Errorf("HTTP status = %d, want %d; body %s", rec.Code, wantHTTP, rec.Body.String())
				}
				var resp struct {
					ReturnStatus  string            `json:"return_status"`
					ReturnMessage string            `json:"return_message"`
					OrdersList    []json.RawMessage `json:"orders_list"`
				}
				if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
					t.Fatalf("answer is not JSON: %v; %s", err, rec.Body.String())
				}
				if resp.ReturnStatus != "0" {
					t.Errorf("return_status = %q, want 0", resp.ReturnStatus)
				}
				got := codes.Parse(resp.ReturnMessage)
				if got.ID != c.wantCode.ID {
					t.Errorf("return_message code = %s (%q), want %s", got.ID, resp.ReturnMessage, c.wantCode.ID)
				}
				if !strings.HasPrefix(resp.ReturnMessage, c.wantCode.String()) {
					t.Errorf("return_message = %q, want it to start with %q", resp.ReturnMessage, c.wantCode.String())
				}
				if resp.OrdersList == nil || len(resp.OrdersList) != 0 {
					t.Errorf("orders_list = %v, want []", resp.OrdersList)
				}
			})
		}
	}
}

// TestRetrievalTransAccountLoadError answers S0001 when accounts cannot be read.
func TestRetrievalTransAccountLoadError(t *testing.T) {
	env := newTestEnv(t)
	env.accounts.err = errors.New("database down")
	rec := serve(env, newPost(t, "/v1/retrievalTrans", ctForm, validQuery().form(t), testQueryIP+":40000"))
	var resp struct {
		ReturnStatus  string `json:"return_status"`
		ReturnMessage string `json:"return_message"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
		t.Fatal(err)
	}
	if got := codes.Parse(resp.ReturnMessage).ID; got != codes.SystemError.ID || resp.ReturnStatus != "0" {
		t.Errorf("answer = %s %q, want 0 %s", resp.ReturnStatus, resp.ReturnMessage, codes.SystemError.ID)
	}
}

// TestQueryAddressBehindLoadBalancer: the query's allow-list (interface,
// Authentication 4: "usable only from IP addresses registered beforehand")
// reads the client's address from X-Forwarded-For only when the TCP peer
// is a load balancer the deployment trusts; anyone else's header is
// ignored.
func TestQueryAddressBehindLoadBalancer(t *testing.T) {
	const balancer = "10.1.2.3"
	tests := []struct {
		name      string
		trusted   []string
		peer, xff string
		allowed   bool
	}{
		{"no balancer trusted: the peer", nil, testQueryIP, "", true},
		{"no balancer trusted: a header ignored", nil, "203.0.113.9", testQueryIP, false},
		{"a trusted balancer forwards the registered address", []string{balancer}, balancer, testQueryIP, true},
		{"a trusted range forwards it", []string{"10.1.0.0/16"}, balancer, testQueryIP, true},
		{"a trusted balancer forwards another address", []string{balancer}, balancer, "203.0.113.9", false},
		{"the client's own header before the balancer's is not believed", []string{balancer}, balancer, testQueryIP + ", 203.0.113.9", false},
		{"an untrusted peer's header is not believed", []string{balancer}, "203.0.113.9", testQueryIP, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newTestEnv(t)
			env.srv.TrustedProxies = tc.trusted
			env.handler = env.srv.Handler()
			req := newPost(t, "/v1/retrievalTrans", ctForm, validQuery().form(t), tc.peer+":40000")
			if tc.xff != "" {
				req.Header.Set("X-Forwarded-For", tc.xff)
			}
			rec := serve(env, req)
			// Past the allow-list the test server has no record and answers
			// a system error; before it, I0014.
			refused := strings.Contains(rec.Body.String(), codes.IPNotAllowed.ID)
			if refused == tc.allowed {
				t.Errorf("answer %d %s; want allowed %t", rec.Code, rec.Body.String(), tc.allowed)
			}
		})
	}
}
