package api

import (
	"bytes"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/paygate/paygate/api/flows"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/signing"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

// updateCorpus rewrites the corpus's recorded answers from this build:
// go test ./api -run TestRecordedCorpus -update-corpus.
var updateCorpus = flag.Bool("update-corpus", false, "record the request corpus's answers again (api/testdata/corpus.txt)")

const corpusFile = "testdata/corpus.txt"

// corpusRequest is one request of the recorded corpus.
type corpusRequest struct {
	name        string
	batch       bool // sent to the batch server (fake operations and orders)
	method      string
	path        string
	contentType string
	body        []byte
	remote      string
	// setup, when set, prepares the servers for this request only.
	setup func(plain *testEnv, batch *batchEnv)
}

// corpusRequests are requests to every endpoint, good and bad: the answers
// a merchant's code was written against.
func corpusRequests(t *testing.T) []corpusRequest {
	t.Helper()
	post := func(name, path, ct string, body []byte) corpusRequest {
		return corpusRequest{name: name, method: http.MethodPost, path: path, contentType: ct, body: body}
	}
	card := validCard()
	edited := func(edit func(fields)) fields {
		f := validCard().clone()
		edit(f)
		return f
	}
	resigned := func(edit func(fields)) fields {
		f := edited(edit)
		return f.signWith(testSignKey, cardRecipe)
	}
	declined := post("authorise declined", "/v1/authorise", ctJSON, card.json(t))
	declined.setup = func(plain *testEnv, _ *batchEnv) {
		plain.orders.result = func(in workflows.OrderInput) (workflows.PaymentResult, error) { return declinedResult(in), nil }
	}
	// The query goes to the batch server, whose record holds the order.
	query := fields{"merchant_id": testMerchantID, "account_id": testAccountID, "trades": txA}
	query["encryption_data"] = signing.Sign(testSignKey, testMerchantID, testAccountID)
	queryReq := post("query from the allowed address", "/v1/retrievalTrans", ctJSON, query.json(t))
	queryReq.remote = testQueryIP + ":4000"
	queryReq.batch = true
	queryElsewhere := post("query from another address", "/v1/retrievalTrans", ctJSON, query.json(t))
	queryElsewhere.remote = "203.0.113.99:4000"

	reqs := []corpusRequest{
		{name: "health", method: http.MethodGet, path: "/healthz"},
		{name: "unknown path", method: http.MethodGet, path: "/v1/nothing"},
		post("authorise JSON", "/v1/authorise", ctJSON, card.json(t)),
		post("authorise form", "/v1/authorise", ctForm, card.form(t)),
		declined,
		post("authorise bad signature", "/v1/authorise", ctJSON, edited(func(f fields) { f["encryption_data"] = strings.Repeat("0", 64) }).json(t)),
		post("authorise without amount", "/v1/authorise", ctJSON, resigned(func(f fields) { delete(f, "amount") }).json(t)),
		post("authorise three decimals", "/v1/authorise", ctJSON, resigned(func(f fields) { f["amount"] = "12.345" }).json(t)),
		post("authorise card failing Luhn", "/v1/authorise", ctJSON, resigned(func(f fields) { f["card"] = "4111111111111112" }).json(t)),
		post("authorise expired card", "/v1/authorise", ctJSON, resigned(func(f fields) { f["expiration_year"] = "2020" }).json(t)),
		post("authorise unknown account", "/v1/authorise", ctJSON, resigned(func(f fields) { f["account_id"] = "99999999" }).json(t)),
		post("authorise unknown currency", "/v1/authorise", ctJSON, resigned(func(f fields) { f["currency"] = "XXX" }).json(t)),
		post("authorise truncated JSON", "/v1/authorise", ctJSON, []byte(`{"merchant_id":"10086",`)),
		post("authorise empty body", "/v1/authorise", ctJSON, nil),
		queryReq,
		queryElsewhere,
		post("checkout page", "/v1/checkout", ctJSON, card.json(t)),
		post("checkout pay without session", "/v1/checkout/pay", ctForm, []byte("session=nope")),
		post("checkout cancel without session", "/v1/checkout/cancel", ctForm, []byte("session=nope")),
		post("3-D Secure callback, no connector", "/v1/3ds/callback", ctForm, []byte("authentication_id=a1&status=authenticated")),
		post("APM callback, no connector", "/v1/apm/callback", ctJSON, []byte(`{"payment_id":"p1","status":"paid"}`)),
		post("payout, none configured", "/v1/payout", ctJSON, fields{"merchant_id": testMerchantID, "account_id": testAccountID}.json(t)),
		post("payout query, none configured", "/v1/payout/query", ctJSON, fields{"merchant_id": testMerchantID, "account_id": testAccountID}.json(t)),
		post("optimise, no offers", "/v1/optimise", ctJSON, fields{"merchant_id": testMerchantID, "account_id": testAccountID}.json(t)),
		post("token delete, no record", "/v1/token/delete", ctJSON, fields{"merchant_id": testMerchantID, "account_id": testAccountID, "token_id": "t1"}.json(t)),
		post("cancel subscription, no record", "/v1/cancelsubscription", ctJSON, fields{"merchant_id": testMerchantID, "account_id": testAccountID, "recurring_id": "r1"}.json(t)),
		post("admin resend, admin off", "/admin/notifications/resend", ctJSON, []byte(`{}`)),
		{name: "admin re-runs, admin off", method: http.MethodGet, path: "/admin/payouts/reruns"},
		post("admin erase, admin off", "/admin/shoppers/erase", ctJSON, []byte(`{}`)),
		post("codec, none configured", "/codec/encode", ctJSON, []byte(`{"payloads":[]}`)),
	}
	for _, ep := range batchEndpoints {
		good := batchFields(ep.array, testSignKey, ep.sample(txA))
		reqs = append(reqs,
			corpusRequest{name: ep.path + " one entry", batch: true, method: http.MethodPost, path: ep.path, contentType: ctJSON, body: good.json(t)},
			corpusRequest{name: ep.path + " bad signature", batch: true, method: http.MethodPost, path: ep.path, contentType: ctJSON,
				body: func() []byte { f := good.clone(); f["encryption_data"] = strings.Repeat("A", 64); return f.json(t) }()},
			corpusRequest{name: ep.path + " entry naming another amount", batch: true, method: http.MethodPost, path: ep.path, contentType: ctJSON,
				body: batchFields(ep.array, testSignKey, func() map[string]any { e := ep.sample(txA); e["amount"] = "99.00"; return e }()).json(t)},
			corpusRequest{name: ep.path + " unknown order", batch: true, method: http.MethodPost, path: ep.path, contentType: ctForm,
				body: batchFields(ep.array, testSignKey, ep.sample("1379868670095000999")).form(t)},
		)
	}
	refused := corpusRequest{name: "refund refused by the order", batch: true, method: http.MethodPost, path: "/v1/refund", contentType: ctJSON,
		body: batchFields("refund_orders", testSignKey, entry(txB, "refund_amount", "500.00")).json(t)}
	refused.setup = func(_ *testEnv, b *batchEnv) {
		b.ops.answer = func(string, workflows.EntryRef, any) (workflows.OperationResult, error) {
			return workflows.OperationResult{}, &flows.ErrEntryRefused{Code: codes.InvalidAmount.ID, Message: "Invalid amount: refund_amount exceeds the refundable 10000 minor units"}
		}
	}
	refundQuery := fields{"merchant_id": testMerchantID, "account_id": testAccountID, "trades": txA}
	refundQuery["encryption_data"] = signing.Sign(testSignKey, testMerchantID, testAccountID)
	rq := corpusRequest{name: "refund query", batch: true, method: http.MethodPost, path: "/v1/retrievalRefund", contentType: ctJSON,
		body: refundQuery.json(t), remote: testQueryIP + ":4000"}
	rq.setup = func(_ *testEnv, b *batchEnv) {
		b.store.refunds = []models.Refund{{RefundReferenceID: txA + "-01", TransactionID: txA, MerchantID: testMerchantID,
			AccountID: testAccountID, OrderNo: "ORD-984", Currency: "USD", Amount: 1000, Status: "succeeded",
			ResultCode: "0000", ResultMessage: "Success", AcquirerRef: "re_1", CreatedAt: testNow, UpdatedAt: testNow}}
	}
	return append(reqs, refused, rq)
}

// recordCorpus serves every request of the corpus and returns the answers
// in the recording's form.
func recordCorpus(t *testing.T) []byte {
	var got bytes.Buffer
	for _, r := range corpusRequests(t) {
		plain, batch := newTestEnv(t), newBatchEnv(t)
		if r.setup != nil {
			r.setup(plain, batch)
		}
		env := plain
		if r.batch {
			env = batch.testEnv
		}
		req := httptest.NewRequest(r.method, r.path, bytes.NewReader(r.body))
		if r.contentType != "" {
			req.Header.Set("Content-Type", r.contentType)
		}
		if r.remote != "" {
			req.RemoteAddr = r.remote
		}
		rec := serve(env, req)
		fmt.Fprintf(&got, "=== %s\n%s %s %s\n%s\n--- %d %s\n%s\n\n", r.name, r.method, r.path, r.contentType, r.body,
			rec.Code, rec.Header().Get("Content-Type"), rec.Body.String())
	}
	return got.Bytes()
}
