package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/adapters/password"
	"github.com/paygate/paygate/models"
)

// consoleLogin is one demo console user, as .data/demo-merchant.json lists
// them.
type consoleLogin struct {
	Role     string `json:"role"`
	Email    string `json:"email"`
	Password string `json:"password"`
}

// ensureDemoConsoleUsers makes a console user of each role for the local
// setup. Their passwords come from this setup's own secret, so they are the
// same on every `make run` and never the same on two machines.
func ensureDemoConsoleUsers(ctx context.Context, create func(context.Context, *models.ConsoleUser) error, secret string) ([]consoleLogin, error) {
	var out []consoleLogin
	for _, u := range []struct{ role, merchant string }{
		{models.RoleMerchant, demoMerchantID}, {models.RoleFinance, ""}, {models.RoleOps, ""},
	} {
		login := consoleLogin{Role: u.role, Email: u.role + "@demo.paygate.local", Password: demoPassword(secret, u.role)}
		hash, err := password.Hash(login.Password)
		if err != nil {
			return nil, err
		}
		err = create(ctx, &models.ConsoleUser{Email: login.Email, Name: "Demo " + u.role, PasswordHash: hash,
			Role: u.role, MerchantID: u.merchant, CreatedAt: time.Now().UTC()})
		if err != nil && !errors.Is(err, models.ErrConsoleUserExists) {
			return nil, err
		}
		out = append(out, login)
	}
	return out, nil
}

func demoPassword(secret, role string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("paygate demo console password " + role))
	p := base64.RawURLEncoding.EncodeToString(m.Sum(nil))[:18]
	return strings.NewReplacer("-", "x", "_", "y").Replace(p)
}
