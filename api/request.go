package api

import (
	"cmp"
	"errors"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/order"
	"github.com/paygate/paygate/internal/domain/testmode"
)

// Every merchant operation (/v1/authorise, the merchant's /v1/checkout, the
// four batches and the two queries) starts with one step, AcceptMerchant:
// read and decode the body (bad data is refused at the door), trim it,
// check the ids, load the account and check that the request proved the
// account's key (auth.go). Its refusals are answered in the operation's own
// format (answers.go) and never signed: nothing is signed for a caller who
// has not proved the key (docs/design.md §3).

// MerchantRequest is a merchant operation's request as AcceptMerchant reads
// it; the handler passes a pointer to its own request type.
type MerchantRequest interface {
	// Trim removes surrounding white space from the fields that are checked
	// and signed, so that " 12.34" and "12.34" are one request.
	Trim()
	// Echo is what a refusal repeats of the request.
	Echo() Echo
	// Signature is the compatible Signature the request carries.
	Signature() string
	// SignedValues are the values of the request's compatible recipe
	// (docs/design.md §3), in order.
	SignedValues() []string
}

// EncryptionDataRequired is implemented by requests whose required fields
// include encryption_data (/v1/authorise): one that carries no signature at
// all is refused as missing that field, not as a wrong signature.
type EncryptionDataRequired interface{ RequiresEncryptionData() }

// MoneyMover is implemented by requests that may move money (batches,
// payouts, a charge of a stored card): on a strong-for-money account they
// must carry a strong signature, since a compatible one seen once can be
// sent again with other amounts.
type MoneyMover interface{ MovesMoney() bool }

// The requests that require encryption_data and those that may move money
// say so by these methods; a request type that loses one (a rename) would
// silently be checked less, so each is asserted beside its type.

// movesMoney reports whether req may move money.
func movesMoney(req MerchantRequest) bool {
	m, ok := req.(MoneyMover)
	return ok && m.MovesMoney()
}

// TrimTexts removes surrounding white space from each text field.
func TrimTexts(fields ...*order.Text) {
	for _, p := range fields {
		*p = order.Text(strings.TrimSpace(p.String()))
	}
}

// Merchant is a merchant request that proved its account's key: what
// its handler works with, and how it answers.
type Merchant struct {
	s       *Server
	c       *gin.Context
	answers AnswerFormat
	req     MerchantRequest
	body    []byte
	account *merchant.Account
	// key is the key the request proved; it signs the answers (during a
	// rotation's grace period it may be the previous key).
	key string
}

// Account is the account whose key the request proved.
func (m *Merchant) Account() *merchant.Account { return m.account }

// Key is the key the request proved, which signs its answers.
func (m *Merchant) Key() string { return m.key }

// GinContext is the request's context, for the handler's answer.
func (m *Merchant) GinContext() *gin.Context { return m.c }

// Body is the request's body as it came (the hosted checkout's forwarding
// page repeats its fields).
func (m *Merchant) Body() []byte { return m.body }

// AcceptMerchant is the authenticated-request step. It decodes the body
// into req and returns the proven call, or answers the refusal in answers'
// format and returns false.
func (s *Server) AcceptMerchant(c *gin.Context, answers AnswerFormat, req MerchantRequest) (*Merchant, bool) {
	refuse := func(e Echo, err error) (*Merchant, bool) {
		answers.answer(s, c, e, "", err)
		return nil, false
	}
	body, err := readBody(c.Request.Body)
	if err != nil {
		return refuse(undecoded, err)
	}
	if code := decodeBody(body, req); code != nil {
		e := undecoded
		if answers.echoesDecodeFailure {
			e = req.Echo()
		}
		return refuse(e, refused(*code))
	}
	req.Trim()
	e := req.Echo()
	if err := missingIDs(e.MerchantID, e.AccountID); err != nil {
		return refuse(e, err)
	}
	account, err := s.Accounts.Load(c.Request.Context(), e.MerchantID, e.AccountID)
	if err != nil {
		if !errors.Is(err, merchant.ErrUnknownAccount) {
			s.Logger.Error("load account", "account_id", e.AccountID, "error", err)
		}
		return refuse(e, err)
	}
	sig := req.Signature()
	if _, required := req.(EncryptionDataRequired); required && sig == "" && !hasStrongSignature(c) {
		return refuse(e, refused(codes.MissingField.With("encryption_data")))
	}
	moves := movesMoney(req)
	key, ok := s.authenticate(c, account, account.RequiresStrong(moves), sig, req.SignedValues()...)
	if !ok {
		return refuse(e, refused(codes.BadSignature))
	}
	if moves && !c.GetBool(ctxStrong) {
		s.noteSignatureUse(c, account.ID, sig, body)
	}
	// Whether the answer is a test account's: told once the caller has
	// proved the key, in a header, as the interface has no field for it.
	c.Header(HeaderMode, cmp.Or(account.Mode, testmode.Live))
	return &Merchant{s: s, c: c, answers: answers, req: req, body: body, account: account, key: key}, true
}

// HeaderMode is the response header that says whether the account that
// made the request is a test or a live account.
const HeaderMode = "Paygate-Mode"

// Refuse answers the call with code: HTTP 200 (a system error: the format's
// status), signed with the proven key where the format signs.
func (m *Merchant) Refuse(code codes.Code) {
	m.answers.answer(m.s, m.c, m.req.Echo(), m.key, refused(code))
}

// FromQueryAddress reports whether the caller's address may query the
// account's orders, and refuses the call when it may not. The address is
// the TCP peer's: forwarding headers cannot get around the list.
func (m *Merchant) FromQueryAddress() bool {
	ip := m.c.ClientIP()
	if m.account.AllowsQueryFrom(ip) {
		return true
	}
	m.Refuse(codes.IPNotAllowed.With(ip))
	return false
}
