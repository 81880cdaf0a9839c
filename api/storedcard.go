package api

import (
	"context"
	"errors"
	"regexp"

	"github.com/paygate/paygate/api/flows"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/order"
	"github.com/paygate/paygate/internal/domain/subscription"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

// paysWithToken reports whether a card payment charges a stored card:
// token_id and no card number.
func (r *authoriseRequest) paysWithToken() bool { return r.TokenID != "" && r.Card == "" }

// tokenIDPattern is the shape of the token_ids the gateway hands out.
var tokenIDPattern = regexp.MustCompile(`^tk_[0-9a-f]{40}$`)

// IsTokenID reports whether s has the shape of a token_id the gateway
// hands out; any other is no stored card of any account.
func IsTokenID(s string) bool { return tokenIDPattern.MatchString(s) }

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

// MovesMoney: a charge of a stored card moves money on a token alone, with
// no card data to prove the caller holds the card.
func (r *authoriseRequest) MovesMoney() bool { return r.paysWithToken() }
