package api

import (
	"net/http"
	"net/url"

	"github.com/paygate/paygate/models"
)

// CallbackVerifier checks that a callback was signed by one connector: a
// 3-D Secure result its ACS has the shopper's browser post, or its APM
// provider's server-to-server callback. A valid signature proves only who
// sent the callback; the order asks the connector for the outcome.
type CallbackVerifier interface {
	VerifyThreeDSResult(form url.Values) bool
	VerifyAPMCallback(body []byte, header http.Header) bool
}

// CallbackVerifiers are the configured connectors' checks by connector name
// (internal/adapters/connectors.Registry); an empty name is the default
// connector.
type CallbackVerifiers interface {
	Get(name string) (CallbackVerifier, error)
	Names() []string
}

// signedByAConnector reports whether some configured connector signed a
// callback. It runs before the order is looked up, so a stranger without a
// connector's secret learns nothing, not even whether a reference exists.
func (s *Server) signedByAConnector(signed func(CallbackVerifier) bool) bool {
	if s.Callbacks == nil {
		return false
	}
	for _, name := range s.Callbacks.Names() {
		if v, err := s.Callbacks.Get(name); err == nil && signed(v) {
			return true
		}
	}
	return false
}

// signedByOrdersConnector reports whether the connector that owns order o
// signed a callback: one connector's signature never moves another's order.
func (s *Server) signedByOrdersConnector(o *models.Order, signed func(CallbackVerifier) bool) bool {
	v, err := s.Callbacks.Get(o.Connector)
	if err != nil {
		s.Logger.Error("callback for an order whose connector is not configured", "transaction_id", o.TransactionID,
			"connector", o.Connector, "error", err)
		return false
	}
	return signed(v)
}
