package connectors

import (
	"net/http"
	"net/url"

	"github.com/paygate/paygate/internal/domain/connector"
)

// NoCallbacks is the callback side of a connector whose acquirer sends us
// none we read (no 3-D Secure of ours, no APM): it refuses every callback
// as not its own. Such connectors embed it.
type NoCallbacks struct{}

// ReadThreeDSResult refuses every 3-D Secure result.
func (NoCallbacks) ReadThreeDSResult(url.Values) (connector.ThreeDSCallback, error) {
	return connector.ThreeDSCallback{}, connector.ErrCallbackUnsigned
}

// ReadAPMCallback refuses every APM callback.
func (NoCallbacks) ReadAPMCallback([]byte, http.Header) (connector.APMCallback, error) {
	return connector.APMCallback{}, connector.ErrCallbackUnsigned
}
