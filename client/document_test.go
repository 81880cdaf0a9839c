package client_test

import (
	"cmp"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/api/admin"
	"github.com/paygate/paygate/api/disputes"
	"github.com/paygate/paygate/api/methods"
	"github.com/paygate/paygate/api/operations"
	"github.com/paygate/paygate/api/payments"
	"github.com/paygate/paygate/api/payouts"
	"github.com/paygate/paygate/api/queries"
	"github.com/paygate/paygate/api/subscriptions"
	"github.com/paygate/paygate/client"
)

// document is the gateway's /openapi.json, served by a server with every
// capability over nothing (as app.APIHandler builds it).
func document(t *testing.T) map[string]any {
	t.Helper()
	s := &api.Server{Admin: &admin.API{}, Logger: slog.New(slog.DiscardHandler)}
	s.Capabilities = []api.Capability{&payments.Handler{Gate: s}, operations.New(s, nil), payouts.New(s, nil),
		subscriptions.New(s, nil), disputes.New(s, nil, nil), methods.New(s), queries.New(s)}
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/openapi.json", nil))
	var doc map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatalf("GET /openapi.json: %d: %v", rec.Code, err)
	}
	return doc
}

// clientCall calls one operation through the client with every field of
// its request filled, and names the answer type the client decodes into.
type clientCall struct {
	path   string
	call   func(ctx context.Context, c *client.Client) error
	answer any
	tag    string // the answer's field tags: json or xml
}

func filled[T any]() T {
	var v T
	fill(reflect.ValueOf(&v).Elem())
	return v
}

// fill sets every string of v to "1", every slice to one element and
// every pointer to a value, all of them filled too.
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("1")
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0))
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i))
			}
		}
	}
}

func calls() []clientCall {
	return []clientCall{
		{client.PathAuthorise, func(ctx context.Context, c *client.Client) error {
			_, err := c.Authorise(ctx, filled[client.Payment]())
			return err
		}, client.PaymentResult{}, "xml"},
		{client.PathCheckout, func(ctx context.Context, c *client.Client) error {
			_, err := c.Checkout(ctx, filled[client.Order]())
			return err
		}, nil, ""},
		{client.PathCapture, func(ctx context.Context, c *client.Client) error {
			_, err := c.Capture(ctx, filled[[]client.CaptureEntry]())
			return err
		}, client.CaptureAnswer{}, "json"},
		{client.PathReview, func(ctx context.Context, c *client.Client) error {
			_, err := c.Review(ctx, filled[[]client.ReviewEntry]())
			return err
		}, client.ReviewAnswer{}, "json"},
		{client.PathCancel, func(ctx context.Context, c *client.Client) error {
			_, err := c.Cancel(ctx, filled[[]client.CancelEntry]())
			return err
		}, client.CancelAnswer{}, "json"},
		{client.PathRefund, func(ctx context.Context, c *client.Client) error {
			_, err := c.Refund(ctx, filled[[]client.RefundEntry]())
			return err
		}, client.RefundAnswer{}, "json"},
		{client.PathRetrievalTrans, func(ctx context.Context, c *client.Client) error {
			_, err := c.QueryOrders(ctx, filled[client.OrdersQuery]())
			return err
		}, client.OrdersPage{}, "json"},
		{client.PathRetrievalRefund, func(ctx context.Context, c *client.Client) error {
			_, err := c.QueryRefunds(ctx, filled[client.RefundsQuery]())
			return err
		}, client.RefundsAnswer{}, "json"},
		{client.PathPayout, func(ctx context.Context, c *client.Client) error {
			_, err := c.Payout(ctx, filled[client.Payout]())
			return err
		}, client.PayoutResult{}, "json"},
		{client.PathPayoutQuery, func(ctx context.Context, c *client.Client) error {
			_, err := c.PayoutQuery(ctx, "1")
			return err
		}, client.PayoutResult{}, "json"},
		{client.PathCancelSubscription, func(ctx context.Context, c *client.Client) error {
			_, err := c.CancelSubscription(ctx, "1")
			return err
		}, client.SubscriptionAnswer{}, "json"},
		{client.PathSubscription, func(ctx context.Context, c *client.Client) error {
			_, err := c.Subscription(ctx, filled[client.SubscriptionChange]())
			return err
		}, client.SubscriptionAnswer{}, "json"},
		{client.PathTokenDelete, func(ctx context.Context, c *client.Client) error {
			_, err := c.DeleteToken(ctx, "1")
			return err
		}, client.TokenAnswer{}, "json"},
		{client.PathDispute, func(ctx context.Context, c *client.Client) error {
			_, err := c.Dispute(ctx, filled[client.DisputeRequest]())
			return err
		}, client.DisputeAnswer{}, "json"},
		{client.PathOptimise, func(ctx context.Context, c *client.Client) error {
			_, err := c.Optimise(ctx, filled[client.OptimiseRequest]())
			return err
		}, client.OptimiseAnswer{}, "json"},
	}
}

