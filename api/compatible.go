package api

import (
	"strings"

	"github.com/gin-gonic/gin"
)

// signatureReuse is counted by metrics that can.
type signatureReuse interface{ SignatureReused(operation string) }

// noteSignatureUse remembers a compatible signature of an operation that
// moves money with the body it came with, and reports it to ops when it
// comes again with another body, or with the same batch body once the
// replay store has forgotten it. It never refuses: the merchant's capture
// and later refund of one order carry the same signature.
func (s *Server) noteSignatureUse(c *gin.Context, accountID, sig string, body []byte) {
	if s.Records == nil || sig == "" {
		return
	}
	op, fingerprint := c.FullPath(), s.bodyFingerprint(body)
	use, err := s.Records.SignatureSeen(c.Request.Context(), accountID, s.signatureHash(sig), op, fingerprint, s.Now())
	if err != nil {
		s.Logger.Error("record signature use", "account_id", accountID, "error", err)
		return
	}
	if use.BodyFingerprint == fingerprint {
		// The same body again, past the replay store's window (within it
		// the store answers it): executed again, and reported as such.
		if s.Replays != nil && s.Now().Sub(use.FirstSeen) > s.Replays.TTL && replayRoutes[op].bodies {
			s.Logger.Warn("a compatible signature replayed after its replay window", "account_id", accountID,
				"operation", op, "first_seen", use.FirstSeen)
			if m, ok := s.Metrics.(signatureReuse); ok {
				m.SignatureReused(op)
			}
		}
		return
	}
	s.Logger.Warn("a compatible signature seen again with other content", "account_id", accountID,
		"operation", op, "first_operation", use.Operation, "first_seen", use.FirstSeen, "other_content_uses", use.OtherContentUses)
	if m, ok := s.Metrics.(signatureReuse); ok {
		m.SignatureReused(op)
	}
}

// signatureHash names a signature in the record without keeping it. The
// signature is hex, checked whatever its case, so it is named in one case:
// the same signature upper-cased is the same signature.
func (s *Server) signatureHash(sig string) string {
	return s.keyedHex("paygate signature uses", []byte(strings.ToLower(strings.TrimSpace(sig))))
}
