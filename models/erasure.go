package models

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/paygate/paygate/internal/domain/status"
)

// PersonalDataErasure is the audit record of one erasure of personal data:
// who asked, whose data (as a keyed hash, never the email itself) and what
// it reached.
type PersonalDataErasure struct {
	ID uint `gorm:"primaryKey"`
	// RequestedBy is who asked: "admin-api:<by>", "cli:<by>" or
	// "retention".
	RequestedBy string `gorm:"size:200;not null"`
	Reason      string `gorm:"size:500;not null;default:''"`
	MerchantID  string `gorm:"size:32;not null;default:''"`
	// EmailHash is the keyed hash of the email erased by, if any.
	EmailHash     string `gorm:"size:64;not null;default:''"`
	TransactionID string `gorm:"size:19;not null;default:''"`
	// Before is, for a retention run, the time before which closed records
	// were erased.
	Before *time.Time

	Orders      int `gorm:"not null;default:0"`
	Payouts     int `gorm:"not null;default:0"`
	StoredCards int `gorm:"not null;default:0"`
	VaultCards  int `gorm:"not null;default:0"`
	// Open counts the records found but left alone because they were still
	// in progress: a payment waiting for its shopper or a review, a payout
	// not yet paid or failed.
	Open int `gorm:"not null;default:0"`

	CreatedAt time.Time `gorm:"not null;index"`
}

// ErasureRequest names whose personal data to erase: every order and payout
// of an email, or one order or payout by its transaction id, optionally
// within one merchant.
type ErasureRequest struct {
	MerchantID    string
	Email         string
	TransactionID string
	RequestedBy   string
	Reason        string
}

// ErrNothingToErase is returned for an erasure request that names no one.
var ErrNothingToErase = errors.New("an erasure needs an email or a transaction id")

// openPayments are the payment statuses that still need the shopper: the
// card and the shopper's details are used when the shopper comes back, or
// when a held order is released.
var openPayments = []status.Payment{status.Pending, status.HeldForReview}

// finalPayouts are the payout statuses a payout's personal data can be
// erased in.
var finalPayouts = []string{"COMPLETED", "FAILED"}

// EraseShopper erases the personal data of the orders and payouts req names
// and records the erasure: orders keep their amounts, statuses, masked card
// and the part of their details that is not personal; their sealed personal
// data, hashes and vaulted card go, and so do the stored cards they made.
// Payouts keep their amounts and statuses; their request loses the
// beneficiary and payer. Records still in progress are counted as Open and
// left alone. Erasing again finds nothing more to erase.
func EraseShopper(ctx context.Context, db *gorm.DB, req ErasureRequest, now time.Time) (PersonalDataErasure, error) {
	req.Email, req.TransactionID = strings.TrimSpace(req.Email), strings.TrimSpace(req.TransactionID)
	if req.Email == "" && req.TransactionID == "" {
		return PersonalDataErasure{}, ErrNothingToErase
	}
	pd, err := personalDataOf(db)
	if err != nil {
		return PersonalDataErasure{}, err
	}
	rec := PersonalDataErasure{RequestedBy: req.RequestedBy, Reason: req.Reason, MerchantID: req.MerchantID,
		EmailHash: pd.Hash(HashEmail, req.Email), TransactionID: req.TransactionID, CreatedAt: now}
	err = db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		orders := tx.Model(&Order{}).Where("personal_erased_at IS NULL")
		payouts := tx.Model(&Payout{}).Where("personal_erased_at IS NULL")
		if req.MerchantID != "" {
			orders, payouts = orders.Where("merchant_id = ?", req.MerchantID), payouts.Where("merchant_id = ?", req.MerchantID)
		}
		if req.Email != "" {
			// Rows written before emails were hashed still hold them in
			// clear until they are sealed.
			orders = orders.Where("(shopper_email_hash = ? OR lower(shopper_email) = ?)", rec.EmailHash, strings.ToLower(req.Email))
			payouts = payouts.Where("(beneficiary_email_hash = ? OR lower(request #>> '{request,beneficiary,additional_info,personal_email}') = ?)",
				rec.EmailHash, strings.ToLower(req.Email))
		}
		if req.TransactionID != "" {
			orders, payouts = orders.Where("transaction_id = ?", req.TransactionID), payouts.Where("transaction_id = ?", req.TransactionID)
		}
		return eraseFound(ctx, tx, pd, orders, payouts, &rec, now)
	})
	if err != nil {
		return PersonalDataErasure{}, fmt.Errorf("erase personal data: %w", err)
	}
	return rec, nil
}

