package telemetry

import (
	"io"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/dev/testdb"
)

// scrape returns the metrics' text exposition.
func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("scrape: %d", rec.Code)
	}
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}

func TestSDKMetrics(t *testing.T) {
	m := New(nil)
	h := m.TemporalHandler()
	h.Counter("temporal_request").Inc(2)
	h.WithTags(map[string]string{"operation": "StartWorkflowExecution"}).Counter("temporal_request").Inc(3)
	h.WithTags(map[string]string{"workflow_type": "Order"}).WithTags(map[string]string{"task-queue": "paygate"}).
		Gauge("temporal_sticky_cache_size").Update(7)
	timer := h.WithTags(map[string]string{"activity_type": "Charge"}).Timer("temporal_activity_execution_latency")
	timer.Record(3 * time.Millisecond)
	timer.Record(2 * time.Second)
	h.Counter("odd.name-here").Inc(1)
	out := scrape(t, m)

	tests := []struct {
		name string
		line string
	}{
		{"a counter without tags, its labels empty", `temporal_request_total{operation=""} 2`},
		{"the same counter with a tag", `temporal_request_total{operation="StartWorkflowExecution"} 3`},
		{"tags merged and their names sanitised", `temporal_sticky_cache_size{task_queue="paygate",workflow_type="Order"} 7`},
		{"a timer as a histogram in seconds: the 5 ms bucket", `temporal_activity_execution_latency_seconds_bucket{activity_type="Charge",le="0.005"} 1`},
		{"the timer's 2.5 s bucket holds both", `temporal_activity_execution_latency_seconds_bucket{activity_type="Charge",le="2.5"} 2`},
		{"the timer's count", `temporal_activity_execution_latency_seconds_count{activity_type="Charge"} 2`},
		{"a name made a Prometheus one", `temporal_odd_name_here_total 1`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(out, tc.line+"\n") {
				t.Errorf("no line %q in\n%s", tc.line, grepTemporal(out))
			}
		})
	}
}

func grepTemporal(out string) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "temporal_") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

func TestRequestAndNotificationMetrics(t *testing.T) {
	m := New(nil)
	m.ObserveRequest("/v1/authorise", "0000", 20*time.Millisecond)
	m.ObserveRequest("/v1/authorise", "0000", 40*time.Millisecond)
	m.ObserveRequest("/v1/authorise", "I0013", time.Millisecond)
	m.ObserveRequest("unmatched", "404", time.Millisecond)
	m.NotificationAttempt(NotifyRefused)
	m.NotificationAttempt(NotifyDelivered)
	out := scrape(t, m)
	for _, line := range []string{
		`paygate_http_requests_total{code="0000",endpoint="/v1/authorise"} 2`,
		`paygate_http_requests_total{code="I0013",endpoint="/v1/authorise"} 1`,
		`paygate_http_requests_total{code="404",endpoint="unmatched"} 1`,
		`paygate_http_request_duration_seconds_bucket{endpoint="/v1/authorise",le="0.025"} 2`,
		`paygate_http_request_duration_seconds_count{endpoint="/v1/authorise"} 3`,
		`paygate_notification_attempts_total{outcome="delivered"} 1`,
		`paygate_notification_attempts_total{outcome="refused"} 1`,
	} {
		if !strings.Contains(out, line+"\n") {
			t.Errorf("no line %q", line)
		}
	}
	// Two gateways in one process keep their own counts.
	if other := scrape(t, New(nil)); strings.Contains(other, "paygate_http_requests_total{") {
		t.Error("a second Metrics shares the first one's counts")
	}
}

// statementCount reads one kind's paygate_db_statements_total.
func statementCount(t *testing.T, m *Metrics, kind string) int {
	t.Helper()
	prefix := `paygate_db_statements_total{kind="` + kind + `"} `
	for _, line := range strings.Split(scrape(t, m), "\n") {
		if v, ok := strings.CutPrefix(line, prefix); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return n
		}
	}
	return 0
}

// TestStatementsCounted: every statement sent through gorm is counted by
// its kind, once, even with a second Metrics on the same database.
func TestStatementsCounted(t *testing.T) {
	db := testdb.Open(t, "telemetry")
	m := New(db)
	New(db) // a second gateway on the same pool counts nothing twice
	type telemetryRow struct {
		ID int
		N  int
	}
	if err := db.Exec("CREATE TABLE telemetry_rows (id serial PRIMARY KEY, n int NOT NULL)").Error; err != nil {
		t.Fatal(err)
	}
	kinds := []string{"create", "query", "update", "delete", "row", "raw"}
	before := map[string]int{}
	for _, k := range kinds {
		before[k] = statementCount(t, m, k)
	}
	r := telemetryRow{N: 1}
	var got []telemetryRow
	var n int
	steps := []error{
		db.Create(&r).Error,
		db.Find(&got).Error,
		db.Model(&r).Update("n", 2).Error,
		db.Raw("SELECT count(*) FROM telemetry_rows").Row().Scan(&n),
		db.Exec("UPDATE telemetry_rows SET n = 3").Error,
		db.Delete(&r).Error,
	}
	for i, err := range steps {
		if err != nil {
			t.Fatalf("step %d: %v", i+1, err)
		}
	}
	for _, k := range kinds {
		if d := statementCount(t, m, k) - before[k]; d != 1 {
			t.Errorf("%s statements: %d, want 1", k, d)
		}
	}
}
