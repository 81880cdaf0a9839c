package api

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/paygate/paygate/internal/adapters/payloadcodec"
	"github.com/paygate/paygate/internal/domain/keyring"
)

const (
	testCodecToken = "codec-token-for-tests-0123456789abcdef"
	testUIOrigin   = "http://127.0.0.1:8233"
)

// fakePeople signs in as ops whoever carries the cookie "ops".
type fakePeople struct{}

func (fakePeople) OpsUser(r *http.Request) (string, bool) {
	c, err := r.Cookie("pg_console")
	if err != nil || c.Value != "ops" {
		return "", false
	}
	return "ops@example.com", true
}

// codecServer is an API with the codec endpoint over a fresh key (on
// unless both token and origins are empty), and what it logs.
func codecServer(t *testing.T, token string, origins ...string) (*Server, *payloadcodec.Codec, *bytes.Buffer) {
	t.Helper()
	spec, err := keyring.GenerateSpec("k1")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := keyring.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	c, err := payloadcodec.New(keys)
	if err != nil {
		t.Fatal(err)
	}
	logs := &bytes.Buffer{}
	srv := &Server{Logger: slog.New(slog.NewJSONHandler(logs, nil))}
	// As app makes it: no endpoint when nobody could call it.
	if token != "" || len(origins) > 0 {
		srv.Codec = &CodecEndpoint{Codec: c, Token: token, AllowOrigins: origins, People: fakePeople{}}
	}
	return srv, c, logs
}

