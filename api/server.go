// Package api is the merchant-facing HTTP interface: it authenticates and
// validates requests, then starts or updates order workflows and renders
// their answers. It never calls a connector or writes an order itself.
package api

import (
	"context"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"

	"github.com/paygate/paygate/api/admin"
	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/adapters/replay"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/notify"
)

// Accounts loads merchant accounts with their signing keys.
type Accounts interface {
	Load(ctx context.Context, merchantID, accountID string) (*merchant.Account, error)
}

// IDs hands out transaction ids.
type IDs interface {
	Next() string
}

// Server holds what the handlers need.
type Server struct {
	// doc is the API's description, made on its first request.
	doc apiDocument

	Accounts Accounts
	IDs      IDs
	// Records is the record of orders, payouts, subscriptions and the
	// rest (records.go); nil turns off what needs it.
	Records Records
	Logger  *slog.Logger
	Now     func() time.Time

	// NotifySchedule is the retry schedule new orders' notifications follow.
	NotifySchedule notify.Schedule
	// PublicURL is the gateway's address as browsers and providers see it.
	PublicURL string
	// TrustedProxies are the load balancers (IPs or CIDRs) whose
	// X-Forwarded-For gives the client's address; none: the TCP peer.
	TrustedProxies []string
	// SessionKey signs hosted payment sessions (api/payments) and keys the
	// replay store's hashes.
	SessionKey []byte
	// FormOrigins are the origins, besides the gateway's own, that the
	// shopper's pages may send the shopper to with a form: the 3-D Secure
	// ACS and APM provider pages (see edge.go).
	FormOrigins []string

	// Capabilities are the merchant operations served by packages of
	// their own (api/payments, api/operations, api/payouts, api/subscriptions, api/methods,
	// api/queries): each puts its routes on /v1, behind the same
	// edge, replay guard and authenticated-request step.
	Capabilities []Capability

	// Offers tells what each connector takes and Tallies counts how the
	// account's orders fared by method (POST /v1/optimise, optimise.go);
	// nil Offers refuses optimise, nil Tallies counts over DB.
	Offers  ConnectorOffers
	Tallies MethodTallies

	// Admin is the operators' API under /admin (api/admin); nil or without
	// a token, off.
	Admin *admin.API

	// Codec is Temporal's remote codec endpoint under /codec for the UI
	// (codec.go); nil or without a token, off.
	Codec *CodecEndpoint

	// Replays keeps first answers and strong-signature nonces (replay.go);
	// nil: replays are not caught and strong signatures are refused.
	Replays *replay.Store

	// Metrics counts each answered request; nil counts nothing.
	Metrics RequestMetrics
}

// Capability is a merchant operation served by a package of its own.
type Capability interface {
	Routes(v1 gin.IRoutes)
}

// RequestMetrics counts answered requests by route and result code.
type RequestMetrics interface {
	ObserveRequest(endpoint, code string, took time.Duration)
}

// Handler returns the HTTP handler with every route.
func (s *Server) Handler() http.Handler { return traced(s.engine()) }

// engine is the router with every route.
func (s *Server) engine() *gin.Engine {
	if s.Now == nil {
		s.Now = time.Now
	}
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	// Client addresses come from the connection, unless it comes from a
	// load balancer the deployment trusts (TrustedProxies): then from the
	// X-Forwarded-For that balancer wrote, read from the right up to the
	// first address it does not trust. A header set by anyone else must
	// not get around the query IP allow-list.
	r.RemoteIPHeaders = []string{"X-Forwarded-For"}
	if err := r.SetTrustedProxies(s.TrustedProxies); err != nil {
		// The configuration checks the list; a hand-made one that is
		// wrong trusts nobody.
		_ = r.SetTrustedProxies(nil)
	}
	r.Use(s.logRequests, s.recoverPanics)
	// Body limit and security headers on every answer (edge.go).
	r.Use(s.edge)
	// A refusal's answer links to its result code's row (apidoc.go).
	r.Use(helpLinks)
	r.GET("/healthz", func(c *gin.Context) { c.String(http.StatusOK, "ok") })
	// The API's description and its reference page (apidoc.go).
	r.GET("/openapi.json", s.serveOpenAPI)
	r.GET("/reference", s.serveReference)
	v1 := r.Group("/v1")
	// First answers of repeated requests, Idempotency-Key (replay.go).
	v1.Use(s.replayGuard)
	for _, c := range s.Capabilities {
		c.Routes(v1)
	}
	ops := r.Group("/admin")
	s.Admin.Routes(ops)
	r.POST("/codec/*call", s.codecCall)
	r.OPTIONS("/codec/*call", s.codecPreflight)
	return r
}

// traced starts a span for each merchant and shopper request, the parent of
// the workflow's spans. The codec's paths hold its token and the health
// check is noise, so neither is traced; a span is named after the /v1
// operation, whose paths hold no ids.
func traced(h http.Handler) http.Handler {
	return otelhttp.NewHandler(h, "api",
		otelhttp.WithFilter(func(r *http.Request) bool {
			return strings.HasPrefix(r.URL.Path, "/v1/") || strings.HasPrefix(r.URL.Path, "/admin/")
		}),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string {
			if strings.HasPrefix(r.URL.Path, "/v1/") && len(r.URL.Path) < 40 {
				return r.Method + " " + r.URL.Path
			}
			return r.Method + " /admin"
		}))
}

// logRequests writes one line per request: no bodies, so no card data.
func (s *Server) logRequests(c *gin.Context) {
	start := time.Now()
	c.Next()
	if s.Metrics != nil {
		// The route's template, never the path itself: paths carry ids.
		endpoint := c.FullPath()
		if endpoint == "" {
			endpoint = "unmatched"
		}
		code := c.GetString(ContextResultCode)
		if code == "" {
			code = strconv.Itoa(c.Writer.Status())
		}
		s.Metrics.ObserveRequest(endpoint, code, time.Since(start))
	}
	s.Logger.Info("request",
		"method", c.Request.Method,
		"path", loggedPath(c.Request),
		"status", c.Writer.Status(),
		"duration_ms", time.Since(start).Milliseconds(),
		"client_ip", c.ClientIP(),
		"result", c.GetString(ContextResultCode),
	)
}

// ContextResultCode is the gin context key under which handlers leave the
// result code for the request log.
const ContextResultCode = "result_code"

func (s *Server) recoverPanics(c *gin.Context) {
	defer func() {
		if r := recover(); r != nil {
			// The stack holds code locations and pointers, never a
			// request's values.
			s.Logger.Error("handler panic", "path", loggedPath(c.Request), "panic", r, "stack", string(debug.Stack()))
			c.Set(ContextResultCode, codes.SystemError.ID)
			if !c.Writer.Written() {
				c.String(http.StatusServiceUnavailable, codes.SystemError.String())
			}
			c.Abort()
		}
	}()
	c.Next()
}
