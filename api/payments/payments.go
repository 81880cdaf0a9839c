// Package payments is the payment capability of the merchant API and the
// shopper's side of it: POST /v1/authorise (a card, a stored card or an
// APM), the hosted checkout (/v1/checkout, its payment page's /pay and
// /cancel), and the 3-D Secure and APM callbacks that wake an order.
package payments

import (
	"context"

	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/internal/adapters/vault"
	"github.com/paygate/paygate/workflows"
)

// Orders runs order workflows.
type Orders interface {
	Authorise(ctx context.Context, in workflows.OrderInput) (workflows.PaymentResult, error)
}

// CardVault tokenises cards at the edge.
type CardVault interface {
	Tokenize(ctx context.Context, scope string, c vault.Card) (string, bool, error)
	Fingerprint(number string) string
	Delete(ctx context.Context, token string) error
}

// Handler serves the payment routes.
type Handler struct {
	// Gate is the merchant API: its authenticated-request step, its answer
	// formats and pages, and the record, ids, clock, logger, notification
	// schedule and session key it holds.
	Gate *api.Server
	// Orders places orders; Shopper runs the shopper's side of them.
	Orders  Orders
	Shopper ShopperFlows
	// Disputes wakes disputes' workflows (flows.TemporalDisputes); nil
	// refuses dispute callbacks.
	Disputes DisputeFlows
	// Vault seals the cards payments carry.
	Vault CardVault
	// Callbacks check what the connectors' 3-D Secure ACS and APM providers
	// send (callbacks.go); nil refuses every callback.
	Callbacks CallbackReaders
	// TestIntervals admits the subscription intervals "second" and
	// "minute", for the dev setup and the tests.
	TestIntervals bool
	// ForbidLiveSimulators refuses a live account's orders on a simulated
	// connector (PAYGATE_LIVE_SIMULATORS=forbid).
	ForbidLiveSimulators bool
	// TestConnector says which connectors move no real money (a test
	// account's only ones); nil is testmode.Simulated, the simulators.
	TestConnector func(name string) bool
}

// Routes puts the payment and shopper routes on the merchant API's /v1 group.
func (h *Handler) Routes(v1 gin.IRoutes) {
	v1.POST("/authorise", h.authorise)
	v1.POST("/checkout", h.checkoutPage)
	v1.POST("/checkout/pay", h.checkoutPay)
	v1.POST("/checkout/cancel", h.checkoutCancel)
	v1.POST("/checkout/apm", h.checkoutAPM)
	v1.GET("/checkout/apm/return", h.checkoutAPMReturn)
	v1.POST("/3ds/callback", h.threeDSCallback)
	// Stripe sends the shopper back from its 3-D Secure page by GET.
	v1.GET("/3ds/callback", h.threeDSCallback)
	v1.POST("/apm/callback", h.apmCallback)
	v1.POST("/disputes/callback", h.disputeCallback)
	// A connector's provider events (Stripe's webhooks).
	v1.POST("/webhooks/:connector", h.webhook)
}
