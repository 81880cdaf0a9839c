package api

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/api/checkout"
	"github.com/paygate/paygate/models"
)

// The edge: every request body is read through a size limit, and every
// answer carries headers that keep browsers from sniffing, framing or
// leaking it. The shopper's HTML pages get a Content-Security-Policy that
// lets only their own inline script and style run and lets their forms go
// only where the payment goes next.

// apiPolicy is the Content-Security-Policy of every answer that is not a
// shopper's page (XML, JSON, text): nothing in it may load or be framed.
const apiPolicy = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

// pageRoutes are the routes that answer HTML pages to shoppers' browsers.
// Their value tells whether the page may hold a form that sends the shopper
// on to the order's return_url or cancel_url (the payment page).
var pageRoutes = map[string]bool{
	"/v1/checkout":        true,
	"/v1/checkout/pay":    true,
	"/v1/checkout/cancel": true,
	"/v1/checkout/apm":    true,
	"/v1/3ds/callback":    false,
}

// edge bounds the request body and sets the security headers. The body
// limit is one byte over MaxBodyBytes so that readers which check the size
// themselves (readBody) still see a body that is too large, and answer
// with their own result code rather than a read error.
func (s *Server) edge(c *gin.Context) {
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, MaxBodyBytes+1)
	h := c.Writer.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	withForms, page := pageRoutes[c.FullPath()]
	if !page {
		h.Set("Content-Security-Policy", apiPolicy)
		c.Next()
		return
	}
	h.Set("Content-Security-Policy", s.pagePolicy(nil))
	if !withForms {
		c.Next()
		return
	}
	// The policy of a payment page names the order's return_url and
	// cancel_url: a form posted to /v1/checkout/pay or /cancel is answered
	// with a redirect there, and browsers check form-action on redirects.
	// The order is known only once the handler has read the request, so
	// the policy is completed when the answer's header is written.
	// Only the checkout request's body is kept for that (the card form's
	// holds a card, and its order comes from the parsed session field).
	body := &bodyCopy{r: c.Request.Body}
	if c.FullPath() == "/v1/checkout" {
		c.Request.Body = body
	}
	c.Writer = &pageWriter{ResponseWriter: c.Writer, finish: func(status int) {
		if status < 200 || status >= 300 {
			return // A redirect or an error page: no form to send anywhere.
		}
		if o := lookupPageOrder(s, c, body.buf.Bytes()); o != nil {
			h.Set("Content-Security-Policy", s.pagePolicy(o))
		}
	}}
	c.Next()
}

// pagePolicy is the Content-Security-Policy of a shopper's page: the page's
// own inline script and style only, no framing, and forms that go to the
// gateway itself (also under its public address), the ACS and provider
// pages (FormOrigins) and, for a payment page, the order's return_url and
// cancel_url.
func (s *Server) pagePolicy(o *models.Order) string {
	targets := []string{s.PublicURL}
	targets = append(targets, s.FormOrigins...)
	if o != nil {
		targets = append(targets, o.Details.ReturnURL, o.Details.CancelURL)
	}
	var sources []string
	for _, t := range targets {
		if src := sourceOf(t); src != "" && !slices.Contains(sources, src) {
			sources = append(sources, src)
		}
	}
	return checkout.ContentSecurityPolicy(sources...)
}

// sourceOf returns the CSP source expression of an absolute http(s) URL:
// its origin, or only its scheme ("https:") when the host cannot be written
// as a host-source (an IPv6 literal). It returns "" for anything else.
func sourceOf(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ""
	}
	host := strings.ToLower(u.Host)
	for _, r := range host {
		if !('a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '.' || r == '-' || r == ':') {
			return u.Scheme + ":"
		}
	}
	return u.Scheme + "://" + host
}

// PageOrders finds the order a shopper's page is for, from what proves
// itself only (api/payments, which makes the pages, knows how); the edge
// names that order's addresses in the page's policy.
type PageOrders interface {
	PageOrder(c *gin.Context, body []byte) *models.Order
}

// lookupPageOrder finds the order a page is for; tests replace it.
var lookupPageOrder = (*Server).pageOrder

// pageOrder asks the capability that makes pages for the page's order.
func (s *Server) pageOrder(c *gin.Context, body []byte) *models.Order {
	for _, cp := range s.Capabilities {
		if p, ok := cp.(PageOrders); ok {
			return p.PageOrder(c, body)
		}
	}
	return nil
}

// bodyCopy keeps what the handler reads of the request body (at most
// MaxBodyBytes+1 bytes: it reads through the edge's limit).
type bodyCopy struct {
	r   io.ReadCloser
	buf bytes.Buffer
}

func (b *bodyCopy) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.buf.Write(p[:n])
	return n, err
}

func (b *bodyCopy) Close() error { return b.r.Close() }

// pageWriter calls finish once, just before the answer's status line and
// header are written, while the header can still change.
type pageWriter struct {
	gin.ResponseWriter
	finish   func(status int)
	finished bool
}

func (w *pageWriter) done(status int) {
	if !w.finished {
		w.finished = true
		w.finish(status)
	}
}

// WriteHeader records the status; gin writes it with the first byte, or
// at the end of the request for an empty body.
func (w *pageWriter) WriteHeader(code int) {
	if code > 0 && !w.Written() {
		w.done(code)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *pageWriter) WriteHeaderNow() {
	w.done(w.Status())
	w.ResponseWriter.WriteHeaderNow()
}

func (w *pageWriter) Write(b []byte) (int, error) {
	w.done(w.Status())
	return w.ResponseWriter.Write(b)
}

func (w *pageWriter) WriteString(s string) (int, error) {
	w.done(w.Status())
	return w.ResponseWriter.WriteString(s)
}
