package payments

import (
	"context"
	"errors"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/api/flows"
	"github.com/paygate/paygate/internal/domain/card"
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

// authoriseStoredCard places a payment on a card the account keeps. The
// token is looked up within the account only: another account's token is
// as unknown as a made-up one.
func (h *Handler) authoriseStoredCard(m *api.Merchant, req *authoriseRequest, amount money.Amount, terms *subscription.Terms) {
	c := m.GinContext()
	ctx := c.Request.Context()
	ref, code := h.storedCardRef(ctx, req.MerchantID, req.AccountID, req.TokenID)
	if code != nil {
		m.Refuse(*code)
		return
	}
	in := h.orderInput(m.Account(), newOrder{details: req.Details, amount: amount, kind: order.KindCard,
		card: ref, subscription: terms})
	res, err := h.placeOrder(ctx, in)
	switch {
	case errors.Is(err, flows.ErrOrderMismatch):
		m.Refuse(codes.DuplicateOrder)
		return
	case errors.Is(err, flows.ErrOrderClosed):
		h.answerFromRecord(m, req, in.RequestFingerprint, ref.Token, false)
		return
	case err != nil:
		h.Gate.Logger.Error("authorise stored card order", "order_no", req.OrderNo, "error", err)
		m.Refuse(codes.SystemError)
		return
	}
	h.answerPayment(m, req, res)
}

// storedCardRef finds the account's stored card tokenID, or the code that
// refuses it.
func (h *Handler) storedCardRef(ctx context.Context, merchantID, accountID, tokenID string) (workflows.CardRef, *codes.Code) {
	fail := func(c codes.Code) (workflows.CardRef, *codes.Code) { return workflows.CardRef{}, &c }
	if !card.IsTokenID(tokenID) {
		return fail(codes.TokenNotFound)
	}
	if h.Gate.Records == nil {
		return fail(codes.SystemError)
	}
	sc, err := h.Gate.Records.FindStoredCard(ctx, merchantID, accountID, tokenID)
	switch {
	case errors.Is(err, models.ErrStoredCardNotFound):
		return fail(codes.TokenNotFound)
	case errors.Is(err, models.ErrStoredCardDeleted):
		return fail(codes.TokenDeleted)
	case err != nil:
		h.Gate.Logger.Error("find stored card", "error", err)
		return fail(codes.SystemError)
	}
	return workflows.CardRef{Token: sc.VaultToken, Masked: sc.CardMasked, Brand: sc.CardBrand,
		Fingerprint: sc.CardFingerprint, Stored: true, TokenID: sc.TokenID}, nil
}

// subscriptionTerms validates the subscription a payment carries, if any.
func (h *Handler) subscriptionTerms(sub *order.Subscription, amount money.Amount) (*subscription.Terms, *codes.Code) {
	if sub == nil {
		return nil, nil
	}
	terms, err := subscription.Parse(*sub, amount, h.Gate.Now(), h.TestIntervals)
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
