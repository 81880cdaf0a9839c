package api

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/adapters/replay"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/order"
	"github.com/paygate/paygate/models"
)

// Replays: the compatible signature does not name the operation
// and covers few fields, so a signed request seen once could be sent again
// and executed again. The replay guard answers a request that was already
// answered with its first answer instead:
//
//   - the capture, cancel, review and refund batches: the same body on the
//     same operation for the same account within 24 h, always;
//   - every merchant operation sent with an Idempotency-Key header: the same
//     key on the same operation for the same account, with the same body;
//     with another body it is refused (IdempotencyConflict).
//
// A request claims its keys in Postgres before its handler runs, so
// identical requests sent together are executed once: the others wait for
// the first answer, or are refused with RequestInProgress. Only answers of
// requests that proved the account's key and were answered 200 are kept,
// system errors (S0001) excepted; any other answer releases the claim, so
// a refused request can be corrected and sent again, and one whose outcome
// was not known yet asks again.

// IdempotencyKeyHeader is the header that names a request for the replay
// store.
const IdempotencyKeyHeader = "Idempotency-Key"

// ReplayedHeader is set on an answer given from the replay store.
const ReplayedHeader = "Idempotent-Replayed"

// maxIdempotencyKey is the longest Idempotency-Key, in bytes.
const maxIdempotencyKey = 255

// maxStoredAnswer is the largest answer the replay store keeps; a larger
// one is not kept (its request may then be executed again).
const maxStoredAnswer = MaxBodyBytes

// replayWait is how long a request waits for the answer of the same
// request in progress before it is refused with RequestInProgress.
var replayWait = 10 * time.Second

// ctxBody is the gin context key of the request body the replay guard
// read (the strong signature covers it).
const ctxBody = "paygate.body"

// replayRoute is a merchant operation the guard covers.
type replayRoute struct {
	// bodies: a repeated body is answered from the store even without an
	// Idempotency-Key (the batches).
	bodies bool
	// answers is the shape the guard's own refusals take.
	answers AnswerFormat
	// queries: the account's query IP allow-list holds for a stored
	// answer as for the query itself (fromQueryAddress).
	queries bool
	// movesMoney: the operation always moves money (moneyMover), so a
	// strong-for-money account's stored answer is given only to a request
	// with a strong signature of its own.
	movesMoney bool
	// notRerun: run again, the operation moves money again (every refund
	// entry is a new refund), so a request whose identical predecessor
	// died unanswered is not run (EarlierRequestUnanswered). The other
	// batches are one update per content, refused by the order's state
	// when already done.
	notRerun bool
}

// replayRoutes are the merchant operations the guard covers.
var replayRoutes = map[string]replayRoute{
	"/v1/authorise":       {answers: XMLAnswers},
	"/v1/checkout":        {answers: PageAnswers},
	"/v1/retrievalTrans":  {answers: QueryAnswers, queries: true},
	"/v1/retrievalRefund": {answers: RefundQueryAnswers, queries: true},
	"/v1/optimise":        {answers: OptimiseAnswers},
	"/v1/capture":         {bodies: true, movesMoney: true, answers: BatchAnswers("capture_orders")},
	"/v1/review":          {bodies: true, movesMoney: true, answers: BatchAnswers("review_orders")},
	"/v1/cancel":          {bodies: true, movesMoney: true, answers: BatchAnswers("cancel_orders")},
	"/v1/refund":          {bodies: true, movesMoney: true, notRerun: true, answers: BatchAnswers("refund_orders")},
	// A payout is also one per request_id; the key makes a retry with a
	// new request_id the same payout, as merchants expect of the header.
	"/v1/payout":             {movesMoney: true, answers: JSONAnswers},
	"/v1/payout/query":       {answers: JSONAnswers},
	"/v1/token/delete":       {answers: JSONAnswers},
	"/v1/cancelsubscription": {answers: JSONAnswers},
	"/v1/subscription":       {answers: JSONAnswers},
	"/v1/dispute":            {answers: JSONAnswers},
}

// keptBody is the request body the replay guard kept for the strong
// signature; false when it kept none.
func keptBody(c *gin.Context) ([]byte, bool) {
	raw, _ := c.Get(ctxBody)
	body, ok := raw.([]byte)
	return body, ok
}

