package api

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/api/flows"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/order"
	"github.com/paygate/paygate/internal/domain/signing"
	"github.com/paygate/paygate/internal/domain/subscription"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

// paysWithToken reports whether a card payment charges a stored card:
// token_id and no card number.
func (r *authoriseRequest) paysWithToken() bool { return r.TokenID != "" && r.Card == "" }

// tokenIDPattern is the shape of the token_ids the gateway hands out.
var tokenIDPattern = regexp.MustCompile(`^tk_[0-9a-f]{40}$`)

// authoriseStoredCard places a payment on a card the account keeps. The
// token is looked up within the account only: another account's token is
// as unknown as a made-up one.
func (s *Server) authoriseStoredCard(m *Merchant, req *authoriseRequest, amount money.Amount, terms *subscription.Terms) {
	ctx := m.c.Request.Context()
	ref, code := s.storedCardRef(ctx, req.MerchantID, req.AccountID, req.TokenID)
	if code != nil {
		m.Refuse(*code)
		return
	}
	in := s.orderInput(m.account, newOrder{details: req.Details, amount: amount, kind: order.KindCard,
		card: ref, subscription: terms})
	res, err := s.placeOrder(ctx, in)
	switch {
	case errors.Is(err, flows.ErrOrderMismatch):
		m.Refuse(codes.DuplicateOrder)
		return
	case errors.Is(err, flows.ErrOrderClosed):
		s.answerFromRecord(m, req, in.RequestFingerprint, ref.Token, false)
		return
	case err != nil:
		s.Logger.Error("authorise stored card order", "order_no", req.OrderNo, "error", err)
		m.Refuse(codes.SystemError)
		return
	}
	s.answerPayment(m, req, res)
}

// storedCardRef finds the account's stored card tokenID, or the code that
// refuses it.
func (s *Server) storedCardRef(ctx context.Context, merchantID, accountID, tokenID string) (workflows.CardRef, *codes.Code) {
	fail := func(c codes.Code) (workflows.CardRef, *codes.Code) { return workflows.CardRef{}, &c }
	if !tokenIDPattern.MatchString(tokenID) {
		return fail(codes.TokenNotFound)
	}
	if s.Records == nil {
		return fail(codes.SystemError)
	}
	sc, err := s.Records.FindStoredCard(ctx, merchantID, accountID, tokenID)
	switch {
	case errors.Is(err, models.ErrStoredCardNotFound):
		return fail(codes.TokenNotFound)
	case errors.Is(err, models.ErrStoredCardDeleted):
		return fail(codes.TokenDeleted)
	case err != nil:
		s.Logger.Error("find stored card", "error", err)
		return fail(codes.SystemError)
	}
	return workflows.CardRef{Token: sc.VaultToken, Masked: sc.CardMasked, Brand: sc.CardBrand,
		Fingerprint: sc.CardFingerprint, Stored: true, TokenID: sc.TokenID}, nil
}

// subscriptionTerms validates the subscription a payment carries, if any.
func (s *Server) subscriptionTerms(req *authoriseRequest, amount money.Amount) (*subscription.Terms, *codes.Code) {
	if req.Subscription == nil {
		return nil, nil
	}
	terms, err := subscription.Parse(*req.Subscription, amount, s.Now(), s.TestIntervals)
	if err != nil {
		var fe *subscription.FieldError
		c := codes.InvalidField.With("subscription")
		if errors.As(err, &fe) {
			c = codes.InvalidField.With("subscription." + fe.Field + " " + fe.Reason)
		}
		return nil, &c
	}
	return &terms, nil
}

// deleteTokenRequest is the body of POST /v1/token/delete. Its signature is
// over merchant_id, account_id and token_id (our recipe: the interface
// shows no token operation).
type deleteTokenRequest struct {
	MerchantID     string `json:"merchant_id"`
	AccountID      string `json:"account_id"`
	TokenID        string `json:"token_id"`
	EncryptionData string `json:"encryption_data"`
}

func (r *deleteTokenRequest) Trim() {
	for _, p := range []*string{&r.MerchantID, &r.AccountID, &r.TokenID, &r.EncryptionData} {
		*p = strings.TrimSpace(*p)
	}
}

func (r *deleteTokenRequest) Echo() Echo {
	return Echo{MerchantID: r.MerchantID, AccountID: r.AccountID}
}

func (r *deleteTokenRequest) Signature() string { return r.EncryptionData }

func (r *deleteTokenRequest) SignedValues() []string {
	return []string{r.MerchantID, r.AccountID, r.TokenID}
}

func (r *deleteTokenRequest) RequiresEncryptionData() {}

// deleteTokenAnswer is the answer of a token deletion.
type deleteTokenAnswer struct {
	MerchantID     string `json:"merchant_id"`
	AccountID      string `json:"account_id"`
	TokenID        string `json:"token_id"`
	ResultInfo     string `json:"result_info"`
	EncryptionData string `json:"encryption_data"`
}

// deleteToken handles POST /v1/token/delete: the account's stored card is
// no longer usable. Deleting it again answers the same.
func (s *Server) deleteToken(c *gin.Context) {
	var req deleteTokenRequest
	m, ok := s.AcceptMerchant(c, JSONAnswers, &req)
	if !ok {
		return
	}
	if req.TokenID == "" {
		m.Refuse(codes.MissingField.With("token_id"))
		return
	}
	if !tokenIDPattern.MatchString(req.TokenID) {
		m.Refuse(codes.TokenNotFound)
		return
	}
	if s.Records == nil {
		m.Refuse(codes.SystemError)
		return
	}
	err := s.Records.DeleteStoredCard(c.Request.Context(), req.MerchantID, req.AccountID, req.TokenID, s.Now().UTC())
	switch {
	case errors.Is(err, models.ErrStoredCardNotFound):
		m.Refuse(codes.TokenNotFound)
		return
	case err != nil:
		s.Logger.Error("delete stored card", "error", err)
		m.Refuse(codes.SystemError)
		return
	}
	a := deleteTokenAnswer{MerchantID: req.MerchantID, AccountID: req.AccountID, TokenID: req.TokenID,
		ResultInfo: codes.OK.String()}
	a.EncryptionData = signing.SignUpper(m.key, a.MerchantID, a.AccountID, a.TokenID, a.ResultInfo)
	c.Set(ContextResultCode, codes.OK.ID)
	c.JSON(http.StatusOK, a)
}

// MovesMoney: a charge of a stored card moves money on a token alone, with
// no card data to prove the caller holds the card.
func (r *authoriseRequest) MovesMoney() bool { return r.paysWithToken() }
