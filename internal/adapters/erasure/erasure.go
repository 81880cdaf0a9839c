// Package erasure erases shoppers' and beneficiaries' personal data on
// request (models.EraseShopper), for the admin API and the command line.
package erasure

import (
	"context"
	"errors"
	"net/mail"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/paygate/paygate/models"
)

// Service erases personal data in one database.
type Service struct {
	db  *gorm.DB
	now func() time.Time
}

// New returns the service over db, which must have models.PersonalData
// installed.
func New(db *gorm.DB) *Service { return &Service{db: db, now: time.Now} }

// Erase erases what req names and returns the audit record it wrote.
func (s *Service) Erase(ctx context.Context, req models.ErasureRequest) (models.PersonalDataErasure, error) {
	return models.EraseShopper(ctx, s.db, req, s.now())
}

// Check is the rule the admin API and the command line share: who asks is
// named (by), and an email or a transaction id names whose data.
func Check(req models.ErasureRequest, by string) error {
	switch {
	case by == "":
		return errors.New("by: name who asks for the erasure")
	case len(by) > 100 || len(req.Reason) > 500:
		return errors.New("by: at most 100 characters; reason: at most 500")
	case req.Email == "" && req.TransactionID == "":
		return errors.New("name an email or a transaction_id")
	case len(req.MerchantID) > 32:
		return errors.New("merchant_id: at most 32 characters")
	}
	if req.Email != "" {
		if addr, err := mail.ParseAddress(req.Email); err != nil || addr.Address != req.Email || len(req.Email) > 200 {
			return errors.New("email: want an address such as shopper@example.com")
		}
	}
	if t := req.TransactionID; t != "" {
		if len(t) > 19 || strings.Trim(t, "0123456789") != "" {
			return errors.New("transaction_id: want the order's or payout's transaction id (digits)")
		}
	}
	return nil
}