// EraseExpired erases the personal data of up to limit closed orders and
// payouts last changed before before, and records the run if it erased
// anything. More is left when either count reached limit.
func EraseExpired(ctx context.Context, db *gorm.DB, before time.Time, limit int, now time.Time) (PersonalDataErasure, error) {
	pd, err := personalDataOf(db)
	if err != nil {
		return PersonalDataErasure{}, err
	}
	rec := PersonalDataErasure{RequestedBy: "retention", Before: &before, CreatedAt: now}
	err = db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// An order whose stored card is still kept is a relationship that
		// goes on (a subscription, a returning shopper): its data stays until
		// the card is deleted.
		orders := tx.Model(&Order{}).Where("personal_erased_at IS NULL AND updated_at < ? AND payment_status NOT IN ?", before, openPayments).
			Where("NOT EXISTS (SELECT 1 FROM stored_cards s WHERE s.source_transaction_id = orders.transaction_id AND s.deleted_at IS NULL)").
			Order("updated_at").Limit(limit)
		payouts := tx.Model(&Payout{}).Where("personal_erased_at IS NULL AND updated_at < ? AND status IN ?", before, finalPayouts).
			Order("updated_at").Limit(limit)
		return eraseFound(ctx, tx, pd, orders, payouts, &rec, now)
	})
	if err != nil {
		return PersonalDataErasure{}, fmt.Errorf("erase expired personal data: %w", err)
	}
	return rec, nil
}

// eraseFound erases the orders and payouts the two queries find, counts
// them in rec and records rec, all in tx. The rows are locked so that a
// concurrent erasure or write waits; rows another transaction holds are
// skipped by the retention run (its queries have a limit) and waited for
// otherwise.
func eraseFound(ctx context.Context, tx *gorm.DB, pd *PersonalData, orders, payouts *gorm.DB, rec *PersonalDataErasure, now time.Time) error {
	var os []Order
	if err := orders.Clauses(clause.Locking{Strength: "UPDATE"}).Find(&os).Error; err != nil {
		return err
	}
	for i := range os {
		o := &os[i]
		if slices.Contains(openPayments, o.PaymentStatus) {
			rec.Open++
			continue
		}
		cards, vaulted, err := eraseOrder(ctx, tx, o, now)
		if err != nil {
			return err
		}
		rec.Orders++
		rec.StoredCards += cards
		rec.VaultCards += vaulted
	}
	var ps []Payout
	if err := payouts.Clauses(clause.Locking{Strength: "UPDATE"}).Find(&ps).Error; err != nil {
		return err
	}
	for i := range ps {
		p := &ps[i]
		if !slices.Contains(finalPayouts, p.Status) {
			rec.Open++
			continue
		}
		if err := erasePayout(ctx, tx, pd, p, now); err != nil {
			return err
		}
		rec.Payouts++
	}
	if rec.RequestedBy == "retention" && rec.Orders+rec.Payouts == 0 {
		return nil
	}
	return tx.Create(rec).Error
}

// eraseOrder keeps the order's details that are not personal and removes
// the rest, with the stored cards it made and the vaulted cards it used.
func eraseOrder(ctx context.Context, tx *gorm.DB, o *Order, now time.Time) (storedCards, vaultCards int, err error) {
	kept := o.Details
	kept.TakePersonal()
	details, err := json.Marshal(kept)
	if err != nil {
		return 0, 0, err
	}
	err = tx.WithContext(ctx).Model(&Order{}).Where("transaction_id = ?", o.TransactionID).UpdateColumns(map[string]any{
		"details": string(details), "personal_key_id": "", "personal_sealed": nil,
		"shopper_email_hash": "", "shopper_ip_hash": "", "device_fingerprint_hash": "", "shopper_email": "", "shopper_ip": "",
		"card_token": "", "personal_erased_at": now,
	}).Error
	if err != nil {
		return 0, 0, err
	}
	var cards []StoredCard
	if err := tx.WithContext(ctx).Where("source_transaction_id = ? AND deleted_at IS NULL", o.TransactionID).Find(&cards).Error; err != nil {
		return 0, 0, err
	}
	tokens := []string{}
	if o.CardToken != "" {
		tokens = append(tokens, o.CardToken)
	}
	for _, c := range cards {
		tokens = append(tokens, c.VaultToken)
	}
	if len(cards) > 0 {
		res := tx.WithContext(ctx).Model(&StoredCard{}).Where("source_transaction_id = ? AND deleted_at IS NULL", o.TransactionID).
			Update("deleted_at", now)
		if res.Error != nil {
			return 0, 0, res.Error
		}
		storedCards = int(res.RowsAffected)
	}
	if len(tokens) > 0 {
		// A card a kept stored card charges stays in the vault: the order
		// was one charge of it.
		res := tx.WithContext(ctx).Where("token IN ?", tokens).
			Where("token NOT IN (SELECT vault_token FROM stored_cards WHERE deleted_at IS NULL)").Delete(&VaultCard{})
		if res.Error != nil {
			return 0, 0, res.Error
		}
		vaultCards = int(res.RowsAffected)
	}
	return storedCards, vaultCards, nil
}

