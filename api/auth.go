package api

import (
	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/internal/merchant"
)

// ctxAuthenticated is the gin context key set once a request has proved its
// account's key; the replay store keeps answers only for such requests.
const ctxAuthenticated = "paygate.authenticated"

// authenticate checks that the request proved the account's key and returns
// the key its answer is signed with. A request that did not prove the key
// gets no key back, so its answer goes unsigned (DESIGN §3: never a signing
// oracle).
func (s *Server) authenticate(c *gin.Context, account *merchant.Account, sig string, values ...string) (string, bool) {
	key, ok := account.ProvenKey(s.Now(), sig, values...)
	if !ok {
		return "", false
	}
	c.Set(ctxAuthenticated, true)
	return key, true
}
