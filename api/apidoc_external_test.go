package api_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/api/admin"
	"github.com/paygate/paygate/api/apidoc"
	"github.com/paygate/paygate/api/disputes"
	"github.com/paygate/paygate/api/methods"
	"github.com/paygate/paygate/api/operations"
	"github.com/paygate/paygate/api/payments"
	"github.com/paygate/paygate/api/payouts"
	"github.com/paygate/paygate/api/queries"
	"github.com/paygate/paygate/api/subscriptions"
)

// gatewayServer has every capability the gateway serves (app.APIHandler)
// over nothing: for its routes and its description only.
func gatewayServer() *api.Server {
	s := &api.Server{Admin: &admin.API{}, Logger: slog.New(slog.DiscardHandler)}
	s.Capabilities = []api.Capability{&payments.Handler{Gate: s}, operations.New(s, nil), payouts.New(s, nil),
		subscriptions.New(s, nil), disputes.New(s, nil, nil), methods.New(s), queries.New(s)}
	return s
}

// TestEveryRouteIsDocumented: the OpenAPI document describes every route
// of the router, and nothing else.
func TestEveryRouteIsDocumented(t *testing.T) {
	s := gatewayServer()
	var routes, documented []string
	for _, r := range api.RoutesOf(s) {
		routes = append(routes, r[0]+" "+apidoc.OpenAPIPath(r[1]))
	}
	for _, op := range s.Operations() {
		documented = append(documented, op.Method+" "+apidoc.OpenAPIPath(op.Path))
	}
	slices.Sort(routes)
	slices.Sort(documented)
	for _, r := range routes {
		if !slices.Contains(documented, r) {
			t.Errorf("route %s is not in the document", r)
		}
	}
	for _, d := range documented {
		if !slices.Contains(routes, d) {
			t.Errorf("the document describes %s, which the router does not have", d)
		}
	}
	if len(documented) != len(slices.Compact(slices.Clone(documented))) {
		t.Errorf("an operation is described twice: %v", documented)
	}
}

