package api

import (
	"github.com/gin-gonic/gin"
	"github.com/paygate/paygate/api/checkout"
	"github.com/paygate/paygate/internal/domain/codes"
)

// StartPage sets the status and headers of a page for the shopper's
// browser: HTML, never cached (it may hold a session or a result).
func StartPage(c *gin.Context, httpStatus int) {
	c.Status(httpStatus)
	c.Header("Content-Type", "text/html; charset=utf-8")
	c.Header("Cache-Control", "no-store")
}

// ShopperMessage renders a short page for the shopper.
func (s *Server) ShopperMessage(c *gin.Context, httpStatus int, lang, titleKey string, code codes.Code) {
	c.Set(ContextResultCode, code.ID)
	StartPage(c, httpStatus)
	if err := checkout.RenderMessage(c.Writer, lang, checkout.Message(lang, titleKey), code.String()); err != nil {
		s.Logger.Error("render page", "error", err)
	}
}
