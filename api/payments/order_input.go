package payments

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"

	"github.com/paygate/paygate/api/flows"
	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/order"
	"github.com/paygate/paygate/internal/domain/routing"
	"github.com/paygate/paygate/internal/domain/subscription"
	"github.com/paygate/paygate/workflows"
)

// newOrder is an order a proven request places: its details, its checked
// amount and how the shopper pays.
type newOrder struct {
	details order.Details
	amount  money.Amount
	kind    order.Kind
	// card is the card of a direct payment, already in the vault.
	card workflows.CardRef
	// apm is the method's data of an alternative-payment-method order.
	apm *workflows.APMOrder
	// subscription is the validated subscription a first payment starts.
	subscription *subscription.Terms
	// options are a direct card payment's external 3-D Secure result and
	// installments.
	options cardOptions
}

// orderInput is the workflow input of a new order of account. Direct card,
// hosted and APM orders are all built here, so they cannot drift apart.
func (h *Handler) orderInput(account *merchant.Account, o newOrder) workflows.OrderInput {
	in := workflows.OrderInput{
		TransactionID:  h.Gate.IDs.Next(),
		MerchantID:     o.details.MerchantID,
		AccountID:      o.details.AccountID,
		OrderNo:        o.details.OrderNo,
		Amount:         o.amount.Minor,
		Currency:       o.amount.Currency,
		CaptureMode:    account.CaptureMode,
		Card:           o.card,
		Details:        o.details,
		Windows:        windowsOf(account),
		NotifySchedule: h.Gate.NotifySchedule.WithDefaults(),
		Kind:           o.kind,
		// 3-D Secure is for cards, sent by the merchant or typed on our
		// page; an APM's provider authenticates the shopper itself.
		ThreeDS:   o.kind != order.KindAPM && strings.EqualFold(o.details.Open3D, "do3DS"),
		APM:       o.apm,
		PublicURL: h.Gate.PublicURL,
		// The order keeps the account's connector of this moment.
		Connector:    account.Connector,
		Subscription: o.subscription,
		Shape:        workflows.CurrentOrderShape,
		Keys:         workflows.CurrentOrderKeys,
		// The merchant's own 3-D Secure result replaces ours.
		ExternalThreeDS: o.options.threeDS,
		Installments:    o.options.installments,
	}
	// The risk check reads the account's settings of this moment from the
	// order, not from the database again, unless they are too long to keep
	// in the order's history.
	if rs := account.RiskSettings(o.amount.Currency); rs.Carried() {
		in.Risk = &rs
	}
	if in.ExternalThreeDS != nil {
		in.ThreeDS = false
	}
	if !account.Routing.Empty() {
		plan := account.Routing.Plan(paymentOf(in, o), account.Connector)
		if len(plan.Connectors) > 0 {
			in.Connector, in.Route = plan.Connectors[0], &plan
		}
	}
	in.RequestFingerprint = requestFingerprint(in.Details, o.card.Token)
	return in
}

// paymentOf is what the routing rules see of an order. A hosted order's
// card is not known yet when it is routed, so rules on brands and BINs
// pass it by.
func paymentOf(in workflows.OrderInput, o newOrder) routing.Payment {
	p := routing.Payment{Key: in.TransactionID, Amount: in.Amount, Currency: in.Currency, Method: routing.MethodCard,
		Brand: o.card.Brand, BillingCountry: o.details.BillingCountry}
	if o.apm != nil {
		p.Method = o.apm.Method
	}
	if bin, _, ok := strings.Cut(o.card.Masked, "*"); ok {
		p.BIN = bin
	}
	return p
}

// placeOrder starts the order's workflow, or finds it, and waits for its
// first result. A repeat of a request whose order has closed, however the
// workflow tells it, is flows.ErrOrderClosed: its answer is in the record.
func (h *Handler) placeOrder(ctx context.Context, in workflows.OrderInput) (workflows.PaymentResult, error) {
	res, err := h.Orders.Authorise(ctx, in)
	if err == nil && res.ExistingTransactionID != "" {
		return res, flows.ErrOrderClosed
	}
	return res, err
}

// windowsOf reads an account's order deadlines.
func windowsOf(account *merchant.Account) workflows.Windows {
	return workflows.Windows{
		Review:        time.Duration(account.ReviewWindowSeconds) * time.Second,
		Authorisation: time.Duration(account.AuthorisationWindowSeconds) * time.Second,
		Refund:        time.Duration(account.RefundWindowSeconds) * time.Second,
	}.WithDefaults()
}

// requestFingerprint identifies a request's content. The card token already
// stands for the card data, scoped to the order.
func requestFingerprint(d order.Details, token string) string {
	b, _ := json.Marshal(d)
	sum := sha256.Sum256(append(append(b, '|'), token...))
	return hex.EncodeToString(sum[:])
}