// The request fields the client fills itself, or that stand for another:
// signInfo is the hosted page's name for encryption_data.
var filledByTheClient = []string{"merchant_id", "account_id", "encryption_data", "signInfo"}

// TestClientTypesFollowTheDocument: for every signed merchant operation of
// the document, the body the client sends with every field filled has
// exactly the documented request fields, and the client's answer type has
// exactly the fields of the documented answers, at every depth. A field
// added to the gateway and not to the client fails here.
func TestClientTypesFollowTheDocument(t *testing.T) {
	doc := document(t)
	var covered []string
	for _, cc := range calls() {
		t.Run(strings.TrimPrefix(cc.path, "/v1/"), func(t *testing.T) {
			covered = append(covered, cc.path)
			op, ok := pathOp(doc, cc.path)
			if !ok {
				t.Fatalf("%s is not in the document", cc.path)
			}
			var sent map[string]any
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				if err := json.Unmarshal(b, &sent); err != nil {
					t.Errorf("the client sent no JSON object: %v", err)
				}
				w.WriteHeader(http.StatusTeapot)
			}))
			defer srv.Close()
			c := client.New(srv.URL, client.Credentials{MerchantID: "1", AccountID: "2", SignKey: "k"},
				client.WithScheme(client.Compatible), client.WithRetry(client.Retry{Attempts: 1}))
			_ = cc.call(t.Context(), c) // the answer is a 418: only the request matters here
			var got []string
			walkJSON(sent, "", &got)
			want := schemaPaths(requestSchema(t, op), "")
			for _, f := range filledByTheClient[:3] {
				if !slices.Contains(want, f) || !slices.Contains(got, f) {
					t.Errorf("%s: documented %v, sent %v", f, slices.Contains(want, f), slices.Contains(got, f))
				}
			}
			ours := func(p string) bool { return slices.Contains(filledByTheClient, p) }
			got, want = slices.DeleteFunc(got, ours), slices.DeleteFunc(want, ours)
			compare(t, "request", got, want)
			if cc.answer == nil {
				return
			}
			compare(t, "answer", typePaths(reflect.TypeOf(cc.answer), cc.tag, ""), answerPaths(op))
		})
	}
	for path, ops := range doc["paths"].(map[string]any) {
		for _, o := range ops.(map[string]any) {
			if security(o) == "signed" && !slices.Contains(covered, path) {
				t.Errorf("the signed operation %s has no client call", path)
			}
		}
	}
}

func compare(t *testing.T, what string, got, want []string) {
	t.Helper()
	slices.Sort(got)
	slices.Sort(want)
	got, want = slices.Compact(got), slices.Compact(want)
	for _, p := range want {
		if !slices.Contains(got, p) {
			t.Errorf("%s field %s is documented but not in the client", what, p)
		}
	}
	for _, p := range got {
		if !slices.Contains(want, p) {
			t.Errorf("%s field %s is in the client but not documented", what, p)
		}
	}
}

