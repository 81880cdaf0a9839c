// Package payouts is the payout capability of the merchant API: POST
// /v1/payout and /v1/payout/query.
package payouts

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/internal/adapters/replay"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/payout"
	"github.com/paygate/paygate/internal/domain/signing"
	"github.com/paygate/paygate/internal/domain/testmode"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

// POST /v1/payout: the authenticated-request step (payout recipe of
// docs/design.md §3), payout.Validate, the account's currency, then one payout workflow
// per merchant and request_id (workflow id payout/{merchant_id}/{request_id}).
// The handler never writes the payout: the workflow records it, and the
// handler reads the record, waiting up to Wait for a final status.
// A refusal is never signed; a payout's answer is signed with the payout
// recipe over its validated values, and only for a caller who proved the key.

// Wait is how long POST /v1/payout waits for a final status before it
// answers the payout's current one; the rest comes by notification and query.
const Wait = 5 * time.Second

// recordWait is how long the handler waits for a payout workflow it
// started or found to record the payout.
const recordWait = 10 * time.Second

// Starter starts payout workflows (flows.TemporalPayouts).
type Starter interface {
	// Start starts the payout's first run, or finds the run already under
	// its workflow id; it never starts a second.
	Start(ctx context.Context, in workflows.PayoutInput) error
}

// payoutRequest is the body of POST /v1/payout.
type payoutRequest struct {
	payout.Request
}

func (r *payoutRequest) Trim() {
	for _, p := range []*string{&r.MerchantID, &r.AccountID, &r.EncryptionData} {
		*p = strings.TrimSpace(*p)
	}
}

func (r *payoutRequest) Echo() api.Echo {
	return api.Echo{MerchantID: r.MerchantID, AccountID: r.AccountID, Currency: r.PaymentCurrency}
}

func (r *payoutRequest) Signature() string { return r.EncryptionData }

func (r *payoutRequest) signedValues() []string { return r.SignedValues() }

func (r *payoutRequest) RequiresEncryptionData() {}

// payoutQueryRequest is the body of POST /v1/payout/query. Its signature is
// over merchant_id, account_id and request_id (our recipe: the interface
// shows no payout query).
type payoutQueryRequest struct {
	MerchantID     string `json:"merchant_id"`
	AccountID      string `json:"account_id"`
	RequestID      string `json:"request_id"`
	EncryptionData string `json:"encryption_data"`
}

func (r *payoutQueryRequest) Trim() {
	for _, p := range []*string{&r.MerchantID, &r.AccountID, &r.RequestID, &r.EncryptionData} {
		*p = strings.TrimSpace(*p)
	}
}

func (r *payoutQueryRequest) Echo() api.Echo {
	return api.Echo{MerchantID: r.MerchantID, AccountID: r.AccountID}
}

func (r *payoutQueryRequest) Signature() string { return r.EncryptionData }

func (r *payoutQueryRequest) SignedValues() []string {
	return []string{r.MerchantID, r.AccountID, r.RequestID}
}

func (r *payoutQueryRequest) RequiresEncryptionData() {}

// The payout request requires encryption_data and moves money; the query
// requires it too.
var (
	_ api.EncryptionDataRequired = (*payoutRequest)(nil)
	_ api.EncryptionDataRequired = (*payoutQueryRequest)(nil)
	_ api.MoneyMover             = (*payoutRequest)(nil)
)

// Handler serves the payout routes.
type Handler struct {
	// Gate is the merchant API: its authenticated-request step, and the
	// record, ids, clock, logger and notification schedule it holds.
	Gate *api.Server
	// Starter starts payouts; nil refuses them as not configured.
	Starter Starter
	// Rail wakes a payout on its rail's callback, which RailSecret signs;
	// without either the callback route is refused.
	Rail       RailWaker
	RailSecret string
	// RecordWait is how long a request waits for the payout's record
	// (zero: recordWait).
	RecordWait time.Duration
}

// New is the payout capability of gate, starting payouts with starter.
func New(gate *api.Server, starter Starter) *Handler { return &Handler{Gate: gate, Starter: starter} }

