package api

import (
	"crypto/subtle"
	"net/http"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"
	"go.temporal.io/sdk/converter"
)

// CodecEndpoint serves Temporal's remote codec protocol (POST
// /codec/encode and /codec/decode with a JSON list of payloads) so that the
// Temporal Web UI and CLI show workflow payloads decrypted, while the
// Temporal server and its database hold them encrypted
// (internal/adapters/payloadcodec).
//
// Whoever reaches it can decrypt every payload, so it knows who asks, and
// nothing secret is ever in its URL: the UI hands its codec URL to anyone
// who loads its settings, and process lists show command lines.
//   - A person using the Temporal UI is an ops user signed in to the
//     console: the UI calls with "include credentials", the browser sends
//     the console's session cookie (same site: cookies ignore the port),
//     and the call must come from an origin in AllowOrigins.
//   - The CLI and other tools send "Authorization: Bearer <Token>" (the
//     CLI reads it from TEMPORAL_CODEC_AUTH, not from its arguments).
//
// Every call is logged with who asked. The preflight the browser sends
// first (the UI posts JSON with an X-Namespace header) is answered for the
// allowed origins without credentials, since browsers never send them
// with it.
type CodecEndpoint struct {
	// Codec encrypts and decrypts the payloads; nil turns the endpoint off.
	Codec converter.PayloadCodec
	// Token authenticates tools by bearer header; empty: no tool may.
	Token string
	// AllowOrigins are the browser origins that may call the endpoint
	// (the Temporal UI's, such as http://127.0.0.1:8233); none refuses
	// every browser.
	AllowOrigins []string
	// People finds the ops user a browser's request is signed in as; nil:
	// no person may.
	People CodecPeople
}

// CodecPeople finds who signed in a browser's request (the console).
type CodecPeople interface {
	// OpsUser returns the email of the ops user r is signed in as.
	OpsUser(r *http.Request) (string, bool)
}

// codecPrefix is where the codec endpoint lives.
const codecPrefix = "/codec/"

// codecPreflightMaxAge is how long (seconds) a browser may reuse an
// answered preflight: the UI decodes every event it shows, and each call
// would otherwise be preceded by its own preflight.
const codecPreflightMaxAge = "600"

// enabled reports whether the endpoint is on.
func (e *CodecEndpoint) enabled() bool { return e != nil && e.Codec != nil }

// corsOrigin sets the CORS headers for the request's origin and reports
// whether the request may go on: a request without an Origin (the CLI, a
// script) may; one from an origin not allowed may not.
func (e *CodecEndpoint) corsOrigin(c *gin.Context) bool {
	h := c.Writer.Header()
	h.Add("Vary", "Origin")
	origin := c.GetHeader("Origin")
	if origin == "" {
		return true
	}
	if !slices.Contains(e.AllowOrigins, origin) {
		return false
	}
	h.Set("Access-Control-Allow-Origin", origin)
	// The UI's "include credentials" calls carry the console's cookie.
	h.Set("Access-Control-Allow-Credentials", "true")
	return true
}

// codecOperation is the operation a path under /codec/ names, "encode" or
// "decode"; ok is false for any other path (a secret in the path, as
// before 2026-11-25, is no longer taken).
func codecOperation(rest string) (op string, ok bool) {
	op = strings.Trim(rest, "/")
	return op, op == "encode" || op == "decode"
}

// caller says who a call is from: a tool proving the token, or an ops
// user's browser from an allowed origin.
func (e *CodecEndpoint) caller(c *gin.Context) (who, how string, ok bool) {
	if header := c.GetHeader("Authorization"); header != "" {
		token, bearer := strings.CutPrefix(header, "Bearer ")
		if bearer && e.Token != "" && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(token)), []byte(e.Token)) == 1 {
			return "codec token", "bearer", true
		}
		return "", "", false
	}
	// A cookie only from a browser page of an allowed origin: a page on
	// another port of the same host (the simulator's) gets the cookie too.
	if origin := c.GetHeader("Origin"); origin != "" && slices.Contains(e.AllowOrigins, origin) && e.People != nil {
		if email, ok := e.People.OpsUser(c.Request); ok {
			return email, "console session", true
		}
	}
	return "", "", false
}

// codecCall encodes or decodes the posted payloads.
func (s *Server) codecCall(c *gin.Context) {
	e := s.Codec
	op, ok := codecOperation(c.Param("call"))
	if !e.enabled() || !ok {
		c.String(http.StatusNotFound, "404 page not found")
		return
	}
	if !e.corsOrigin(c) {
		c.String(http.StatusForbidden, "origin not allowed")
		return
	}
	who, how, ok := e.caller(c)
	if !ok {
		s.Logger.Warn("codec call refused", "operation", op, "origin", c.GetHeader("Origin"), "client_ip", c.ClientIP())
		c.Header("WWW-Authenticate", `Bearer realm="paygate-codec"`)
		c.String(http.StatusUnauthorized, "sign in to the console as ops, or send the codec token")
		return
	}
	s.Logger.Info("codec call", "operation", op, "by", who, "auth", how, "namespace", c.GetHeader("X-Namespace"),
		"origin", c.GetHeader("Origin"))
	// The SDK's handler speaks the protocol: protojson payloads in, the
	// same out, an error as 400 with the codec's message (which names a
	// key id at most, never key material or a payload).
	converter.NewPayloadCodecHTTPHandler(e.Codec).ServeHTTP(c.Writer, c.Request)
}

// codecPreflight answers the browser's CORS preflight for the UI's origin.
func (s *Server) codecPreflight(c *gin.Context) {
	e := s.Codec
	if _, ok := codecOperation(c.Param("call")); !e.enabled() || !ok {
		c.String(http.StatusNotFound, "404 page not found")
		return
	}
	if c.GetHeader("Origin") == "" || c.GetHeader("Access-Control-Request-Method") != http.MethodPost || !e.corsOrigin(c) {
		c.String(http.StatusForbidden, "origin not allowed")
		return
	}
	h := c.Writer.Header()
	h.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "Content-Type, X-Namespace, Authorization, Authorization-Extras")
	h.Set("Access-Control-Max-Age", codecPreflightMaxAge)
	c.Status(http.StatusNoContent)
}

// loggedPath is the request's path as the log may show it: under the codec
// endpoint every segment but the operation is replaced, since an old
// client may still put a secret there.
func loggedPath(r *http.Request) string {
	p := r.URL.Path
	rest, ok := strings.CutPrefix(p, codecPrefix)
	if !ok {
		return p
	}
	parts := strings.Split(rest, "/")
	for i, part := range parts {
		if part != "" && !(i == len(parts)-1 && (part == "encode" || part == "decode")) {
			parts[i] = "(redacted)"
		}
	}
	return codecPrefix + strings.Join(parts, "/")
}