// payloadsJSON is a codec request body as the UI sends it.
func payloadsJSON(t *testing.T, ps ...*commonpb.Payload) string {
	t.Helper()
	b, err := protojson.Marshal(&commonpb.Payloads{Payloads: ps})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestCodecEndpoint(t *testing.T) {
	plain, err := converter.GetDefaultDataConverter().ToPayload(map[string]string{"shopper_email": "ada@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	type request struct {
		method, path, origin, auth, cookie string
		preflightMethod                    string
	}
	ui := []string{testUIOrigin}
	cases := []struct {
		name     string
		token    string   // the tools' token; "" lets no tool in
		origins  []string // the UI's; none lets no browser in
		req      request
		wantHTTP int
		wantCORS bool // the answer allows the UI's origin
	}{
		{name: "ops signed in to the console, from the UI", origins: ui,
			req: request{method: "POST", path: "/codec/decode", origin: testUIOrigin, cookie: "ops"}, wantHTTP: 200, wantCORS: true},
		{name: "bearer token, no origin (the CLI)", token: testCodecToken,
			req: request{method: "POST", path: "/codec/decode", auth: "Bearer " + testCodecToken}, wantHTTP: 200},
		{name: "not signed in, from the UI", token: testCodecToken, origins: ui,
			req: request{method: "POST", path: "/codec/decode", origin: testUIOrigin}, wantHTTP: 401, wantCORS: true},
		{name: "another role's session, from the UI", origins: ui,
			req: request{method: "POST", path: "/codec/decode", origin: testUIOrigin, cookie: "merchant"}, wantHTTP: 401, wantCORS: true},
		{name: "an ops cookie without an origin (not the UI)", token: testCodecToken, origins: ui,
			req: request{method: "POST", path: "/codec/decode", cookie: "ops"}, wantHTTP: 401},
		{name: "an ops cookie from another origin", origins: ui,
			req: request{method: "POST", path: "/codec/decode", origin: "http://127.0.0.1:8090", cookie: "ops"}, wantHTTP: 403},
		{name: "the token in the path, as before", token: testCodecToken, origins: ui,
			req: request{method: "POST", path: "/codec/" + testCodecToken + "/decode", origin: testUIOrigin}, wantHTTP: 404},
		{name: "a wrong token", token: testCodecToken,
			req: request{method: "POST", path: "/codec/decode", auth: "Bearer " + testCodecToken[:len(testCodecToken)-1] + "x"}, wantHTTP: 401},
		{name: "a token where none is set", origins: ui,
			req: request{method: "POST", path: "/codec/decode", auth: "Bearer " + testCodecToken}, wantHTTP: 401},
		{name: "a wrong token beside an ops cookie", token: testCodecToken, origins: ui,
			req: request{method: "POST", path: "/codec/decode", origin: testUIOrigin, cookie: "ops", auth: "Bearer nope"}, wantHTTP: 401, wantCORS: true},
		{name: "the token as a basic credential", token: testCodecToken,
			req: request{method: "POST", path: "/codec/decode", auth: "Basic " + testCodecToken}, wantHTTP: 401},
		{name: "off without token and origins", req: request{method: "POST", path: "/codec/decode", auth: "Bearer " + testCodecToken}, wantHTTP: 404},
		{name: "unknown operation", token: testCodecToken,
			req: request{method: "POST", path: "/codec/peek", auth: "Bearer " + testCodecToken}, wantHTTP: 404},
		{name: "preflight from the UI", origins: ui,
			req: request{method: "OPTIONS", path: "/codec/decode", origin: testUIOrigin, preflightMethod: "POST"}, wantHTTP: 204, wantCORS: true},
		{name: "preflight from another origin", origins: ui,
			req: request{method: "OPTIONS", path: "/codec/decode", origin: "http://localhost:9999", preflightMethod: "POST"}, wantHTTP: 403},
		{name: "preflight for another method", origins: ui,
			req: request{method: "OPTIONS", path: "/codec/decode", origin: testUIOrigin, preflightMethod: "DELETE"}, wantHTTP: 403},
		{name: "preflight, endpoint off", req: request{method: "OPTIONS", path: "/codec/decode", origin: testUIOrigin, preflightMethod: "POST"}, wantHTTP: 404},
		{name: "GET is not the protocol", origins: ui,
			req: request{method: "GET", path: "/codec/decode", origin: testUIOrigin, cookie: "ops"}, wantHTTP: 404},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, c, logs := codecServer(t, tc.token, tc.origins...)
			enc, err := c.Encode([]*commonpb.Payload{plain})
			if err != nil {
				t.Fatal(err)
			}
			var body *strings.Reader
			if tc.req.method == "POST" {
				body = strings.NewReader(payloadsJSON(t, enc...))
			} else {
				body = strings.NewReader("")
			}
			req := httptest.NewRequest(tc.req.method, tc.req.path, body)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Namespace", "default")
			if tc.req.origin != "" {
				req.Header.Set("Origin", tc.req.origin)
			}
			if tc.req.auth != "" {
				req.Header.Set("Authorization", tc.req.auth)
			}
			if tc.req.cookie != "" {
				req.AddCookie(&http.Cookie{Name: "pg_console", Value: tc.req.cookie})
			}
			if tc.req.preflightMethod != "" {
				req.Header.Set("Access-Control-Request-Method", tc.req.preflightMethod)
				req.Header.Set("Access-Control-Request-Headers", "content-type,x-namespace")
			}
			rec := httptest.NewRecorder()
			srv.Handler().ServeHTTP(rec, req)
			if rec.Code != tc.wantHTTP {
				t.Fatalf("answer %d %s, want %d", rec.Code, rec.Body.String(), tc.wantHTTP)
			}
			allow := rec.Header().Get("Access-Control-Allow-Origin")
			if tc.wantCORS != (allow == testUIOrigin) || (allow != "" && allow != testUIOrigin) {
				t.Errorf("Access-Control-Allow-Origin %q, want the UI's: %v", allow, tc.wantCORS)
			}
			if tc.req.preflightMethod != "" && tc.wantHTTP == 204 {
				if h := rec.Header().Get("Access-Control-Allow-Headers"); !strings.Contains(h, "X-Namespace") || !strings.Contains(h, "Content-Type") {
					t.Errorf("Access-Control-Allow-Headers %q", h)
				}
				if m := rec.Header().Get("Access-Control-Allow-Methods"); !strings.Contains(m, "POST") {
					t.Errorf("Access-Control-Allow-Methods %q", m)
				}
			}
			if tc.wantHTTP == 200 {
				var out commonpb.Payloads
				if err := protojson.Unmarshal(rec.Body.Bytes(), &out); err != nil {
					t.Fatalf("answer %s: %v", rec.Body.String(), err)
				}
				var got map[string]string
				if len(out.GetPayloads()) != 1 {
					t.Fatalf("answer %s", rec.Body.String())
				}
				if err := converter.GetDefaultDataConverter().FromPayload(out.GetPayloads()[0], &got); err != nil || got["shopper_email"] != "ada@example.com" {
					t.Errorf("decoded %v, %v", got, err)
				}
			}
			if strings.Contains(logs.String(), testCodecToken[:20]) {
				t.Errorf("the request log shows the token: %s", logs.String())
			}
			if tc.wantHTTP == 200 {
				who := map[bool]string{true: `"by":"ops@example.com","auth":"console session"`, false: `"by":"codec token","auth":"bearer"`}[tc.req.cookie == "ops"]
				if !strings.Contains(logs.String(), `"msg":"codec call","operation":"decode",`+who) {
					t.Errorf("the log does not say who decoded: %s", logs.String())
				}
			}
		})
	}
}

