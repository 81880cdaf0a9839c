package reqlog

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
)

type info struct{ outcome string }

func TestMiddlewareLogsWhatTheHandlerNoted(t *testing.T) {
	cases := []struct {
		name       string
		handler    http.HandlerFunc
		wantStatus float64
		outcome    string
	}{
		{name: "explicit status", wantStatus: 409, outcome: "conflict", handler: func(w http.ResponseWriter, r *http.Request) {
			From[info](r.Context()).outcome = "conflict"
			w.WriteHeader(http.StatusConflict)
		}},
		{name: "body only is 200", wantStatus: 200, outcome: "ok", handler: func(w http.ResponseWriter, r *http.Request) {
			From[info](r.Context()).outcome = "ok"
			_, _ = w.Write([]byte("{}"))
		}},
		{name: "nothing written is 200", wantStatus: 200, handler: func(http.ResponseWriter, *http.Request) {}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			logger := slog.New(slog.NewJSONHandler(&buf, nil))
			h := Middleware(logger, "sim request", func(*http.Request) *info { return &info{} },
				func(i *info) []slog.Attr { return []slog.Attr{slog.String("outcome", i.outcome)} }, tc.handler)
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/transfers/t1", nil))
			var line map[string]any
			if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
				t.Fatalf("log line %q: %v", buf.String(), err)
			}
			if line["msg"] != "sim request" || line["method"] != "POST" || line["path"] != "/transfers/t1" ||
				line["status"] != tc.wantStatus || line["outcome"] != tc.outcome {
				t.Errorf("log line %v", line)
			}
		})
	}
}

func TestFromOutsideARequestIsFresh(t *testing.T) {
	if got := From[info](t.Context()); got == nil || got.outcome != "" {
		t.Errorf("From = %+v", got)
	}
}