// Routes puts the payout routes on the merchant API's /v1 group.
func (h *Handler) Routes(v1 gin.IRoutes) {
	v1.POST("/payout", h.payout)
	v1.POST("/payout/query", h.payoutQuery)
	v1.POST("/payout/rail-callback", h.railCallback)
}

// payout handles POST /v1/payout.
func (h *Handler) payout(c *gin.Context) {
	var req payoutRequest
	m, ok := h.Gate.AcceptMerchant(c, api.JSONAnswers, &req)
	if !ok {
		return
	}
	ctx := c.Request.Context()
	now := h.Gate.Now()
	in, err := payout.Validate(req.Request, now)
	if !h.pinRequestID(m, &req, in, err == nil) {
		return
	}
	var fe *payout.FieldError
	if errors.As(err, &fe) {
		m.Refuse(fe.Result())
		return
	}
	if err != nil {
		m.Refuse(codes.InvalidField.With(err.Error()))
		return
	}
	if !m.Account().AllowsCurrency(in.SourceCurrency) {
		m.Refuse(codes.UnsupportedCurrency.With(in.SourceCurrency))
		return
	}
	if h.Starter == nil || h.Gate.Records == nil {
		m.Refuse(codes.SystemError.With("payouts are not configured"))
		return
	}
	id := workflows.PayoutWorkflowID(req.MerchantID, in.RequestID)
	p, err := h.Gate.Records.FindPayout(ctx, id)
	if errors.Is(err, models.ErrPayoutNotFound) {
		short, serr := payout.NewShortReference(now, rand.Reader)
		if serr != nil {
			h.Gate.Logger.Error("payout short reference", "error", serr)
			m.Refuse(codes.SystemError)
			return
		}
		start := workflows.PayoutInput{
			ID: id, MerchantID: req.MerchantID, AccountID: req.AccountID, RequestID: in.RequestID,
			TransactionID: h.Gate.IDs.Next(), ShortReferenceID: short, Instruction: in, NotifyURL: in.Request.NotifyURL,
			Mode: cmp.Or(m.Account().Mode, testmode.Live), Run: 1, NotifySchedule: h.Gate.NotifySchedule,
			Shape: workflows.CurrentPayoutShape,
		}
		if err := h.Starter.Start(ctx, start); err != nil {
			h.Gate.Logger.Error("start payout", "payout", id, "error", err)
			m.Refuse(codes.SystemError)
			return
		}
		p, err = h.awaitPayout(ctx, id, cmp.Or(h.RecordWait, recordWait), func(*models.Payout) bool { return true })
		if errors.Is(err, context.DeadlineExceeded) {
			// The payout's workflow runs and will record it: a system error
			// here could make the merchant send the payout again under a
			// new request_id, and pay twice. The same request, sent again
			// or queried, finds it.
			h.Gate.Logger.Warn("payout not recorded in time", "payout", id, "wait", cmp.Or(h.RecordWait, recordWait))
			m.Refuse(codes.RequestInProgress.With("the payout is not recorded yet: query it or send the same request_id again"))
			return
		}
	}
	if err != nil {
		h.Gate.Logger.Error("load payout", "payout", id, "error", err)
		m.Refuse(codes.SystemError)
		return
	}
	// Two requests under one request_id may race to start the workflow;
	// the record holds the first one's content, which is what both are
	// compared with.
	if p.AccountID != req.AccountID || !sameRequest(p.Request, in.Request) {
		m.Refuse(codes.PayoutMismatch.With(in.RequestID))
		return
	}
	if final, err := h.awaitPayout(ctx, id, Wait, payoutFinal); err == nil {
		p = final
	} else if !errors.Is(err, context.DeadlineExceeded) {
		h.Gate.Logger.Warn("wait for payout", "payout", id, "error", err)
	}
	h.renderPayout(c, p, m.Key())
}

// requestIDPin is how long a request_id signed with encryption_data stays
// bound to its first content: as long as such a signature may be seen
// again, which is for ever in practice.
const requestIDPin = 10 * 365 * 24 * time.Hour