// TestCodecEndpointEncodes checks the UI's other call: what it encodes,
// the gateway decodes, and nothing of it is readable.
func TestCodecEndpointEncodes(t *testing.T) {
	srv, c, _ := codecServer(t, testCodecToken, testUIOrigin)
	plain, err := converter.GetDefaultDataConverter().ToPayload("Lovelace")
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("POST", "/codec/encode", strings.NewReader(payloadsJSON(t, plain)))
	req.Header.Set("Origin", testUIOrigin)
	req.AddCookie(&http.Cookie{Name: "pg_console", Value: "ops"})
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, req)
	if rec.Code != 200 || strings.Contains(rec.Body.String(), "Lovelace") {
		t.Fatalf("encode answered %d %s", rec.Code, rec.Body.String())
	}
	var out commonpb.Payloads
	if err := protojson.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	dec, err := c.Decode(out.GetPayloads())
	if err != nil {
		t.Fatal(err)
	}
	var s string
	if err := converter.GetDefaultDataConverter().FromPayload(dec[0], &s); err != nil || s != "Lovelace" {
		t.Errorf("decoded %q, %v", s, err)
	}
	// A body that is not payloads is a 400 with the parser's message.
	req = httptest.NewRequest("POST", "/codec/decode", strings.NewReader(`{"payloads":"x"}`))
	req.Header.Set("Authorization", "Bearer "+testCodecToken)
	rec = httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, req)
	if rec.Code != 400 {
		t.Errorf("bad body answered %d", rec.Code)
	}
}

func TestLoggedPathHidesTheCodecSecret(t *testing.T) {
	for path, want := range map[string]string{
		"/codec/s3cret/decode":   "/codec/(redacted)/decode",
		"/codec/decode":          "/codec/decode",
		"/codec/s3cret":          "/codec/(redacted)",
		"/codec/s3cret/":         "/codec/(redacted)/",
		"/codec/x/s3cret/encode": "/codec/(redacted)/(redacted)/encode",
		"/v1/authorise":          "/v1/authorise",
	} {
		if got := loggedPath(httptest.NewRequest("POST", path, nil)); got != want {
			t.Errorf("loggedPath(%s) = %s, want %s", path, got, want)
		}
	}
	// The log line itself.
	srv, _, logs := codecServer(t, testCodecToken)
	req := httptest.NewRequest("POST", "/codec/"+testCodecToken+"/decode", strings.NewReader(`{"payloads":[]}`))
	req.Header.Set("Authorization", "Bearer "+testCodecToken)
	srv.Handler().ServeHTTP(httptest.NewRecorder(), req)
	var line map[string]any
	if err := json.Unmarshal(bytes.TrimSpace(logs.Bytes()), &line); err != nil || line["path"] != "/codec/(redacted)/decode" {
		t.Errorf("log %s, %v", logs.String(), err)
	}
}
