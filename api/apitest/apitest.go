// Package apitest serves the merchant API to the capability packages'
// tests: one test account, a gate over the records a test gives, and a
// JSON post. Only tests import it.
package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/models"
)

// The test account, its key, and the address it may query from.
const (
	MerchantID = "10086"
	AccountID  = "10086001"
	SignKey    = "k3y-for-tests-0123456789abcdef"
	QueryIP    = "198.51.100.7"
)

// Accounts loads the test account, shaped by Edit when set; any other
// account is unknown.
type Accounts struct{ Edit func(*models.Account) }

// Load implements api.Accounts.
func (a Accounts) Load(_ context.Context, merchantID, accountID string) (*merchant.Account, error) {
	if merchantID != MerchantID || accountID != AccountID {
		return nil, merchant.ErrUnknownAccount
	}
	acc := models.Account{ID: AccountID, MerchantID: MerchantID, Active: true, AllowedQueryIPs: []string{QueryIP}}
	if a.Edit != nil {
		a.Edit(&acc)
	}
	return merchant.NewTestAccount(acc, SignKey), nil
}

// Gate is a merchant API over accounts and records (nil: none), its log
// discarded. The test sets what else it needs, then its Capabilities.
func Gate(accounts Accounts, records api.Records) *api.Server {
	g := &api.Server{Accounts: accounts, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if records != nil {
		g.Records = records
	}
	return g
}

// PostJSON posts body as JSON to path on h, from remote when it is set,
// and decodes the JSON answer into out.
func PostJSON(t testing.TB, h http.Handler, path string, body any, remote string, out any) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	if remote != "" {
		req.RemoteAddr = remote
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if err := json.Unmarshal(rec.Body.Bytes(), out); err != nil {
		t.Fatalf("answer %d is not JSON: %s", rec.Code, rec.Body.String())
	}
}
