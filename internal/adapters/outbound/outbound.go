// Package outbound makes the HTTP transport the connectors call acquirers
// with: connections kept alive for the gateway's concurrency, and a trace
// span per call, a child of the activity's.
package outbound

import (
	"net/http"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
)

// MaxIdleConnsPerHost keeps enough connections to one acquirer open for the
// worker's concurrent charges; the standard transport keeps two, and every
// charge past those paid for a new connection.
const MaxIdleConnsPerHost = 128

// Transport returns a new transport for calls to one acquirer.
func Transport() http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 2 * MaxIdleConnsPerHost
	t.MaxIdleConnsPerHost = MaxIdleConnsPerHost
	// Span names are the method and the route's shape, never the path:
	// paths carry charge ids and idempotency keys.
	return otelhttp.NewTransport(t, otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string {
		return "acquirer " + r.Method
	}))
}
