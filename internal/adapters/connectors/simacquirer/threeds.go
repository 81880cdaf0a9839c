package simacquirer

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"

	"github.com/paygate/paygate/internal/domain/connector"
)

// 3-D Secure authentication statuses.
const (
	AuthAuthenticated     = "authenticated"
	AuthChallengeRequired = "challenge_required"
	AuthFailed            = "failed"
)

// ThreeDSData is the result of a successful 3-D Secure authentication, sent
// with a charge.
type ThreeDSData struct {
	AuthenticationID string `json:"authentication_id"`
	ECI              string `json:"eci"`
	CAVV             string `json:"cavv"`
	// External, XID and DSTransID carry a result the merchant's own 3-D
	// Secure server produced.
	External  bool   `json:"external,omitempty"`
	XID       string `json:"xid,omitempty"`
	DSTransID string `json:"ds_trans_id,omitempty"`
}

// AuthenticationRequest starts a 3-D Secure authentication of a card. Its
// String, GoString, LogValue and JSON forms hide the card.
type AuthenticationRequest struct {
	IdempotencyKey string `json:"idempotency_key"`
	CardNumber     string `json:"-"`
	ExpiryMonth    string `json:"-"`
	ExpiryYear     string `json:"-"`
	Amount         int64  `json:"amount"`
	Currency       string `json:"currency"`
	Reference      string `json:"reference"`
	ReturnURL      string `json:"return_url"`
	// Browser is the shopper's browser and device.
	Browser *connector.Browser `json:"browser,omitempty"`
}

// String describes r without card data.
func (r AuthenticationRequest) String() string {
	return fmt.Sprintf("AuthenticationRequest{IdempotencyKey:%q Reference:%q Card:%s Amount:%d Currency:%q ReturnURL:%q}",
		r.IdempotencyKey, r.Reference, maskCard(r.CardNumber), r.Amount, r.Currency, r.ReturnURL)
}

// GoString describes r without card data, for the %#v verb.
func (r AuthenticationRequest) GoString() string { return r.String() }

// LogValue describes r for log/slog without card data.
func (r AuthenticationRequest) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("idempotency_key", r.IdempotencyKey),
		slog.String("reference", r.Reference),
		slog.String("card", maskCard(r.CardNumber)),
		slog.Int64("amount", r.Amount),
		slog.String("currency", r.Currency),
		slog.String("return_url", r.ReturnURL),
	)
}

// authenticationWire is the wire form of an AuthenticationRequest; it is
// only ever marshalled straight into a request body.
type authenticationWire struct {
	IdempotencyKey string             `json:"idempotency_key"`
	CardNumber     string             `json:"card_number"`
	ExpiryMonth    string             `json:"expiry_month"`
	ExpiryYear     string             `json:"expiry_year"`
	Amount         int64              `json:"amount"`
	Currency       string             `json:"currency"`
	Reference      string             `json:"reference"`
	ReturnURL      string             `json:"return_url"`
	Browser        *connector.Browser `json:"browser,omitempty"`
}

// Authentication is the state of a 3-D Secure authentication. When Status is
// "challenge_required" the shopper must be sent to ACSURL.
type Authentication struct {
	AuthenticationID string `json:"authentication_id"`
	Status           string `json:"status"`
	ECI              string `json:"eci"`
	CAVV             string `json:"cavv"`
	DSTransID        string `json:"ds_trans_id"`
	ACSURL           string `json:"acs_url"`
}

// Authenticated reports whether the authentication succeeded.
func (a Authentication) Authenticated() bool { return a.Status == AuthAuthenticated }

// ThreeDSData returns the data a charge needs to carry this authentication.
func (a Authentication) ThreeDSData() *ThreeDSData {
	return &ThreeDSData{AuthenticationID: a.AuthenticationID, ECI: a.ECI, CAVV: a.CAVV}
}

// Authenticate starts a 3-D Secure authentication. It is idempotent by
// req.IdempotencyKey.
func (c *Client) Authenticate(ctx context.Context, req AuthenticationRequest) (Authentication, error) {
	what := "authenticate " + req.IdempotencyKey
	if req.IdempotencyKey == "" {
		return Authentication{}, fmt.Errorf("authenticate: %w: empty idempotency key", ErrRejected)
	}
	var out Authentication
	err := c.do(ctx, what, http.MethodPost, "/v1/3ds/authentications", authenticationWire(req), &out)
	return out, err
}

// GetAuthentication returns the authentication with id.
func (c *Client) GetAuthentication(ctx context.Context, id string) (Authentication, error) {
	what := "get authentication " + id
	if id == "" {
		return Authentication{}, fmt.Errorf("get authentication: %w: empty authentication id", ErrRejected)
	}
	var out Authentication
	err := c.do(ctx, what, http.MethodGet, "/v1/3ds/authentications/"+url.PathEscape(id), nil, &out)
	return out, err
}

// VerifyThreeDSResult reports whether signature is the ACS's signature of a
// challenge result (see SignThreeDSResult). It compares in constant time.
// A valid signature proves only that the secret's holder sent the result:
// the outcome itself is read from the ACS (GetAuthentication).
func VerifyThreeDSResult(secret, authenticationID, status, cavv, reference, signature string) bool {
	want := SignThreeDSResult(secret, authenticationID, status, cavv, reference)
	return hmac.Equal([]byte(want), []byte(signature))
}

// SignThreeDSResult returns the signature the ACS sends with a challenge
// result: lower hex HMAC-SHA256(secret, authentication_id|status|cavv|reference).
func SignThreeDSResult(secret, authenticationID, status, cavv, reference string) string {
	return sign(secret, []byte(authenticationID+"|"+status+"|"+cavv+"|"+reference))
}

// VerifyProviderSignature reports whether signature (the X-Provider-Signature
// header) is the APM provider's signature of body. It compares in constant
// time. A valid signature proves only who sent the callback: the payment's
// status is read from the provider (GetAPMPayment).
func VerifyProviderSignature(secret string, body []byte, signature string) bool {
	return hmac.Equal([]byte(SignProviderCallback(secret, body)), []byte(signature))
}

// SignProviderCallback returns the X-Provider-Signature the APM provider sends
// with body: lower hex HMAC-SHA256(secret, body).
func SignProviderCallback(secret string, body []byte) string {
	return sign(secret, body)
}

func sign(secret string, msg []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(msg)
	return hex.EncodeToString(m.Sum(nil))
}
