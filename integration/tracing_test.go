package integration

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// spanWatch keeps the ended spans of the traces a test asked for, and
// nothing of the others, so the whole suite can run traced.
type spanWatch struct {
	mu      sync.Mutex
	watched map[trace.TraceID][]sdktrace.ReadOnlySpan
}

func newSpanWatch() *spanWatch {
	return &spanWatch{watched: map[trace.TraceID][]sdktrace.ReadOnlySpan{}}
}

func (w *spanWatch) watch(id trace.TraceID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.watched[id] = nil
}

func (w *spanWatch) spans(id trace.TraceID) []sdktrace.ReadOnlySpan {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.watched[id])
}

func (w *spanWatch) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

func (w *spanWatch) OnEnd(s sdktrace.ReadOnlySpan) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if list, ok := w.watched[s.SpanContext().TraceID()]; ok {
		w.watched[s.SpanContext().TraceID()] = append(list, s)
	}
}

func (w *spanWatch) Shutdown(context.Context) error   { return nil }
func (w *spanWatch) ForceFlush(context.Context) error { return nil }

// TestOneTraceFollowsAPayment: a payment sent with a W3C traceparent is one
// trace from the API's span through the workflow's update and tasks to the
// acquirer call, and no span holds the card number.
func TestOneTraceFollowsAPayment(t *testing.T) {
	var id trace.TraceID
	_, _ = rand.Read(id[:])
	env.spans.watch(id)
	orderNo := newOrderNo(t)
	body := form(signCard(cardOrder(env.auto, orderNo, "4242424242424242"), env.auto.SignKey))
	req, _ := http.NewRequest(http.MethodPost, env.api.URL+"/v1/authorise", strings.NewReader(body))
	req.Header.Set("Content-Type", formType)
	parent := make([]byte, 8)
	_, _ = rand.Read(parent)
	req.Header.Set("traceparent", "00-"+id.String()+"-"+hex.EncodeToString(parent)+"-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var r respon
	if err := xml.Unmarshal(b, &r); err != nil || r.OrderStatus != "1" {
		t.Fatalf("payment: %v %s", err, b)
	}

	want := []struct {
		name   string
		prefix string
	}{
		{"the API's span", "POST /v1/authorise"},
		{"the workflow's start with its update", "UpdateWithStartWorkflow:"},
		{"the update handled in the order's workflow", "HandleUpdate:authorise"},
		{"an activity of the order", "RunActivity:"},
		{"the call to the acquirer", "acquirer POST"},
	}
	var names []string
	deadline := time.Now().Add(10 * time.Second)
	for {
		names = names[:0]
		for _, s := range env.spans.spans(id) {
			names = append(names, s.Name())
			for _, kv := range s.Attributes() {
				if strings.Contains(kv.Value.Emit(), "4242424242424242") {
					t.Errorf("span %s holds the card number in %s", s.Name(), kv.Key)
				}
			}
		}
		missing := 0
		for _, w := range want {
			if !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, w.prefix) }) {
				missing++
			}
		}
		if missing == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, w := range want {
		if !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, w.prefix) }) {
			t.Errorf("no span for %s (%s...) in the trace: %v", w.name, w.prefix, names)
		}
	}
}

// TestMetricsCountPayments: after a payment the metrics count it by route
// and result code, and the Temporal SDK's own metrics are there.
func TestMetricsCountPayments(t *testing.T) {
	paidOrder(t, env.auto, "12.34")
	rec := httptest.NewRecorder()
	env.gw.Metrics.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	out := rec.Body.String()
	for _, want := range []string{
		`paygate_http_requests_total{code="0000",endpoint="/v1/authorise"}`,
		`paygate_http_request_duration_seconds_bucket{endpoint="/v1/authorise",le="0.5"}`,
		"paygate_notifications_backlog ",
		"paygate_record_scrape_errors 0",
		"temporal_request_total",
		"temporal_workflow_task_schedule_to_start_latency_seconds_bucket",
		"temporal_activity_execution_latency_seconds_bucket",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}
