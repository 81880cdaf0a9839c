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
// four batches and the two queries) starts with one step, acceptMerchant:
// read and decode the body (bad data is refused at the door), trim it,
// check the ids, load the account and check that the request proved the
// account's key (auth.go). Its refusals are answered in the operation's own
// format (answers.go) and never signed: nothing is signed for a caller who
// has not proved the key (docs/design.md §3).

// merchantRequest is a merchant operation's request as acceptMerchant reads
// it; the handler passes a pointer to its own request type.
type merchantRequest interface {
	// trim removes surrounding white space from the fields that are checked
	// and signed, so that " 12.34" and "12.34" are one request.
	trim()
	// echo is what a refusal repeats of the request.
	echo() echo
	// signature is the compatible signature the request carries.
	signature() string
	// signedValues are the values of the request's compatible recipe
	// (docs/design.md §3), in order.
	signedValues() []string
}

// encryptionDataRequired is implemented by requests whose required fields
// include encryption_data (/v1/authorise): one that carries no signature at
// all is refused as missing that field, not as a wrong signature.
type encryptionDataRequired interface{ requiresEncryptionData() }

// moneyMover is implemented by requests that may move money (batches,
// payouts, a charge of a stored card): on a strong-for-money account they
// must carry a strong signature, since a compatible one seen once can be
// sent again with other amounts.
type moneyMover interface{ movesMoney() bool }

// movesMoney reports whether req may move money.
func movesMoney(req merchantRequest) bool {
	m, ok := req.(moneyMover)
	return ok && m.movesMoney()
}

// trimTexts removes surrounding white space from each text field.
func trimTexts(fields ...*order.Text) {
	for _, p := range fields {
		*p = order.Text(strings.TrimSpace(p.String()))
	}
}

// merchantCall is a merchant request that proved its account's key: what
// its handler works with, and how it answers.
type merchantCall struct {
	s       *Server
	c       *gin.Context
	answers answerFormat
	req     merchantRequest
	body    []byte
	account *merchant.Account
	// key is the key the request proved; it signs the answers (during a
	// rotation's grace period it may be the previous key).
	key string
}

// acceptMerchant is the authenticated-request step. It decodes the body
// into req and returns the proven call, or answers the refusal in answers'
// format and returns false.
func (s *Server) acceptMerchant(c *gin.Context, answers answerFormat, req merchantRequest) (*merchantCall, bool) {
	refuse := func(e echo, err error) (*merchantCall, bool) {
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
			e = req.echo()
		}
		return refuse(e, refused(*code))
	}
	req.trim()
	e := req.echo()
	if err := missingIDs(e.merchantID, e.accountID); err != nil {
		return refuse(e, err)
	}
	account, err := s.Accounts.Load(c.Request.Context(), e.merchantID, e.accountID)
	if err != nil {
		if !errors.Is(err, merchant.ErrUnknownAccount) {
			s.Logger.Error("load account", "account_id", e.accountID, "error", err)
		}
		return refuse(e, err)
	}
	sig := req.signature()
	if _, required := req.(encryptionDataRequired); required && sig == "" && !hasStrongSignature(c) {
		return refuse(e, refused(codes.MissingField.With("encryption_data")))
	}
	moves := movesMoney(req)
	key, ok := s.authenticate(c, account, account.RequiresStrong(moves), sig, req.signedValues()...)
	if !ok {
		return refuse(e, refused(codes.BadSignature))
	}
	if moves && !c.GetBool(ctxStrong) {
		s.noteSignatureUse(c, account.ID, sig, body)
	}
	// Whether the answer is a test account's: told once the caller has
	// proved the key, in a header, as the interface has no field for it.
	c.Header(HeaderMode, cmp.Or(account.Mode, testmode.Live))
	return &merchantCall{s: s, c: c, answers: answers, req: req, body: body, account: account, key: key}, true
}

// HeaderMode is the response header that says whether the account that
// made the request is a test or a live account.
const HeaderMode = "Paygate-Mode"

// refuse answers the call with code: HTTP 200 (a system error: the format's
// status), signed with the proven key where the format signs.
func (m *merchantCall) refuse(code codes.Code) {
	m.answers.answer(m.s, m.c, m.req.echo(), m.key, refused(code))
}

// fromQueryAddress reports whether the caller's address may query the
// account's orders, and refuses the call when it may not. The address is
// the TCP peer's: forwarding headers cannot get around the list.
func (m *merchantCall) fromQueryAddress() bool {
	ip := m.c.ClientIP()
	if m.account.AllowsQueryFrom(ip) {
		return true
	}
	m.refuse(codes.IPNotAllowed.With(ip))
	return false
}