// pinRequestID binds a payout's request_id to its content the first time a
// request carrying encryption_data proves the key for it, whether or not the
// payout is then made. That signature covers the request_id and the amount
// but not the beneficiary, so a request refused before it was recorded (a
// bad IBAN, say) could be sent again by whoever saw it, with their own bank
// details, and be paid. The same request_id with other content is refused
// I0022, as for a recorded payout. A valid request is pinned in its
// canonical form (in), as a recorded payout is compared, so a retry that
// differs only in form still gets the first payout's answer; one refused by
// validation as sent. A request without encryption_data (strongly signed;
// the header covers the body) is not pinned. It answers the refusal itself.
func (h *Handler) pinRequestID(m *api.Merchant, req *payoutRequest, in payout.Instruction, valid bool) bool {
	c := m.GinContext()
	rid, err := payout.ParseRequestID(req.RequestID)
	if strings.TrimSpace(req.EncryptionData) == "" || h.Gate.Replays == nil || err != nil {
		// A request_id that is no UUID is refused by validation.
		return true
	}
	content, state := req.Request, "refused:"
	if valid {
		content, state = in.Request, "valid:"
	}
	content.EncryptionData = ""
	raw, err := json.Marshal(content)
	if err != nil {
		m.Refuse(codes.SystemError)
		return false
	}
	k := models.ReplayKey{Scope: req.MerchantID, Operation: "/v1/payout", Key: "pin:request_id:" + rid}
	outcome, err := h.Gate.Replays.Pin(c.Request.Context(), k, h.Gate.PinFingerprint(append([]byte(state), raw...)), requestIDPin)
	switch {
	case err != nil:
		h.Gate.Logger.Error("pin payout request_id", "error", err)
		m.Refuse(codes.SystemError)
		return false
	case outcome == replay.Conflict:
		h.Gate.Logger.Warn("payout request_id sent again with other content under encryption_data", "merchant_id", req.MerchantID)
		m.Refuse(codes.PayoutMismatch.With(rid))
		return false
	case outcome == replay.Busy:
		m.Refuse(codes.RequestInProgress)
		return false
	}
	return true
}

// payoutQuery handles POST /v1/payout/query: the payout's current answer.
func (h *Handler) payoutQuery(c *gin.Context) {
	var req payoutQueryRequest
	m, ok := h.Gate.AcceptMerchant(c, api.JSONAnswers, &req)
	if !ok {
		return
	}
	rid, err := payout.ParseRequestID(req.RequestID)
	if err != nil {
		m.Refuse(codes.InvalidField.With("request_id is not a UUID"))
		return
	}
	if h.Gate.Records == nil {
		m.Refuse(codes.SystemError)
		return
	}
	p, err := h.Gate.Records.FindPayout(c.Request.Context(), workflows.PayoutWorkflowID(req.MerchantID, rid))
	switch {
	case errors.Is(err, models.ErrPayoutNotFound):
		m.Refuse(codes.PayoutNotFound.With(rid))
		return
	case err != nil:
		h.Gate.Logger.Error("load payout", "request_id", rid, "error", err)
		m.Refuse(codes.SystemError)
		return
	case p.AccountID != req.AccountID:
		// Another account of the merchant made it: not this caller's.
		m.Refuse(codes.PayoutNotFound.With(rid))
		return
	}
	h.renderPayout(c, p, m.Key())
}

func payoutFinal(p *models.Payout) bool { return payout.Status(p.Status).Final() }

// awaitPayout reads the payout until done accepts it or wait has passed
// (context.DeadlineExceeded, with the last payout read).
func (h *Handler) awaitPayout(ctx context.Context, id string, wait time.Duration, done func(*models.Payout) bool) (*models.Payout, error) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	tick := 20 * time.Millisecond
	for {
		p, err := h.Gate.Records.FindPayout(ctx, id)
		if err == nil && done(p) {
			return p, nil
		}
		if err != nil && !errors.Is(err, models.ErrPayoutNotFound) {
			if ctx.Err() != nil {
				return nil, context.DeadlineExceeded
			}
			return nil, err
		}
		select {
		case <-ctx.Done():
			if p != nil {
				return p, context.DeadlineExceeded
			}
			return nil, context.DeadlineExceeded
		case <-time.After(tick):
		}
		tick = min(2*tick, 250*time.Millisecond)
	}
}

