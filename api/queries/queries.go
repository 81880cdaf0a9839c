// Package queries is the query capability of the merchant API: POST
// /v1/retrievalTrans (orders) and /v1/retrievalRefund (refunds), from the
// account's registered query addresses only.
package queries

import (
	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/api"
)

// Handler serves the query routes.
type Handler struct {
	// Gate is the merchant API: its authenticated-request step, and the
	// record and logger it holds.
	Gate *api.Server
}

// New is the query capability of gate.
func New(gate *api.Server) *Handler { return &Handler{Gate: gate} }

// Routes puts the query routes on the merchant API's /v1 group.
func (h *Handler) Routes(v1 gin.IRoutes) {
	v1.POST("/retrievalTrans", h.retrievalTrans)
	v1.POST("/retrievalRefund", h.retrievalRefund)
}