// replayGuard is the replay store's middleware on /v1 (see above). Without
// a store (no database) it only keeps the body for the strong signature.
func (s *Server) replayGuard(c *gin.Context) {
	op := c.FullPath()
	if c.Request.Method != http.MethodPost {
		c.Next()
		return
	}
	// Every POST's body is kept, covered or not: the strong signature
	// covers it on every route (payouts and stored cards too).
	body, err := io.ReadAll(io.LimitReader(c.Request.Body, MaxBodyBytes+1))
	// The handler reads the same bytes, and the same error, as it would have.
	c.Request.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errorReader{err}))
	if err != nil || len(body) > MaxBodyBytes {
		c.Next()
		return
	}
	c.Set(ctxBody, body)
	route, covered := replayRoutes[op]
	if !covered {
		c.Next()
		return
	}
	idemKey, withKey := c.Request.Header[http.CanonicalHeaderKey(IdempotencyKeyHeader)]
	if s.Replays == nil || !route.bodies && !withKey {
		c.Next()
		return
	}
	who := peekAccount(body)
	if withKey && (len(idemKey) != 1 || !validIdempotencyKey(idemKey[0])) {
		s.refuseReplay(c, op, who, http.StatusOK,
			codes.InvalidField.With("Idempotency-Key must be 1 to 255 printable ASCII characters, sent once"))
		return
	}
	if who.MerchantID == "" || who.AccountID == "" {
		c.Next() // The handler refuses it: nothing is executed.
		return
	}
	fingerprint := s.bodyFingerprint(body)
	scope := who.MerchantID + "/" + who.AccountID
	var keys []models.ReplayKey
	if withKey {
		keys = append(keys, models.ReplayKey{Scope: scope, Operation: op, Key: "idem:" + idemKey[0]})
	}
	if route.bodies {
		keys = append(keys, models.ReplayKey{Scope: scope, Operation: op, Key: "body:" + fingerprint})
	}
	s.guarded(c, op, who, keys, fingerprint)
}

// bodyFingerprint names a body in the replay store: an HMAC-SHA256 under a
// key derived from the gateway's SessionKey, so that the store never holds
// a plain hash of a body that may carry a card number and security code
// (a plain hash could be searched for them). Without a SessionKey (tests)
// it is a plain SHA-256.
func (s *Server) bodyFingerprint(body []byte) string {
	return s.keyedHex("paygate replay fingerprints", body)
}

// PinFingerprint names a request's content in a pin of the replay store
// (replay.Store.Pin), keyed as bodyFingerprint is, for the same reason.
func (s *Server) PinFingerprint(content []byte) string {
	return s.keyedHex("paygate replay pins", content)
}

// keyedHex is the hex HMAC-SHA256 of data under a key derived from the
// SessionKey for label, one key per use; without a SessionKey (tests) a
// plain SHA-256.
func (s *Server) keyedHex(label string, data []byte) string {
	if len(s.SessionKey) == 0 {
		sum := sha256.Sum256(data)
		return hex.EncodeToString(sum[:])
	}
	derive := hmac.New(sha256.New, s.SessionKey)
	derive.Write([]byte(label))
	m := hmac.New(sha256.New, derive.Sum(nil))
	m.Write(data)
	return hex.EncodeToString(m.Sum(nil))
}

// guarded claims every key, then answers from the store or runs the handler
// and keeps its answer.
func (s *Server) guarded(c *gin.Context, op string, who Echo, keys []models.ReplayKey, fingerprint string) {
	ctx := c.Request.Context()
	var claims []replay.Held
	release := func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		for _, h := range claims {
			if err := s.Replays.Release(ctx, h.Key, h.Claim); err != nil {
				s.Logger.Error("release replay claim", "operation", op, "error", err)
			}
		}
	}
	keep := func(a models.ReplayAnswer) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		for _, h := range claims {
			if err := s.Replays.Complete(ctx, h.Key, h.Claim, a); err != nil {
				s.Logger.Error("store replay answer", "operation", op, "error", err)
				_ = s.Replays.Release(ctx, h.Key, h.Claim)
			}
		}
	}
	for _, k := range keys {
		res, err := s.Replays.Claim(ctx, k, fingerprint, replayWait)
		if err != nil {
			release()
			s.Logger.Error("claim replay key", "operation", op, "error", err)
			s.refuseReplay(c, op, who, http.StatusServiceUnavailable, codes.SystemError)
			return
		}
		switch res.Outcome {
		case replay.Claimed:
			claims = append(claims, replay.Held{Key: k, Claim: res.Claim})
			if res.Abandoned && replayRoutes[op].notRerun {
				s.abandoned(c, op, who, keep)
				return
			}
			continue
		case replay.Conflict:
			release()
			s.refuseReplay(c, op, who, http.StatusOK, codes.IdempotencyConflict)
			return
		case replay.Busy:
			release()
			s.refuseReplay(c, op, who, http.StatusOK, codes.RequestInProgress)
			return
		}
		// Answered: the first answer, to a caller who proves the key as
		// the first request did.
		if !s.mayReplay(c, op, who, res.Answer) {
			release()
			return
		}
		keep(res.Answer)
		s.replayAnswer(c, res.Answer)
		return
	}

	rec := &answerRecorder{ResponseWriter: c.Writer}
	c.Writer = rec
	finished := false
	stopHolding := s.Replays.Hold(ctx, claims)
	defer func() {
		if !finished { // the handler panicked
			stopHolding()
			release()
		}
	}()
	c.Next()
	stopHolding()
	finished = true
	// A system error (S0001, which /v1/authorise answers with 200) says the
	// outcome is not known yet: keeping it would answer every retry under
	// the same key with it, so the claim is released and a retry asks again.
	if c.GetBool(ContextAuthenticated) && rec.Status() == http.StatusOK && !rec.overflow &&
		c.GetString(ContextResultCode) != codes.SystemError.ID {
		keep(models.ReplayAnswer{
			Status:      rec.Status(),
			ContentType: rec.Header().Get("Content-Type"),
			Body:        rec.buf.Bytes(),
			ResultCode:  c.GetString(ContextResultCode),
			Strong:      c.GetBool(ctxStrong),
		})
	} else {
		release()
	}
	s.Replays.PruneSoon()
}

