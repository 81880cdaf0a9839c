package rail

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
)

// Callback is what the rail posts when a transfer's attempt is decided. It
// names the transfer only: a rumour that makes the payout ask the rail.
type Callback struct {
	TransferID     string `json:"transfer_id"`
	IdempotencyKey string `json:"idempotency_key"`
}

// SignatureHeader carries a callback's signature: the lower hex
// HMAC-SHA256 of the body under the rail's callback secret.
const SignatureHeader = "X-Rail-Signature"

// SignCallback is the signature of a callback body under secret.
func SignCallback(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

// Callback errors.
var (
	ErrCallbackUnsigned  = errors.New("rail callback: bad signature")
	ErrCallbackMalformed = errors.New("rail callback: malformed")
)

// ReadCallback checks a callback's signature (constant time) and reads it;
// a callback must name a transfer and a payout's key (its workflow id).
func ReadCallback(secret string, body []byte, signature string) (Callback, error) {
	if secret == "" || !hmac.Equal([]byte(SignCallback(secret, body)), []byte(signature)) {
		return Callback{}, ErrCallbackUnsigned
	}
	var cb Callback
	if err := json.Unmarshal(body, &cb); err != nil || cb.TransferID == "" || !strings.HasPrefix(cb.IdempotencyKey, "payout/") {
		return Callback{}, ErrCallbackMalformed
	}
	return cb, nil
}
