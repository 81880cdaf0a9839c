package payments

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/models"
)

// CallbackReader reads the callbacks one connector sends: a 3-D Secure
// result its ACS has the shopper's browser post, or its APM provider's
// server-to-server callback. Each connector parses its own fields and
// checks its own signature; a callback not its own is
// connector.ErrCallbackUnsigned. A valid signature proves only who sent the
// callback; the order asks the connector for the outcome.
type CallbackReader interface {
	ReadThreeDSResult(form url.Values) (connector.ThreeDSCallback, error)
	ReadAPMCallback(body []byte, header http.Header) (connector.APMCallback, error)
}

// CallbackReaders are the configured connectors' readers by connector name
// (internal/adapters/connectors.Registry); an empty name is the default
// connector.
type CallbackReaders interface {
	Get(name string) (CallbackReader, error)
	Names() []string
}

// readByAConnector reads a callback with the first configured connector
// whose it is. It runs before the order is looked up, so a stranger without
// a connector's secret learns nothing, not even whether a reference exists.
// A callback no connector signed is connector.ErrCallbackUnsigned; one a
// connector signed without its ids, connector.ErrCallbackMalformed.
func readByAConnector[T any](h *Handler, read func(CallbackReader) (T, error)) (T, error) {
	var zero T
	if h.Callbacks == nil {
		return zero, connector.ErrCallbackUnsigned
	}
	malformed := false
	for _, name := range h.Callbacks.Names() {
		r, err := h.Callbacks.Get(name)
		if err != nil {
			continue
		}
		cb, err := read(r)
		if err == nil {
			return cb, nil
		}
		malformed = malformed || errors.Is(err, connector.ErrCallbackMalformed)
	}
	if malformed {
		return zero, connector.ErrCallbackMalformed
	}
	return zero, connector.ErrCallbackUnsigned
}

// callbackOrder finds the order a signed callback names. An order nobody
// has (or a reference Postgres cannot hold) is a 404, the acquirer's
// signal to stop; any other failure is a 503, so that the acquirer sends
// the callback again rather than taking a passing fault of our record for
// a final word. It answers the caller itself and reports whether to go on.
func callbackOrder(c *gin.Context, h *Handler, reference string) (*models.Order, bool) {
	o, err := h.Gate.Records.FindOrderByID(c.Request.Context(), reference)
	switch {
	case errors.Is(err, models.ErrNotFound) || models.IsDataError(err):
		c.JSON(http.StatusNotFound, gin.H{"error": "unknown reference"})
		return nil, false
	case err != nil:
		h.Gate.Logger.Error("callback: find order", "error", err)
		c.JSON(http.StatusServiceUnavailable, gin.H{"error": "try again"})
		return nil, false
	}
	return o, true
}

// readByOrdersConnector reports whether the connector that owns order o
// reads the callback as cb: one connector's signature never moves another's
// order.
func readByOrdersConnector[T comparable](h *Handler, o *models.Order, cb T, read func(CallbackReader) (T, error)) bool {
	r, err := h.Callbacks.Get(o.Connector)
	if err != nil {
		h.Gate.Logger.Error("callback for an order whose connector is not configured", "transaction_id", o.TransactionID,
			"connector", o.Connector, "error", err)
		return false
	}
	got, err := read(r)
	return err == nil && got == cb
}

// WebhookReader reads the events a connector's provider posts to the
// gateway (Stripe's webhooks): each is checked with the connector's own
// signature check and names, at most, a payment an order may be waiting
// for; connector.ErrCallbackIrrelevant for one that names none.
type WebhookReader interface {
	ReadWebhook(body []byte, header http.Header) (connector.ThreeDSCallback, error)
}
