package telemetry

import (
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/client"
)

// TemporalHandler returns the Temporal SDK's metrics handler over these
// metrics: its counters, gauges and timers appear as temporal_* series.
func (m *Metrics) TemporalHandler() client.MetricsHandler {
	return sdkHandler{c: m.sdk}
}

// timerBuckets are the SDK timers' histogram buckets, in seconds.
var timerBuckets = []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// sdkCollector keeps the SDK's metrics. The SDK gives one metric name
// different tag sets (a workflow type here, none there), which a
// Prometheus vector cannot hold, so each series is kept by its name and
// tags and a metric's labels are the union of its series' tags, empty where
// a series has none.
type sdkCollector struct {
	mu     sync.Mutex
	series map[seriesKey]*sdkSeries
}

// seriesKey finds a series by the SDK's own name for it, the suffix of its
// kind and its handler's tags, so that the SDK's every count finds its
// series without building a name or sorting tags.
type seriesKey struct{ name, suffix, tags string }

type sdkSeries struct {
	name    string // Prometheus name, with its suffix
	kind    prometheus.ValueType
	tags    map[string]string
	value   float64  // counter or gauge
	buckets []uint64 // timer: counts per timerBuckets bound
	count   uint64   // timer
	sum     float64  // timer, seconds
	isTimer bool
}

func newSDKCollector() *sdkCollector { return &sdkCollector{series: map[seriesKey]*sdkSeries{}} }

// Describe sends nothing: the series come and go with the SDK's tags, so
// the collector is unchecked.
func (c *sdkCollector) Describe(chan<- *prometheus.Desc) {}

func (c *sdkCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	labels := map[string]map[string]bool{}
	for _, s := range c.series {
		if labels[s.name] == nil {
			labels[s.name] = map[string]bool{}
		}
		for k := range s.tags {
			labels[s.name][k] = true
		}
	}
	descs := map[string]*prometheus.Desc{}
	for name, set := range labels {
		descs[name] = prometheus.NewDesc(name, "Temporal SDK metric "+name+".", slices.Sorted(maps.Keys(set)), nil)
	}
	for _, s := range c.series {
		names := slices.Sorted(maps.Keys(labels[s.name]))
		values := make([]string, len(names))
		for i, n := range names {
			values[i] = s.tags[n]
		}
		desc := descs[s.name]
		if s.isTimer {
			bk := make(map[float64]uint64, len(timerBuckets))
			var cum uint64
			for i, b := range timerBuckets {
				cum += s.buckets[i]
				bk[b] = cum
			}
			ch <- prometheus.MustNewConstHistogram(desc, s.count, s.sum, bk, values...)
			continue
		}
		ch <- prometheus.MustNewConstMetric(desc, s.kind, s.value, values...)
	}
}

// get returns the series of the SDK's name (made a Prometheus name with
// suffix) and a handler's tags, made on first use.
func (c *sdkCollector) get(name, suffix string, kind prometheus.ValueType, timer bool, h sdkHandler) *sdkSeries {
	k := seriesKey{name, suffix, h.tagKey}
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.series[k]
	if !ok {
		s = &sdkSeries{name: promName(name, suffix), kind: kind, tags: h.tags, isTimer: timer}
		if timer {
			s.buckets = make([]uint64, len(timerBuckets))
		}
		c.series[k] = s
	}
	return s
}

// sdkHandler is the SDK's view of the collector with a tag set; tagKey is
// the tags, sorted, as one string.
type sdkHandler struct {
	c      *sdkCollector
	tags   map[string]string
	tagKey string
}

func (h sdkHandler) WithTags(tags map[string]string) client.MetricsHandler {
	merged := make(map[string]string, len(h.tags)+len(tags))
	for k, v := range h.tags {
		merged[k] = v
	}
	for k, v := range tags {
		merged[sanitize(k)] = v
	}
	var key strings.Builder
	for _, k := range slices.Sorted(maps.Keys(merged)) {
		key.WriteString("\x00" + k + "\x00" + merged[k])
	}
	return sdkHandler{c: h.c, tags: merged, tagKey: key.String()}
}

func (h sdkHandler) Counter(name string) client.MetricsCounter {
	s := h.c.get(name, "_total", prometheus.CounterValue, false, h)
	return counterFunc(func(d int64) {
		h.c.mu.Lock()
		s.value += float64(d)
		h.c.mu.Unlock()
	})
}

func (h sdkHandler) Gauge(name string) client.MetricsGauge {
	s := h.c.get(name, "", prometheus.GaugeValue, false, h)
	return gaugeFunc(func(v float64) {
		h.c.mu.Lock()
		s.value = v
		h.c.mu.Unlock()
	})
}

func (h sdkHandler) Timer(name string) client.MetricsTimer {
	s := h.c.get(name, "_seconds", prometheus.UntypedValue, true, h)
	return timerFunc(func(d time.Duration) {
		sec := d.Seconds()
		h.c.mu.Lock()
		defer h.c.mu.Unlock()
		s.count++
		s.sum += sec
		for i, b := range timerBuckets {
			if sec <= b {
				s.buckets[i]++
				break
			}
		}
	})
}

type counterFunc func(int64)

func (f counterFunc) Inc(d int64) { f(d) }

type gaugeFunc func(float64)

func (f gaugeFunc) Update(v float64) { f(v) }

type timerFunc func(time.Duration)

func (f timerFunc) Record(d time.Duration) { f(d) }

// promName makes an SDK metric name a Prometheus one: temporal_ first,
// only letters, digits and underscores, and the suffix of its kind.
func promName(name, suffix string) string {
	n := sanitize(name)
	if !strings.HasPrefix(n, "temporal_") {
		n = "temporal_" + n
	}
	if suffix != "" && !strings.HasSuffix(n, suffix) {
		n += suffix
	}
	return n
}

// sanitize keeps letters, digits and underscores, replacing the rest; a
// name that needs nothing replaced is returned as it is.
func sanitize(s string) string {
	clean := true
	for i := 0; i < len(s) && clean; i++ {
		ch := s[i]
		clean = ch == '_' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || i > 0 && ch >= '0' && ch <= '9'
	}
	if clean {
		return s
	}
	b := []byte(s)
	for i, ch := range b {
		ok := ch == '_' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || i > 0 && ch >= '0' && ch <= '9'
		if !ok {
			b[i] = '_'
		}
	}
	return string(b)
}