// abandoned answers a request whose identical predecessor died unanswered
// (notRerun routes) without running it, and keeps that answer under its
// keys: its entries may have been made, so each must be looked up, never
// sent again as they were.
func (s *Server) abandoned(c *gin.Context, op string, who Echo, keep func(models.ReplayAnswer)) {
	s.Logger.Warn("identical request ended without an answer: not run again", "operation", op,
		"merchant_id", who.MerchantID, "account_id", who.AccountID)
	rec := &answerRecorder{ResponseWriter: c.Writer}
	c.Writer = rec
	code := codes.EarlierRequestUnanswered.With("look its entries up with /v1/retrievalRefund and send only the missing ones")
	s.refuseReplay(c, op, who, http.StatusOK, code)
	keep(models.ReplayAnswer{Status: http.StatusOK, ContentType: rec.Header().Get("Content-Type"), Body: rec.buf.Bytes(),
		ResultCode: code.ID})
}

// mayReplay reports whether the stored answer may go to this request. The
// same body carries the same encryption_data, so for the compatible scheme
// it proves what the first request proved; a strong signature sits in the
// header, so when the account takes only strong signatures, or the first
// request proved the key with one, this request must carry a valid strong
// signature of its own (new nonce, fresh timestamp). It answers the
// refusal itself.
func (s *Server) mayReplay(c *gin.Context, op string, who Echo, a models.ReplayAnswer) bool {
	account, err := s.Accounts.Load(c.Request.Context(), who.MerchantID, who.AccountID)
	if errors.Is(err, merchant.ErrUnknownAccount) {
		s.refuseReplay(c, op, who, http.StatusOK, codes.UnknownMerchant)
		return false
	}
	if err != nil {
		s.Logger.Error("load account", "account_id", who.AccountID, "error", err)
		s.refuseReplay(c, op, who, http.StatusServiceUnavailable, codes.SystemError)
		return false
	}
	if ip := c.ClientIP(); replayRoutes[op].queries && !account.AllowsQueryFrom(ip) {
		s.refuseReplay(c, op, who, http.StatusOK, codes.IPNotAllowed.With(ip))
		return false
	}
	if !account.RequiresStrong(replayRoutes[op].movesMoney) && !a.Strong && !hasStrongSignature(c) {
		return true
	}
	if _, ok := s.proveStrong(c, account); !ok {
		s.refuseReplay(c, op, who, http.StatusOK, codes.BadSignature)
		return false
	}
	return true
}

// replayAnswer writes the stored answer.
func (s *Server) replayAnswer(c *gin.Context, a models.ReplayAnswer) {
	c.Set(ContextResultCode, a.ResultCode)
	h := c.Writer.Header()
	h.Set(ReplayedHeader, "true")
	h.Set("Cache-Control", "no-store")
	c.Data(a.Status, a.ContentType, a.Body)
	c.Abort()
}

// refuseReplay answers a refusal of the guard in the operation's own format,
// never signed: the caller has proved nothing at this point.
func (s *Server) refuseReplay(c *gin.Context, op string, who Echo, httpStatus int, code codes.Code) {
	defer c.Abort()
	replayRoutes[op].answers.Render(s, c, Refusal{HTTPStatus: httpStatus, Code: code, Echo: who})
}

// peekAccount reads merchant_id and account_id as the handlers do, before
// anything is proved; none when the body does not decode (the handler then
// refuses it).
func peekAccount(body []byte) Echo {
	var ids struct {
		MerchantID order.Text `json:"merchant_id"`
		AccountID  order.Text `json:"account_id"`
	}
	if decodeBody(body, &ids) != nil {
		return undecoded
	}
	return Echo{MerchantID: strings.TrimSpace(ids.MerchantID.String()), AccountID: strings.TrimSpace(ids.AccountID.String()),
		Lang: undecoded.Lang}
}

// validIdempotencyKey accepts 1 to 255 printable ASCII characters.
func validIdempotencyKey(k string) bool {
	if k == "" || len(k) > maxIdempotencyKey {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] > 0x7e {
			return false
		}
	}
	return true
}