// served is the document as /openapi.json serves it.
func served(t *testing.T) map[string]any {
	t.Helper()
	rec := httptest.NewRecorder()
	gatewayServer().Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/openapi.json", nil))
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		t.Fatalf("GET /openapi.json: %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	var doc map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestOpenAPIDocument: /openapi.json is OpenAPI 3.1; each operation has a
// unique id, answers, and schemas that compile as JSON Schema 2020-12; each
// result code it names has its row in docs/result-codes.md.
func TestOpenAPIDocument(t *testing.T) {
	doc := served(t)
	if doc["openapi"] != "3.1.0" {
		t.Errorf("openapi = %v, want 3.1.0", doc["openapi"])
	}
	rows, err := os.ReadFile("../docs/result-codes.md")
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for path, item := range doc["paths"].(map[string]any) {
		for method, raw := range item.(map[string]any) {
			op := raw.(map[string]any)
			name := strings.ToUpper(method) + " " + path
			id, _ := op["operationId"].(string)
			if id == "" || ids[id] != "" {
				t.Errorf("%s: operationId %q missing or also %s's", name, id, ids[id])
			}
			ids[id] = name
			if len(op["responses"].(map[string]any)) == 0 {
				t.Errorf("%s: no answers", name)
			}
			resultCodes, _ := op["x-result-codes"].([]any)
			for _, c := range resultCodes {
				if !strings.Contains(string(rows), `<a id="`+strings.ToLower(c.(string))+`"></a>`) {
					t.Errorf("%s: result code %v has no row anchor in docs/result-codes.md", name, c)
				}
			}
			// Every body has an example, and the example fits its schema.
			if body, ok := op["requestBody"].(map[string]any); ok {
				examples := 0
				for media, c := range body["content"].(map[string]any) {
					c := c.(map[string]any)
					ex, ok := c["example"]
					if !ok {
						continue
					}
					examples++
					raw, _ := json.Marshal(ex)
					if media == apidoc.Form {
						err = formFits(c["schema"], ex)
					} else if err = validateBody(apidoc.JSON, c["schema"], raw); err == nil {
						err = documented("", c["schema"], ex)
					}
					if err != nil {
						t.Errorf("%s: the %s example does not fit: %v", name, media, err)
					}
				}
				if examples == 0 {
					t.Errorf("%s: no example of its body", name)
				}
			}
			forEachSchema(op, func(where string, sch any) {
				if _, err := compile(sch); err != nil {
					t.Errorf("%s %s: %v", name, where, err)
				}
			})
		}
	}
}

// forEachSchema calls f with every schema of an operation's bodies.
func forEachSchema(op map[string]any, f func(where string, sch any)) {
	if body, ok := op["requestBody"].(map[string]any); ok {
		for media, c := range body["content"].(map[string]any) {
			f("request "+media, c.(map[string]any)["schema"])
		}
	}
	for st, r := range op["responses"].(map[string]any) {
		if content, ok := r.(map[string]any)["content"].(map[string]any); ok {
			for media, c := range content {
				f("answer "+st+" "+media, c.(map[string]any)["schema"])
			}
		}
	}
}

func compile(sch any) (*jsonschema.Schema, error) {
	b, err := json.Marshal(sch)
	if err != nil {
		return nil, err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("mem:///schema.json", v); err != nil {
		return nil, err
	}
	return c.Compile("mem:///schema.json")
}

// exchange is one recorded request and answer of the corpus.
type exchange struct {
	name, method, path, contentType string
	body                            []byte
	status                          int
	answerType                      string
	answer                          []byte
}

// readCorpus reads api/testdata/corpus.txt (recordCorpus writes it).
func readCorpus(t *testing.T) []exchange {
	t.Helper()
	raw, err := os.ReadFile(api.CorpusFile)
	if err != nil {
		t.Fatal(err)
	}
	var out []exchange
	for _, rec := range strings.Split(strings.TrimPrefix(string(raw), "=== "), "\n\n=== ") {
		name, rest, _ := strings.Cut(rec, "\n")
		reqLine, rest, _ := strings.Cut(rest, "\n")
		body, rest, ok := strings.Cut(rest, "\n--- ")
		if !ok {
			t.Fatalf("corpus entry %q: no answer", name)
		}
		ansLine, answer, _ := strings.Cut(rest, "\n")
		fields := strings.SplitN(reqLine, " ", 3)
		statusText, answerType, _ := strings.Cut(ansLine, " ")
		status, err := strconv.Atoi(statusText)
		if err != nil || len(fields) < 2 {
			t.Fatalf("corpus entry %q: %q / %q", name, reqLine, ansLine)
		}
		e := exchange{name: name, method: fields[0], path: fields[1], body: []byte(body), status: status,
			answerType: answerType, answer: []byte(strings.TrimSuffix(answer, "\n"))}
		if len(fields) == 3 {
			e.contentType = fields[2]
		}
		out = append(out, e)
	}
	return out
}

// TestRecordedCorpusFitsTheDocument: every recorded answer of the corpus
// is one its operation documents, with that status and media type, and its
// body validates against the documented schema; every request the gateway
// carried out validates against the request's schema.
func TestRecordedCorpusFitsTheDocument(t *testing.T) {
	doc := served(t)
	paths := doc["paths"].(map[string]any)
	requests := 0
	t.Cleanup(func() {
		// The corpus holds requests carried out, in JSON and as forms:
		// a check that validated none would prove nothing.
		if requests < 10 {
			t.Errorf("%d requests carried out were validated, want at least 10", requests)
		}
	})
	for _, e := range readCorpus(t) {
		t.Run(e.name, func(t *testing.T) {
			item, ok := paths[e.path].(map[string]any)
			if !ok {
				if e.status != http.StatusNotFound {
					t.Fatalf("%s %s is not documented and answered %d", e.method, e.path, e.status)
				}
				return
			}
			op := item[strings.ToLower(e.method)].(map[string]any)
			resp, ok := op["responses"].(map[string]any)[strconv.Itoa(e.status)].(map[string]any)
			if !ok {
				t.Fatalf("status %d is not documented", e.status)
			}
			media, _, _ := strings.Cut(e.answerType, ";")
			content, _ := resp["content"].(map[string]any)
			c, ok := content[media].(map[string]any)
			if !ok {
				t.Fatalf("answer %d %s is not documented (%v)", e.status, media, keys(content))
			}
			if err := validateBody(media, c["schema"], e.answer); err != nil {
				t.Errorf("answer: %v\n%s", err, e.answer)
			}
			if carriedOut(e) {
				requests++
				if err := validateRequest(op, e); err != nil {
					t.Errorf("request: %v\n%s", err, e.body)
				}
			}
		})
	}
}

// carriedOut reports whether the gateway did what the request asked (its
// answer's result is a success), so the request must fit its schema.
func carriedOut(e exchange) bool {
	if e.status != http.StatusOK || len(e.body) == 0 {
		return false
	}
	s := string(e.answer)
	return strings.Contains(s, `"return_status":"1"`) || strings.Contains(s, "<result_info>0000") ||
		strings.Contains(s, `"result_info":"0000`)
}

func validateRequest(op map[string]any, e exchange) error {
	body, ok := op["requestBody"].(map[string]any)
	if !ok {
		return errors.New("the operation documents no body")
	}
	content := body["content"].(map[string]any)
	if e.contentType == apidoc.Form {
		c, ok := content[apidoc.Form].(map[string]any)
		if !ok {
			return errors.New("a form body is not documented")
		}
		form, err := url.ParseQuery(string(e.body))
		if err != nil {
			return err
		}
		props := c["schema"].(map[string]any)["properties"].(map[string]any)
		for k := range form {
			if _, ok := props[k]; !ok {
				return errors.New("form field " + k + " is not documented")
			}
		}
		return nil
	}
	c, ok := content[apidoc.JSON].(map[string]any)
	if !ok {
		return errors.New("a JSON body is not documented")
	}
	return validateBody(apidoc.JSON, c["schema"], e.body)
}

// validateBody checks a JSON body against its schema, and an XML one's
// elements against the schema's properties (XML has no types to check).
func validateBody(media string, schema any, body []byte) error {
	switch media {
	case apidoc.JSON:
		sch, err := compile(schema)
		if err != nil {
			return err
		}
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
		if err != nil {
			return err
		}
		return sch.Validate(v)
	case apidoc.XML:
		props := schema.(map[string]any)["properties"].(map[string]any)
		names, err := xmlChildren(body)
		if err != nil {
			return err
		}
		for _, n := range names {
			if _, ok := props[n]; !ok {
				return errors.New("element " + n + " is not documented")
			}
		}
	}
	return nil
}

// xmlChildren names the root element's children.
func xmlChildren(body []byte) ([]string, error) {
	dec := xml.NewDecoder(bytes.NewReader(body))
	var names []string
	depth := 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return names, nil
		}
		if err != nil {
			return nil, err
		}
		switch el := tok.(type) {
		case xml.StartElement:
			depth++
			if depth == 2 {
				names = append(names, el.Name.Local)
			}
		case xml.EndElement:
			depth--
		}
	}
}

// documented checks that every field of a value, nested ones too, is a
// property its schema names (a schema without properties takes any).
func documented(at string, schema, v any) error {
	sch, _ := schema.(map[string]any)
	switch v := v.(type) {
	case map[string]any:
		props, ok := sch["properties"].(map[string]any)
		if !ok {
			return nil
		}
		for k, fv := range v {
			p, ok := props[k]
			if !ok {
				return errors.New("field " + at + k + " is not documented")
			}
			if err := documented(at+k+".", p, fv); err != nil {
				return err
			}
		}
	case []any:
		for _, item := range v {
			if err := documented(at, sch["items"], item); err != nil {
				return err
			}
		}
	}
	return nil
}

// formFits checks a form example's fields are the schema's.
func formFits(schema, example any) error {
	props := schema.(map[string]any)["properties"].(map[string]any)
	for k := range example.(map[string]any) {
		if _, ok := props[k]; !ok {
			return errors.New("field " + k + " is not documented")
		}
	}
	return nil
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestReferencePage: /reference renders every operation from the API
// itself, with no script and nothing loaded from elsewhere, under a policy
// that lets only its own style apply.
func TestReferencePage(t *testing.T) {
	s := gatewayServer()
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/reference", nil))
	page := rec.Body.String()
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("GET /reference: %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	if csp := rec.Header().Get("Content-Security-Policy"); csp != apidoc.PagePolicy || !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("Content-Security-Policy %q, want %q", csp, apidoc.PagePolicy)
	}
	for _, bad := range []string{"<script", "src=", "<link", "@import"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
	for _, op := range s.Operations() {
		if !strings.Contains(page, "<code>"+apidoc.OpenAPIPath(op.Path)+"</code>") {
			t.Errorf("the page lacks %s %s", op.Method, op.Path)
		}
	}
	for _, want := range []string{"<code>shopper_email</code>", "<code>encryption_data</code>", `href="` + api.ResultCodesURL + `#i0013"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
}

// TestRefusalsLinkToTheirCode: a refused request's answer links to its
// result code's row in docs/result-codes.md; a success links nowhere.
func TestRefusalsLinkToTheirCode(t *testing.T) {
	s := gatewayServer()
	tests := []struct {
		name, path, body string
		want             string
	}{
		{"unreadable authorise", "/v1/authorise", `{"merchant_id":`, api.HelpLink("I0010")},
		{"payout without ids", "/v1/payout", `{}`, api.HelpLink("I0001")},
		{"health", "/healthz", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			method := http.MethodPost
			if tc.body == "" {
				method = http.MethodGet
			}
			rec := httptest.NewRecorder()
			s.Handler().ServeHTTP(rec, httptest.NewRequest(method, tc.path, strings.NewReader(tc.body)))
			if got := rec.Header().Get("Link"); got != tc.want {
				t.Errorf("Link = %q, want %q (answer %d %s)", got, tc.want, rec.Code, rec.Body.String())
			}
		})
	}
}
