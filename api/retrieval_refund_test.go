package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/models"
)

var querySigned = []string{"merchant_id", "account_id"}

// validRefundQuery is a correctly signed refund query by transaction id.
func validRefundQuery() fields {
	return fields{"merchant_id": testMerchantID, "account_id": testAccountID, "trades": txA}.signWith(testSignKey, querySigned)
}

// refundReply is a refund query answer as a test reads it.
type refundReply struct {
	MerchantID    string          `json:"merchant_id"`
	AccountID     string          `json:"account_id"`
	ReturnStatus  string          `json:"return_status"`
	ReturnMessage string          `json:"return_message"`
	RefundList    []QueriedRefund `json:"refund_list"`
	raw           map[string]json.RawMessage
}

func postRefundQuery(t *testing.T, env *batchEnv, req *http.Request) (int, refundReply) {
	t.Helper()
	rec := serve(env.testEnv, req)
	var r refundReply
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
		t.Fatalf("answer is not JSON: %v; %s", err, rec.Body.String())
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &r.raw); err != nil {
		t.Fatal(err)
	}
	return rec.Code, r
}

func numberedList(prefix string, n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf("%s%03d", prefix, i)
	}
	return strings.Join(parts, ",")
}

func TestRetrievalRefundRefuses(t *testing.T) {
	cases := []struct {
		name       string
		mutate     func(f fields)
		body       []byte
		remoteAddr string
		header     map[string]string
		wantCode   codes.Code
		detailed   bool // the message goes on with a detail of the error
		wantHTTP   int
	}{
		{
			name: "I0001 missing merchant_id", wantCode: codes.MissingField.With("merchant_id"),
			mutate: func(f fields) { delete(f, "merchant_id"); f.signWith(testSignKey, querySigned) },
		},
		{
			name: "I0001 blank account_id", wantCode: codes.MissingField.With("account_id"),
			mutate: func(f fields) { f["account_id"] = " "; f.signWith(testSignKey, querySigned) },
		},
		{
			name: "I0001 no selection", wantCode: codes.MissingField.With("trades or refund_reference_id"),
			mutate: func(f fields) { delete(f, "trades") },
		},
		{
			name: "I0001 only separators", wantCode: codes.MissingField.With("trades or refund_reference_id"),
			mutate: func(f fields) { f["trades"], f["refund_reference_id"] = " , ,", "," },
		},
		{
			name: "I0002 unknown account", wantCode: codes.UnknownMerchant,
			mutate: func(f fields) { f["account_id"] = "10086999"; f.signWith(testSignKey, querySigned) },
		},
		{
			name: "I0013 wrong signature", wantCode: codes.BadSignature,
			mutate: func(f fields) { f["encryption_data"] = strings.Repeat("b", 64) },
		},
		{
			name: "I0013 missing signature", wantCode: codes.BadSignature,
			mutate: func(f fields) { delete(f, "encryption_data") },
		},
		{
			name: "I0013 signed with another key", wantCode: codes.BadSignature,
			mutate: func(f fields) { f.signWith(otherSignKey, querySigned) },
		},
		{
			name: "I0014 unregistered caller", wantCode: codes.IPNotAllowed.With("203.0.113.9"),
			remoteAddr: "203.0.113.9:5555",
		},
		{
			name: "I0014 forwarded header does not get around the allow-list", wantCode: codes.IPNotAllowed.With("203.0.113.9"),
			remoteAddr: "203.0.113.9:5555",
			header:     map[string]string{"X-Forwarded-For": testQueryIP, "X-Real-IP": testQueryIP},
		},
		{
			name: "I0015 101 trades", wantCode: codes.TooManyOrders.With("at most 100 trades and refund_reference_id together"),
			mutate: func(f fields) { f["trades"] = numberedList("1379868670095785", 101) },
		},
		{
			name: "I0015 trades and refund ids over 100 together", wantCode: codes.TooManyOrders.With("at most 100 trades and refund_reference_id together"),
			mutate: func(f fields) {
				f["trades"], f["refund_reference_id"] = numberedList("1379868670095785", 60), numberedList(txA+"-", 41)
			},
		},
		{
			name: "I0010 malformed body", wantCode: codes.MalformedRequest, detailed: true,
			body: []byte(`{"merchant_id":`),
		},
		{
			name: "I0011 body of 2 MiB", wantCode: codes.RequestTooLarge, wantHTTP: http.StatusRequestEntityTooLarge,
			body: []byte(`{"trades":"` + strings.Repeat("1", 2<<20) + `"}`),
		},
	}
	for _, c := range cases {
		for _, ct := range []string{ctForm, ctJSON} {
			t.Run(c.name+"/"+ct, func(t *testing.T) {
				env := newBatchEnv(t)
				body := c.body
				if body == nil {
					f := validRefundQuery()
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
				req := newPost(t, "/v1/retrievalRefund", ct, body, remote)
				for k, v := range c.header {
					req.Header.Set(k, v)
				}
				code, r := postRefundQuery(t, env, req)
				wantHTTP := c.wantHTTP
				if wantHTTP == 0 {
					wantHTTP = http.StatusOK
				}
				if code != wantHTTP {
					t.Errorf("HTTP status = %d, want %d", code, wantHTTP)
				}
				wantMessage := c.wantCode.String()
				if c.detailed && strings.HasPrefix(r.ReturnMessage, wantMessage+": ") {
					wantMessage = r.ReturnMessage
				}
				if r.ReturnStatus != "0" || r.ReturnMessage != wantMessage {
					t.Errorf("return = %q %q, want 0 %q", r.ReturnStatus, r.ReturnMessage, c.wantCode.String())
				}
				if string(r.raw["refund_list"]) != "[]" {
					t.Errorf("refund_list = %s, want []", r.raw["refund_list"])
				}
				if len(env.store.queries) != 0 {
					t.Errorf("refunds queried %v, want not at all", env.store.queries)
				}
			})
		}
	}
}

func TestRetrievalRefundSelection(t *testing.T) {
	created := time.Date(2026, time.June, 14, 23, 30, 5, 0, time.FixedZone("CEST", 2*3600))
	settled := time.Date(2026, time.June, 15, 8, 0, 0, 0, time.UTC)
	refunds := []models.Refund{
		{RefundReferenceID: txA + "-01", TransactionID: txA, MerchantID: testMerchantID, AccountID: testAccountID,
			OrderNo: "ORD-984", Currency: "USD", Amount: 3050, Reason: "damaged", Status: models.RefundSucceeded,
			ResultCode: "0000", ResultMessage: "Success", AcquirerRef: "re_1", CreatedAt: created, SettledAt: &settled},
		{RefundReferenceID: txA + "-02", TransactionID: txA, MerchantID: testMerchantID, AccountID: testAccountID,
			OrderNo: "ORD-984", Currency: "USD", Amount: 100, Status: models.RefundPending,
			ResultCode: "0001", ResultMessage: "Pending at the acquirer", AcquirerRef: "re_2", CreatedAt: created},
		{RefundReferenceID: txB + "-01", TransactionID: txB, MerchantID: testMerchantID, AccountID: testAccountID,
			OrderNo: "ORD-985", Currency: "JPY", Amount: 1500, Reason: "late", Status: models.RefundFailed,
			ResultCode: "C0001", ResultMessage: "Acquirer error", CreatedAt: created, SettledAt: &settled},
		{RefundReferenceID: txOther + "-01", TransactionID: txOther, MerchantID: "10087", AccountID: "10087001",
			OrderNo: "X", Currency: "USD", Amount: 100, Status: models.RefundSucceeded, CreatedAt: created},
	}
	a1 := QueriedRefund{TransactionID: txA, OrderNo: "ORD-984", Currency: "USD", RefundAmount: "30.50", RefundReason: "damaged",
		RefundStatus: "1", RefundMessage: "0000:Success", RefundReference: "re_1", RefundReferenceID: txA + "-01",
		RefundDate: "20260614213005", SettledDate: "20260615080000", QueryResult: "1"}
	a2 := QueriedRefund{TransactionID: txA, OrderNo: "ORD-984", Currency: "USD", RefundAmount: "1.00",
		RefundStatus: "-1", RefundMessage: "0001:Pending at the acquirer", RefundReference: "re_2", RefundReferenceID: txA + "-02",
		RefundDate: "20260614213005", QueryResult: "1"}
	b1 := QueriedRefund{TransactionID: txB, OrderNo: "ORD-985", Currency: "JPY", RefundAmount: "1500", RefundReason: "late",
		RefundStatus: "0", RefundMessage: "C0001:Acquirer error", RefundReferenceID: txB + "-01",
		RefundDate: "20260614213005", SettledDate: "20260615080000", QueryResult: "1"}
	// An id named and not found is answered with an entry that says so,
	// as the order query answers query_result 0 (issue 29).
	noTrade := func(tx string) QueriedRefund {
		return QueriedRefund{TransactionID: tx, QueryResult: "0", RefundMessage: "I0031:Refund not found"}
	}
	noID := func(id string) QueriedRefund {
		return QueriedRefund{RefundReferenceID: id, QueryResult: "0", RefundMessage: "I0031:Refund not found"}
	}
	var hundred []QueriedRefund
	for _, tx := range strings.Split(numberedList("1379868670095785", 50), ",") {
		hundred = append(hundred, noTrade(tx))
	}
	for _, id := range strings.Split(numberedList(txA+"-", 50), ",") {
		hundred = append(hundred, noID(id))
	}
	cases := []struct {
		name       string
		trades     string
		refundIDs  string
		wantTrades []string
		wantIDs    []string
		want       []QueriedRefund
	}{
		{name: "by trade", trades: txA, wantTrades: []string{txA}, want: []QueriedRefund{a1, a2}},
		{name: "by refund id", refundIDs: txB + "-01", wantIDs: []string{txB + "-01"}, want: []QueriedRefund{b1}},
		{name: "both, padded", trades: " " + txB + " , ", refundIDs: txA + "-02 ,," + txA + "-01",
			wantTrades: []string{txB}, wantIDs: []string{txA + "-02", txA + "-01"}, want: []QueriedRefund{a1, a2, b1}},
		{name: "another account's refund is not found", trades: txOther, wantTrades: []string{txOther}, want: []QueriedRefund{noTrade(txOther)}},
		{name: "a refund id not found beside one found", refundIDs: txB + "-01," + txB + "-02", wantIDs: []string{txB + "-01", txB + "-02"},
			want: []QueriedRefund{b1, noID(txB + "-02")}},
		{name: "100 together", trades: numberedList("1379868670095785", 50), refundIDs: numberedList(txA+"-", 50),
			wantTrades: strings.Split(numberedList("1379868670095785", 50), ","),
			wantIDs:    strings.Split(numberedList(txA+"-", 50), ","), want: hundred},
	}
	for _, c := range cases {
		for _, ct := range []string{ctForm, ctJSON} {
			t.Run(c.name+"/"+ct, func(t *testing.T) {
				env := newBatchEnv(t)
				env.store.refunds = refunds
				f := fields{"merchant_id": testMerchantID, "account_id": testAccountID}.signWith(testSignKey, querySigned)
				if c.trades != "" {
					f["trades"] = c.trades
				}
				if c.refundIDs != "" {
					f["refund_reference_id"] = c.refundIDs
				}
				body := f.form(t)
				if ct == ctJSON {
					body = f.json(t)
				}
				code, r := postRefundQuery(t, env, newPost(t, "/v1/retrievalRefund", ct, body, testQueryIP+":40000"))
				if code != http.StatusOK || r.ReturnStatus != "1" || r.ReturnMessage != "OK" {
					t.Fatalf("answer = %d %q %q, want 200 1 OK", code, r.ReturnStatus, r.ReturnMessage)
				}
				if r.MerchantID != testMerchantID || r.AccountID != testAccountID {
					t.Errorf("ids = %q %q", r.MerchantID, r.AccountID)
				}
				if len(env.store.queries) != 1 || !reflect.DeepEqual(env.store.queries[0], [2][]string{c.wantTrades, c.wantIDs}) {
					t.Errorf("store queried with %q, want trades %q and ids %q", env.store.queries, c.wantTrades, c.wantIDs)
				}
				if !reflect.DeepEqual(r.RefundList, c.want) {
					t.Errorf("refund_list = %+v\nwant %+v", r.RefundList, c.want)
				}
			})
		}
	}
}

func TestRetrievalRefundSystemErrors(t *testing.T) {
	cases := []struct {
		name  string
		setup func(env *batchEnv)
	}{
		{"accounts cannot be read", func(env *batchEnv) { env.accounts.err = errors.New("database down") }},
		{"refunds cannot be read", func(env *batchEnv) { env.store.refundErr = errors.New("database down") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := newBatchEnv(t)
			c.setup(env)
			code, r := postRefundQuery(t, env, newPost(t, "/v1/retrievalRefund", ctForm, validRefundQuery().form(t), testQueryIP+":40000"))
			if code != http.StatusServiceUnavailable || r.ReturnStatus != "0" || r.ReturnMessage != codes.SystemError.String() {
				t.Errorf("answer = %d %q %q, want 503 0 %q", code, r.ReturnStatus, r.ReturnMessage, codes.SystemError.String())
			}
			if !strings.Contains(env.logs.String(), "database down") {
				t.Errorf("log lacks the cause")
			}
		})
	}
}
