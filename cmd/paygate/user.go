package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/mail"
	"strings"
	"time"

	"github.com/paygate/paygate/app"
	"github.com/paygate/paygate/internal/adapters/password"
	"github.com/paygate/paygate/models"
)

// runUserCreate makes a console user. Without -password-stdin it makes up
// a password and prints it once; only its argon2id hash is kept.
func runUserCreate(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer, logger *slog.Logger) error {
	fs := flag.NewFlagSet("user create", flag.ContinueOnError)
	email := fs.String("email", "", "the user's email, which signs them in")
	name := fs.String("name", "", "the user's name")
	role := fs.String("role", "", "merchant (one merchant's accounts), finance (payouts, ledger, re-runs) or ops (read-only, notification resend)")
	merchantID := fs.String("merchant-id", "", "with -role merchant: the merchant whose accounts the user sees")
	fromStdin := fs.Bool("password-stdin", false, "read the password from the first line of standard input")
	if err := fs.Parse(args); err != nil {
		return err
	}
	u, err := newConsoleUser(*email, *name, *role, *merchantID)
	if err != nil {
		return err
	}
	pw := ""
	if *fromStdin {
		line, err := bufio.NewReader(stdin).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		pw = strings.TrimRight(line, "\r\n")
	} else {
		pw = newPassword()
	}
	if u.PasswordHash, err = password.Hash(pw); err != nil {
		return err
	}
	g, err := app.OpenFromEnv(ctx, logger, false)
	if err != nil {
		return err
	}
	defer g.Close()
	if u.Role == models.RoleMerchant {
		ok, err := models.MerchantExists(ctx, g.DB, u.MerchantID)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("no merchant %s", u.MerchantID)
		}
	}
	if err := models.CreateConsoleUser(ctx, g.DB, u); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "email     %s\nrole      %s\n", u.Email, u.Role)
	if u.MerchantID != "" {
		fmt.Fprintf(stdout, "merchant  %s\n", u.MerchantID)
	}
	if !*fromStdin {
		fmt.Fprintf(stdout, "password  %s   (shown once)\n", pw)
	}
	return nil
}

// newConsoleUser checks what a user is made of.
func newConsoleUser(email, name, role, merchantID string) (*models.ConsoleUser, error) {
	email = strings.ToLower(strings.TrimSpace(email))
	if a, err := mail.ParseAddress(email); err != nil || a.Address != email || len(email) > 254 {
		return nil, fmt.Errorf("-email %q is not an email address", email)
	}
	switch role {
	case models.RoleMerchant:
		if merchantID == "" {
			return nil, errors.New("-role merchant needs -merchant-id")
		}
	case models.RoleFinance, models.RoleOps:
		if merchantID != "" {
			return nil, fmt.Errorf("-role %s sees every merchant: leave -merchant-id out", role)
		}
	default:
		return nil, errors.New("-role must be merchant, finance or ops")
	}
	if len(name) > 100 {
		return nil, errors.New("-name is longer than 100 characters")
	}
	return &models.ConsoleUser{Email: email, Name: name, Role: role, MerchantID: merchantID, CreatedAt: time.Now().UTC()}, nil
}

// newPassword is 20 characters from an alphabet without look-alikes, each
// equally likely.
func newPassword() string {
	const alphabet = "abcdefghjkmnpqrstuvwxyzABCDEFGHJKMNPQRSTUVWXYZ23456789"
	limit := byte(256 - 256%len(alphabet))
	out := make([]byte, 0, 20)
	buf := make([]byte, 32)
	for len(out) < 20 {
		_, _ = rand.Read(buf)
		for _, b := range buf {
			if b < limit && len(out) < 20 {
				out = append(out, alphabet[int(b)%len(alphabet)])
			}
		}
	}
	return string(out)
}
