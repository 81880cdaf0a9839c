package api

import (
	"crypto/subtle"
	"net/http"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"
	"go.temporal.io/sdk/converter"
)

// CodecEndpoint serves Temporal's remote codec protocol (POST .../encode
// and .../decode with a JSON list of payloads) so that the Temporal Web UI
// and CLI show workflow payloads decrypted, while the Temporal server and
// its database hold them encrypted (internal/adapters/payloadcodec).
//
// Whoever reaches it can decrypt every payload, so it is authenticated.
// The UI sends an Authorization header only when it runs with its own
// single sign-on and passes that access token on, which a shared secret
// cannot check; so the secret may instead be the path segment before the
// operation: the UI is configured with the endpoint
// https://gateway/codec/<token> and calls .../codec/<token>/decode. The
// CLI and other tools send the same secret as "Authorization: Bearer
// <token>" to /codec/decode. Either way the secret is as confidential as
// the UI's configuration, which is why the UI itself must sit behind the
// operators' access control (docs/decisions.md, "Encrypted histories").
//
// The UI calls it from the browser, from the UI's own origin: only the
// origins in AllowOrigins get CORS headers, a request from any other
// origin is refused, and the preflight the browser sends first (the UI
// posts JSON with an X-Namespace header) is answered without the secret,
// since browsers never send credentials with it.
type CodecEndpoint struct {
	// Codec encrypts and decrypts the payloads.
	Codec converter.PayloadCodec
	// Token authenticates callers; empty turns the endpoint off.
	Token string
	// AllowOrigins are the browser origins that may call the endpoint
	// (the Temporal UI's, such as http://127.0.0.1:8233); none refuses
	// every browser and leaves the endpoint to the CLI.
	AllowOrigins []string
}

// codecPrefix is where the codec endpoint lives.
const codecPrefix = "/codec/"

// codecPreflightMaxAge is how long (seconds) a browser may reuse an
// answered preflight: the UI decodes every event it shows, and each call
// would otherwise be preceded by its own preflight.
const codecPreflightMaxAge = "600"

// enabled reports whether the endpoint is on.
func (e *CodecEndpoint) enabled() bool { return e != nil && e.Token != "" && e.Codec != nil }

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
	// Only the UI's "include cross-origin credentials" option needs this;
	// the gateway sets no cookies, so it lends the UI no ambient authority.
	h.Set("Access-Control-Allow-Credentials", "true")
	return true
}

// codecOperation splits what follows /codec/ into the path secret (empty
// when the caller authenticates by header) and the operation, "encode" or
// "decode"; ok is false for any other path.
func codecOperation(rest string) (secret, op string, ok bool) {
	parts := strings.Split(strings.Trim(rest, "/"), "/")
	switch {
	case len(parts) == 1:
		op = parts[0]
	case len(parts) == 2 && parts[0] != "":
		secret, op = parts[0], parts[1]
	default:
		return "", "", false
	}
	return secret, op, op == "encode" || op == "decode"
}

// authorised checks the secret from the path or, without one, from the
// bearer header, in constant time.
func (e *CodecEndpoint) authorised(pathSecret, header string) bool {
	got := pathSecret
	if got == "" {
		token, ok := strings.CutPrefix(header, "Bearer ")
		if !ok {
			return false
		}
		got = strings.TrimSpace(token)
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(e.Token)) == 1
}

// codecCall encodes or decodes the posted payloads.
func (s *Server) codecCall(c *gin.Context) {
	e := s.Codec
	secret, _, ok := codecOperation(c.Param("call"))
	if !e.enabled() || !ok {
		c.String(http.StatusNotFound, "404 page not found")
		return
	}
	if !e.corsOrigin(c) {
		c.String(http.StatusForbidden, "origin not allowed")
		return
	}
	if !e.authorised(secret, c.GetHeader("Authorization")) {
		c.Header("WWW-Authenticate", `Bearer realm="paygate-codec"`)
		c.String(http.StatusUnauthorized, "unauthorised")
		return
	}
	// The SDK's handler speaks the protocol: protojson payloads in, the
	// same out, an error as 400 with the codec's message (which names a
	// key id at most, never key material or a payload).
	converter.NewPayloadCodecHTTPHandler(e.Codec).ServeHTTP(c.Writer, c.Request)
}

// codecPreflight answers the browser's CORS preflight for the UI's origin.
func (s *Server) codecPreflight(c *gin.Context) {
	e := s.Codec
	if _, _, ok := codecOperation(c.Param("call")); !e.enabled() || !ok {
		c.String(http.StatusNotFound, "404 page not found")
		return
	}
	if c.GetHeader("Origin") == "" || c.GetHeader("Access-Control-Request-Method") != http.MethodPost || !e.corsOrigin(c) {
		c.String(http.StatusForbidden, "origin not allowed")
		return
	}
	h := c.Writer.Header()
	h.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "Content-Type, X-Namespace, Authorization")
	h.Set("Access-Control-Max-Age", codecPreflightMaxAge)
	c.Status(http.StatusNoContent)
}

// loggedPath is the request's path as the log may show it: under the codec
// endpoint every segment but the operation is replaced, since it may be
// the path secret (or a mistyped one), and whoever reads the logs must not
// be able to decrypt the histories with it.
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