func pathOp(doc map[string]any, path string) (map[string]any, bool) {
	ops, ok := doc["paths"].(map[string]any)[path].(map[string]any)
	if !ok {
		return nil, false
	}
	op, ok := ops["post"].(map[string]any)
	return op, ok
}

// security names how an operation is authenticated: "signed" for the
// merchant's signatures.
func security(op any) string {
	sec, _ := op.(map[string]any)["security"].([]any)
	for _, s := range sec {
		for name := range s.(map[string]any) {
			if name == "merchantSignature" {
				return "signed"
			}
		}
	}
	return ""
}

func requestSchema(t *testing.T, op map[string]any) map[string]any {
	t.Helper()
	content := op["requestBody"].(map[string]any)["content"].(map[string]any)
	m, ok := content["application/json"].(map[string]any)
	if !ok {
		t.Fatal("no JSON request body documented")
	}
	return m["schema"].(map[string]any)
}

// answerPaths are the fields of every documented answer of op.
func answerPaths(op map[string]any) []string {
	var out []string
	for _, r := range op["responses"].(map[string]any) {
		content, _ := r.(map[string]any)["content"].(map[string]any)
		for _, c := range content {
			if s, ok := c.(map[string]any)["schema"].(map[string]any); ok {
				out = append(out, schemaPaths(s, "")...)
			}
		}
	}
	return out
}

// schemaPaths lists a schema's properties at every depth as dotted paths,
// an array's items under "[]".
func schemaPaths(s map[string]any, prefix string) []string {
	var out []string
	if props, ok := s["properties"].(map[string]any); ok {
		for name, p := range props {
			out = append(out, prefix+name)
			out = append(out, schemaPaths(p.(map[string]any), prefix+name+".")...)
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		out = append(out, schemaPaths(items, prefix+"[].")...)
	}
	return out
}

// walkJSON lists a decoded JSON value's keys as schemaPaths does.
func walkJSON(v any, prefix string, out *[]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			*out = append(*out, prefix+k)
			walkJSON(x, prefix+k+".", out)
		}
	case []any:
		for _, x := range v {
			walkJSON(x, prefix+"[].", out)
		}
	}
}

// typePaths lists a Go type's fields as its encoding names them (tag json
// or xml), embedded structs flattened.
func typePaths(t reflect.Type, tag, prefix string) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil
		}
		return typePaths(t.Elem(), tag, prefix+"[].")
	case reflect.Struct:
	default:
		return nil
	}
	if t == reflect.TypeFor[json.Number]() {
		return nil
	}
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get(tag), ",")
		if name == "-" || !f.IsExported() || f.Name == "XMLName" {
			continue
		}
		if f.Anonymous && name == "" {
			out = append(out, typePaths(f.Type, tag, prefix)...)
			continue
		}
		name = cmp.Or(name, f.Name)
		out = append(out, prefix+name)
		out = append(out, typePaths(f.Type, tag, prefix+name+".")...)
	}
	return out
}

// TestNotificationFollowsTheDocument: the Notification type has exactly
// the fields of every documented notification (the document's webhooks).
func TestNotificationFollowsTheDocument(t *testing.T) {
	var want []string
	for _, hook := range document(t)["webhooks"].(map[string]any) {
		post := hook.(map[string]any)["post"].(map[string]any)
		for _, c := range post["requestBody"].(map[string]any)["content"].(map[string]any) {
			want = append(want, schemaPaths(c.(map[string]any)["schema"].(map[string]any), "")...)
		}
	}
	if len(want) == 0 {
		t.Fatal("the document has no webhooks")
	}
	compare(t, "notification", typePaths(reflect.TypeFor[client.Notification](), "form", ""), want)
}