// erasePayout seals the payout's request again without the beneficiary,
// the payer and the free-text fields, keeping what its answer and the
// books need.
func erasePayout(ctx context.Context, tx *gorm.DB, pd *PersonalData, p *Payout, now time.Time) error {
	var inst map[string]json.RawMessage
	if err := json.Unmarshal(p.Request, &inst); err != nil {
		return fmt.Errorf("payout %s: stored request: %w", p.ID, err)
	}
	delete(inst, "iban")
	delete(inst, "bic")
	if raw, ok := inst["request"]; ok {
		var req map[string]json.RawMessage
		if err := json.Unmarshal(raw, &req); err != nil {
			return fmt.Errorf("payout %s: stored request: %w", p.ID, err)
		}
		for _, k := range []string{"beneficiary", "beneficiary_id", "payer", "reason", "reference", "client_data"} {
			delete(req, k)
		}
		b, err := json.Marshal(req)
		if err != nil {
			return err
		}
		inst["request"] = b
	}
	redacted, err := json.Marshal(inst)
	if err != nil {
		return err
	}
	id, sealed, err := pd.seal(json.RawMessage(redacted), payoutAAD(p.ID))
	if err != nil {
		return err
	}
	return tx.WithContext(ctx).Model(&Payout{}).Where("id = ?", p.ID).UpdateColumns(map[string]any{
		"request_key_id": id, "request_sealed": sealed, "request": nil,
		"beneficiary_email_hash": "", "personal_erased_at": now,
	}).Error
}

// SealLegacyOrders seals the personal data of up to limit orders written
// before it was sealed, and empties their clear columns. It returns how
// many it sealed; fewer than limit means none is left.
func SealLegacyOrders(ctx context.Context, db *gorm.DB, limit int) (int, error) {
	return sealLegacy[Order](ctx, db, limit, "personal_key_id = '' AND personal_erased_at IS NULL", "orders")
}

// SealLegacyPayouts seals the requests of up to limit payouts written before
// requests were sealed. It returns how many it sealed.
func SealLegacyPayouts(ctx context.Context, db *gorm.DB, limit int) (int, error) {
	return sealLegacy[Payout](ctx, db, limit, "request_key_id = '' AND request IS NOT NULL", "payouts")
}

// legacyRow is a model whose rows written before sealing can be sealed in
// place: sealed (sealPersonal), then written back by sealedColumns.
type legacyRow[T any] interface {
	*T
	personalHolder
	// sealedColumns names the row (a where clause and its value) and the
	// columns sealing changed, clear ones emptied.
	sealedColumns() (where string, id any, columns map[string]any, err error)
}

// sealLegacy seals up to limit rows of T that where selects, oldest first,
// in one transaction; rows another transaction holds are left for the next
// batch.
func sealLegacy[T any, P legacyRow[T]](ctx context.Context, db *gorm.DB, limit int, where, what string) (int, error) {
	pd, err := personalDataOf(db)
	if err != nil {
		return 0, err
	}
	n := 0
	err = db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var rows []T
		err := tx.Where(where).Order("created_at").Limit(limit).
			Clauses(clause.Locking{Strength: "UPDATE", Options: "SKIP LOCKED"}).Find(&rows).Error
		if err != nil {
			return err
		}
		for i := range rows {
			row := P(&rows[i])
			if err := row.sealPersonal(pd); err != nil {
				return err
			}
			key, id, columns, err := row.sealedColumns()
			if err != nil {
				return err
			}
			if err := tx.Model(new(T)).Where(key, id).UpdateColumns(columns).Error; err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("seal legacy %s: %w", what, err)
	}
	return n, nil
}

func (o *Order) sealedColumns() (string, any, map[string]any, error) {
	details, err := json.Marshal(o.StoredDetails)
	if err != nil {
		return "", nil, nil, err
	}
	return "transaction_id = ?", o.TransactionID, map[string]any{
		"details": string(details), "personal_key_id": o.PersonalKeyID, "personal_sealed": o.PersonalSealed,
		"shopper_email_hash": o.ShopperEmailHash, "shopper_ip_hash": o.ShopperIPHash, "device_fingerprint_hash": o.DeviceFingerprintHash,
		"shopper_email": "", "shopper_ip": "",
	}, nil
}

func (py *Payout) sealedColumns() (string, any, map[string]any, error) {
	return "id = ?", py.ID, map[string]any{
		"request_key_id": py.RequestKeyID, "request_sealed": py.RequestSealed, "request": nil,
		"beneficiary_email_hash": py.BeneficiaryEmailHash,
	}, nil
}