// sameRequest reports whether the stored instruction's canonical request is
// the same payout as req (the signature aside).
func sameRequest(stored []byte, req payout.Request) bool {
	var in payout.Instruction
	if err := json.Unmarshal(stored, &in); err != nil {
		return false
	}
	a, b := in.Request, req
	a.EncryptionData, b.EncryptionData = "", ""
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}

// renderPayout answers a payout: every request field echoed from the
// canonical request (bank_details with local_clearing_system and without
// bank_code), the amounts, timestamps, references and status, and
// encryption_data signed with key over the payout recipe ("" leaves it
// unsigned).
func (h *Handler) renderPayout(c *gin.Context, p *models.Payout, key string) {
	body, err := PayoutAnswer(p)
	if err != nil {
		h.Gate.Logger.Error("render payout", "payout", p.ID, "error", err)
		c.Set(api.ContextResultCode, codes.SystemError.ID)
		c.JSON(http.StatusServiceUnavailable, api.JSONRefusal{MerchantID: p.MerchantID, AccountID: p.AccountID,
			ResultInfo: codes.SystemError.String()})
		return
	}
	if key != "" {
		// The signature covers payment_amount as the answer carries it (the
		// request's text, validated), as the payout notification's does, so
		// a merchant verifies the answer with the values in front of them.
		amount, ok := body["payment_amount"].(string)
		if !ok {
			amount = money.FromMinor(p.PaymentAmount, p.PaymentCurrency).ExtendedString()
		}
		body["encryption_data"] = signing.SignUpper(key, p.MerchantID, p.AccountID, p.RequestID, p.PaymentCurrency, amount)
	}
	c.Set(api.ContextResultCode, codes.OK.ID)
	c.JSON(http.StatusOK, body)
}

// PayoutAnswer is the payout's answer without its signature: the fields of
// the interface's payout response.
func PayoutAnswer(p *models.Payout) (map[string]any, error) {
	var in payout.Instruction
	if err := json.Unmarshal(p.Request, &in); err != nil {
		return nil, err
	}
	req := in.Request
	req.EncryptionData = ""
	raw, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	body := map[string]any{}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&body); err != nil {
		return nil, err
	}
	if ben, ok := body["beneficiary"].(map[string]any); ok {
		bank, _ := ben["bank_details"].(map[string]any)
		if bank == nil {
			bank = map[string]any{}
		}
		delete(bank, "bank_code")
		bank["local_clearing_system"] = string(in.Clearing())
		ben["bank_details"] = bank
	}
	delete(body, "encryption_data")
	number := func(minor int64, cur string) json.Number {
		return json.Number(money.FromMinor(minor, cur).ExtendedString())
	}
	body["merchant_id"], body["account_id"], body["request_id"] = p.MerchantID, p.AccountID, p.RequestID
	body["amount_beneficiary_receives"] = number(p.BeneficiaryReceivesAmount, p.PaymentCurrency)
	body["amount_payer_pays"] = number(p.PayerPaysAmount, p.SourceCurrency)
	body["fee_amount"] = number(p.FeeAmount, p.SourceCurrency)
	body["fee_currency"] = p.SourceCurrency
	body["created_at"] = payout.FormatTimestamp(p.CreatedAt)
	body["last_updated_at"] = payout.FormatTimestamp(p.UpdatedAt)
	body["short_reference_id"] = p.ShortReferenceID
	body["transaction_id"] = p.TransactionID
	// payer_id is the deposit account that pays: the payer's identity at
	// the gateway.
	body["payer_id"] = p.AccountID
	body["status"] = p.Status
	body["failure_type"] = payout.FailureType(p.FailureType).Shown()
	body["failure_reason"] = p.FailureReason
	body["encryption_data"] = ""
	return body, nil
}

// MovesMoney: a payout pays money out.
func (r *payoutRequest) MovesMoney() bool { return true }
