package api

import (
	"crypto/hmac"
	"errors"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/adapters/replay"
	"github.com/paygate/paygate/internal/domain/signing"
)

// ContextAuthenticated is the gin context key set once a request has proved its
// account's key; the replay store keeps answers only for such requests.
const ContextAuthenticated = "paygate.authenticated"

// ctxStrong is the gin context key set when the request proved the key
// with a strong signature (the Paygate-Signature header).
const ctxStrong = "paygate.strong"

// Authenticated reports whether the request proved the account's key.
func Authenticated(c *gin.Context) bool { return c.GetBool(ContextAuthenticated) }

// StrongHeaderSent reports whether the request carries the strong
// signature's header, proved or not: a browser cannot send it.
func StrongHeaderSent(c *gin.Context) bool { return hasStrongSignature(c) }

// StrongSigned reports whether the request proved the key with a strong
// signature.
func StrongSigned(c *gin.Context) bool { return c.GetBool(ctxStrong) }

// strongHeader is the header of the strong scheme.
const strongHeader = signing.StrongHeader

// authenticate checks that the request proved the account's key and returns
// the key its answer is signed with. A request that did not prove the key
// gets no key back, so its answer goes unsigned (docs/design.md §3: never a signing
// oracle).
//
// A request proves the key in one of two ways:
//   - a strong signature (Paygate-Signature header, over the operation, a
//     timestamp, a nonce and every body field), on any account. A request
//     that sends the header must get it right: encryption_data is then not
//     looked at;
//   - encryption_data over values, the compatible scheme, unless
//     strongOnly: the account requires a strong signature for this
//     operation (merchant.Account.RequiresStrong). The one exception is the
//     shopper's browser posting the forwarding page back to /v1/checkout
//     (signInfo, no encryption_data): it only opens the payment page of an
//     order a signed request already made, and the browser cannot send a
//     header.
func (s *Server) authenticate(c *gin.Context, account *merchant.Account, strongOnly bool, sig string, values ...string) (string, bool) {
	if hasStrongSignature(c) {
		key, ok := s.proveStrong(c, account)
		if !ok {
			return "", false
		}
		c.Set(ContextAuthenticated, true)
		c.Set(ctxStrong, true)
		return key, true
	}
	if isBrowserCheckout(c) && strings.HasPrefix(sig, forwardProofPrefix) {
		// The forwarding page of a checkout the merchant signed strongly:
		// our own proof that it did, over the order's recipe values.
		if !hmac.Equal([]byte(sig), []byte(s.ForwardProof(values...))) || sig == forwardProofPrefix {
			return "", false
		}
		// No key: the browser proved none, and nothing is signed for it.
		c.Set(ContextAuthenticated, true)
		return "", true
	}
	if strongOnly && !isBrowserCheckout(c) {
		return "", false
	}
	key, ok := account.ProvenKey(s.Now(), sig, values...)
	if !ok {
		return "", false
	}
	c.Set(ContextAuthenticated, true)
	return key, true
}

// hasStrongSignature reports whether the request sends a strong signature
// (whether it is right is authenticate's to say). Handlers that refuse a
// missing encryption_data before they call authenticate skip that check
// when it does.
func hasStrongSignature(c *gin.Context) bool { return c.GetHeader(strongHeader) != "" }

// proveStrong checks the request's strong signature: well-formed header,
// timestamp within signing.StrongTolerance, HMAC of the canonical string
// under the account's key (or its previous key during a rotation's grace
// period), and a nonce the account has not used; the nonce is then used
// up. It returns the key that made the signature.
func (s *Server) proveStrong(c *gin.Context, account *merchant.Account) (string, bool) {
	sig, err := signing.ParseStrongHeader(c.GetHeader(strongHeader))
	if err != nil {
		s.Logger.Debug("strong signature refused", "account_id", account.ID, "error", err)
		return "", false
	}
	body, ok := keptBody(c)
	if !ok || s.Replays == nil {
		// The body was not kept, or no nonce store: fail closed.
		s.Logger.Warn("strong signature cannot be checked", "path", c.FullPath(), "body_kept", ok)
		return "", false
	}
	now := s.Now()
	var why error
	key, ok := account.ProveWith(now, func(key string) bool {
		why = signing.VerifyStrong(key, c.Request.Method, c.FullPath(), body, sig, now)
		return why == nil
	})
	if !ok {
		s.Logger.Debug("strong signature refused", "account_id", account.ID, "error", why)
		return "", false
	}
	// Only a signature made with the key uses up its nonce, so nobody
	// without the key can burn a merchant's nonces.
	if err := s.Replays.UseNonce(c.Request.Context(), account.ID, sig.Nonce); err != nil {
		if !errors.Is(err, replay.ErrNonceSeen) {
			s.Logger.Error("record nonce", "account_id", account.ID, "error", err)
		} else {
			s.Logger.Debug("strong signature refused", "account_id", account.ID, "error", err)
		}
		return "", false
	}
	return key, true
}

// forwardProofPrefix starts the signInfo of a forwarding page answered to
// a strongly signed checkout; no encryption_data (64 hex digits) does.
const forwardProofPrefix = "pgfwd1."

// ForwardProof is the signInfo of the forwarding page answered to a
// checkout the merchant signed strongly, which has no encryption_data to
// give the shopper's browser: an HMAC under a key derived from the
// gateway's SessionKey over the checkout recipe's values, separated, so it
// proves only that this gateway answered that order's page. It is not a
// merchant's signature of anything, and opens only the payment page of the
// order the signed request made. Without a SessionKey it is the bare
// prefix, which proves nothing.
func (s *Server) ForwardProof(values ...string) string {
	if len(s.SessionKey) == 0 {
		return forwardProofPrefix
	}
	return forwardProofPrefix + s.keyedHex("paygate checkout forwarding", []byte(strings.Join(values, "\x00")))
}

// isBrowserCheckout reports whether the request is the shopper's browser
// posting the forwarding page back: /v1/checkout with signInfo and without
// encryption_data.
func isBrowserCheckout(c *gin.Context) bool {
	if c.FullPath() != "/v1/checkout" {
		return false
	}
	body, ok := keptBody(c)
	if !ok {
		return false
	}
	fields := RequestFields(body)
	// The handler's decoding matches field names in any case, so a field
	// that is encryption_data to it is encryption_data here too.
	for name, value := range fields {
		if strings.EqualFold(name, "encryption_data") && strings.TrimSpace(value) != "" {
			return false
		}
	}
	return strings.TrimSpace(fields["signInfo"]) != ""
}
