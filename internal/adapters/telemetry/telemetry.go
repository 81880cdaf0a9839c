// Package telemetry holds the gateway's Prometheus metrics: requests by
// endpoint and result code with their latency, notification delivery, the
// record's backlogs read at scrape time, and the Temporal SDK's own metrics
// through its MetricsHandler.
package telemetry

import (
	"context"
	"net/http"
	"time"

	"github.com/paygate/paygate/internal/domain/routing"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"gorm.io/gorm"
)

// Metrics is one process's metrics, on a registry of its own so that two
// gateways in one process (tests) do not collide.
type Metrics struct {
	registry       *prometheus.Registry
	requests       *prometheus.CounterVec
	duration       *prometheus.HistogramVec
	notifyAttempts *prometheus.CounterVec
	sigReuses      *prometheus.CounterVec
	breakers       *prometheus.GaugeVec
	statements     *prometheus.CounterVec
	sdk            *sdkCollector
}

// New returns the metrics; with db, the notification backlog and the
// payouts by status are read from it at each scrape.
func New(db *gorm.DB) *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "paygate_http_requests_total",
			Help: "API requests by route and answer: the interface's result code, or the HTTP status where the answer has none.",
		}, []string{"endpoint", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "paygate_http_request_duration_seconds",
			Help:    "API request latency by route, from the request's arrival to its answer.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"endpoint"}),
		notifyAttempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "paygate_notification_attempts_total",
			Help: "Merchant notification delivery attempts by outcome: delivered (2xx), refused (another status) or error (no answer).",
		}, []string{"outcome"}),
		sigReuses: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "paygate_signature_reused_total",
			Help: "Compatible signatures of operations that move money seen again with other content, by the operation: the merchant's next operation on the same orders, or a replay of what someone saw.",
		}, []string{"operation"}),
		breakers: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "paygate_connector_breaker_state",
			Help: "Each connector's circuit breaker in this worker: 1 for the state it is in (closed, open, half_open), 0 for the others. Routed payments skip a connector whose breaker is open.",
		}, []string{"connector", "state"}),
		statements: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "paygate_db_statements_total",
			Help: "SQL statements this process sent to Postgres through gorm, by kind (create, query, update, delete, row, raw): what a payment costs the database.",
		}, []string{"kind"}),
		sdk: newSDKCollector(),
	}
	m.registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.requests, m.duration, m.notifyAttempts, m.sigReuses, m.breakers, m.statements, m.sdk,
	)
	if db != nil {
		m.registry.MustRegister(&recordCollector{db: db})
		m.countStatements(db)
	}
	return m
}

// uncounted marks the context of the scrape's own queries, which are not
// the work the statement counter measures.
type uncounted struct{}

// statementCounter is the name of the gorm callbacks that count statements.
const statementCounter = "paygate:count_statements"

// countStatements counts every statement db sends, after gorm's own step
// of each kind. A db counted already (a second Metrics on it, in tests)
// keeps the first's callbacks.
func (m *Metrics) countStatements(db *gorm.DB) {
	cb := db.Callback()
	if cb.Query().Get(statementCounter) != nil {
		return
	}
	count := func(kind string) func(*gorm.DB) {
		c := m.statements.WithLabelValues(kind)
		return func(tx *gorm.DB) {
			if ctx := tx.Statement.Context; ctx == nil || ctx.Value(uncounted{}) == nil {
				c.Inc()
			}
		}
	}
	// Registering only fails for a name registered already, checked above.
	_ = cb.Create().After("gorm:create").Register(statementCounter, count("create"))
	_ = cb.Query().After("gorm:query").Register(statementCounter, count("query"))
	_ = cb.Update().After("gorm:update").Register(statementCounter, count("update"))
	_ = cb.Delete().After("gorm:delete").Register(statementCounter, count("delete"))
	_ = cb.Row().After("gorm:row").Register(statementCounter, count("row"))
	_ = cb.Raw().After("gorm:raw").Register(statementCounter, count("raw"))
}

// ObserveRequest counts one answered API request.
func (m *Metrics) ObserveRequest(endpoint, code string, took time.Duration) {
	m.requests.WithLabelValues(endpoint, code).Inc()
	m.duration.WithLabelValues(endpoint).Observe(took.Seconds())
}

// SignatureReused counts a compatible signature seen again with other
// content.
func (m *Metrics) SignatureReused(operation string) {
	m.sigReuses.WithLabelValues(operation).Inc()
}

// Notification delivery outcomes.
const (
	NotifyDelivered = "delivered"
	NotifyRefused   = "refused"
	NotifyError     = "error"
)

// NotificationAttempt counts one delivery attempt.
func (m *Metrics) NotificationAttempt(outcome string) {
	m.notifyAttempts.WithLabelValues(outcome).Inc()
}

// BreakerState sets a connector's breaker state.
func (m *Metrics) BreakerState(connector string, state routing.BreakerState) {
	for _, st := range []routing.BreakerState{routing.Closed, routing.Open, routing.HalfOpen} {
		v := 0.0
		if st == state {
			v = 1
		}
		m.breakers.WithLabelValues(connector, string(st)).Set(v)
	}
}

// Handler serves the metrics in Prometheus's text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{Timeout: 10 * time.Second})
}

// scrapeQueryTimeout bounds the record's queries at a scrape: a slow
// database shows as a gap in the backlog, not as a hung scrape.
const scrapeQueryTimeout = 2 * time.Second

// recordCollector reads the backlogs from Postgres at scrape time.
type recordCollector struct{ db *gorm.DB }

var (
	backlogDesc = prometheus.NewDesc("paygate_notifications_backlog",
		"Merchant notifications not yet delivered and not given up.", nil, nil)
	payoutsDesc = prometheus.NewDesc("paygate_payouts",
		"Payouts by status, as recorded.", []string{"status"}, nil)
	scrapeErrDesc = prometheus.NewDesc("paygate_record_scrape_errors",
		"1 when the record could not be read at this scrape.", nil, nil)
)

func (c *recordCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- backlogDesc
	ch <- payoutsDesc
	ch <- scrapeErrDesc
}

func (c *recordCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), uncounted{}, true), scrapeQueryTimeout)
	defer cancel()
	db := c.db.WithContext(ctx)
	failed := 0.0
	var backlog int64
	if err := db.Table("notifications").Where("status = ?", "pending").Count(&backlog).Error; err != nil {
		failed = 1
	} else {
		ch <- prometheus.MustNewConstMetric(backlogDesc, prometheus.GaugeValue, float64(backlog))
	}
	var rows []struct {
		Status string
		N      int64
	}
	if err := db.Table("payouts").Select("status, count(*) AS n").Group("status").Scan(&rows).Error; err != nil {
		failed = 1
	} else {
		for _, r := range rows {
			ch <- prometheus.MustNewConstMetric(payoutsDesc, prometheus.GaugeValue, float64(r.N), r.Status)
		}
	}
	ch <- prometheus.MustNewConstMetric(scrapeErrDesc, prometheus.GaugeValue, failed)
}
