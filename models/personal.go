package models

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"gorm.io/gorm"

	"github.com/paygate/paygate/internal/domain/order"
)

// Sealer seals and opens data under named keys; keyring.Keyring is one.
type Sealer interface {
	Seal(plaintext, aad []byte) (keyID string, ciphertext []byte, err error)
	Open(keyID string, ciphertext, aad []byte) ([]byte, error)
}

// PersonalData keeps shoppers' and beneficiaries' personal data sealed at
// rest. Installed on a *gorm.DB (ProtectPersonalData), it seals the personal
// part of every order and payout gorm creates, and opens it in every one gorm
// loads, so the rest of the code reads Order.Details and Payout.Request
// whole. Where the console or the risk engine must find rows by an email or
// an address, they look for its keyed hash (Hash), never the value.
type PersonalData struct {
	keys    Sealer
	hashKey []byte
}

// personalDataPlugin is the name the plugin is kept under in gorm's config.
const personalDataPlugin = "paygate:personal-data"

// Kinds of keyed hash: the same value hashed as two kinds gives two hashes.
const (
	HashEmail = "email"
	HashIP    = "ip"
	// HashDevice is the kind of a device fingerprint's hash.
	HashDevice = "device"
)

// ErrNotProtected is returned when personal data is written or searched
// through a *gorm.DB that has no PersonalData installed.
var ErrNotProtected = errors.New("personal data: the database has no PersonalData installed (models.ProtectPersonalData)")

// NewPersonalData returns the protection that seals with keys and hashes
// with hashKey, which should be a key of its own (at least 32 bytes).
func NewPersonalData(keys Sealer, hashKey []byte) *PersonalData {
	return &PersonalData{keys: keys, hashKey: hashKey}
}

// ProtectPersonalData installs p on db; every session made from db after
// that seals and opens personal data.
func ProtectPersonalData(db *gorm.DB, p *PersonalData) error {
	if err := db.Use(p); err != nil {
		return fmt.Errorf("protect personal data: %w", err)
	}
	return nil
}

// personalDataOf returns the protection installed on db.
func personalDataOf(db *gorm.DB) (*PersonalData, error) {
	if p, ok := db.Config.Plugins[personalDataPlugin].(*PersonalData); ok {
		return p, nil
	}
	return nil, ErrNotProtected
}

// Name names the gorm plugin.
func (p *PersonalData) Name() string { return personalDataPlugin }

// Initialize registers the callbacks that seal before a create and open
// after a query.
func (p *PersonalData) Initialize(db *gorm.DB) error {
	if err := db.Callback().Create().Before("gorm:before_create").Register(personalDataPlugin+":seal", p.sealEach); err != nil {
		return err
	}
	return db.Callback().Query().After("gorm:after_query").Register(personalDataPlugin+":open", p.openEach)
}

// Hash is the keyed hash of value as kind, in hex: values are compared
// trimmed and without regard to case, as people type addresses. An empty
// value hashes to "", which matches nothing searched for.
func (p *PersonalData) Hash(kind, value string) string {
	value = strings.ToLower(strings.TrimSpace(value))
	if value == "" {
		return ""
	}
	m := hmac.New(sha256.New, p.hashKey)
	m.Write([]byte(kind))
	m.Write([]byte{0})
	m.Write([]byte(value))
	return hex.EncodeToString(m.Sum(nil))
}

// seal seals v (marshalled as JSON) for the row aad names.
func (p *PersonalData) seal(v any, aad string) (string, []byte, error) {
	plain, err := json.Marshal(v)
	if err != nil {
		return "", nil, fmt.Errorf("seal personal data of %s: %w", aad, err)
	}
	id, sealed, err := p.keys.Seal(plain, []byte(aad))
	if err != nil {
		return "", nil, fmt.Errorf("seal personal data of %s: %w", aad, err)
	}
	return id, sealed, nil
}

// open opens what seal sealed for the row aad names into v.
func (p *PersonalData) open(keyID string, sealed []byte, aad string, v any) error {
	plain, err := p.keys.Open(keyID, sealed, []byte(aad))
	if err != nil {
		return fmt.Errorf("open personal data of %s: %w", aad, err)
	}
	if err := json.Unmarshal(plain, v); err != nil {
		return fmt.Errorf("open personal data of %s: %w", aad, err)
	}
	return nil
}

// personalHolder is a model with personal data: it seals it into its stored
// columns before it is written and opens it after it is read.
type personalHolder interface {
	sealPersonal(p *PersonalData) error
	openPersonal(p *PersonalData) error
}

func (p *PersonalData) sealEach(db *gorm.DB) {
	eachHolder(db, func(h personalHolder) error { return h.sealPersonal(p) })
}

func (p *PersonalData) openEach(db *gorm.DB) {
	eachHolder(db, func(h personalHolder) error { return h.openPersonal(p) })
}

// eachHolder calls fn on every model of the statement that holds personal
// data: one struct, or each element of a slice or array.
func eachHolder(db *gorm.DB, fn func(personalHolder) error) {
	if db.Error != nil || db.Statement.Schema == nil {
		return
	}
	one := func(v reflect.Value) {
		for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
			if v.IsNil() {
				return
			}
			v = v.Elem()
		}
		if !v.CanAddr() {
			return
		}
		if h, ok := v.Addr().Interface().(personalHolder); ok {
			if err := fn(h); err != nil {
				_ = db.AddError(err)
			}
		}
	}
	rv := db.Statement.ReflectValue
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		for i := range rv.Len() {
			one(rv.Index(i))
		}
	default:
		one(rv)
	}
}

// orderAAD binds an order's sealed personal data to its transaction id, so
// it cannot be moved to another row.
func orderAAD(transactionID string) string { return "order/" + transactionID }

// payoutAAD binds a payout's sealed request to its id.
func payoutAAD(id string) string { return "payout/" + id }

// sealPersonal splits the order's details: the personal part is sealed,
// the rest stored in clear, and the email and address kept as keyed hashes
// for velocity and search.
func (o *Order) sealPersonal(p *PersonalData) error {
	stored := o.Details
	personal := stored.TakePersonal()
	id, sealed, err := p.seal(personal, orderAAD(o.TransactionID))
	if err != nil {
		return err
	}
	o.StoredDetails = stored
	o.PersonalKeyID, o.PersonalSealed = id, sealed
	o.ShopperEmailHash = p.Hash(HashEmail, personal.ShopperEmail)
	o.ShopperIPHash = p.Hash(HashIP, personal.ShopperIP)
	o.DeviceFingerprintHash = p.Hash(HashDevice, personal.DeviceFingerprint)
	o.LegacyShopperEmail, o.LegacyShopperIP = "", ""
	return nil
}

// openPersonal makes Details whole again. A row written before personal
// data was sealed holds it all in its stored details; an erased row has
// none to open.
func (o *Order) openPersonal(p *PersonalData) error {
	o.Details = o.StoredDetails
	if o.PersonalKeyID == "" || len(o.PersonalSealed) == 0 {
		// Rows from before sealing kept the email and address in columns
		// of their own as well.
		if o.Details.ShopperEmail == "" {
			o.Details.ShopperEmail = o.LegacyShopperEmail
		}
		if o.Details.ShopperIP == "" {
			o.Details.ShopperIP = o.LegacyShopperIP
		}
		return nil
	}
	var personal order.Personal
	if err := p.open(o.PersonalKeyID, o.PersonalSealed, orderAAD(o.TransactionID), &personal); err != nil {
		return err
	}
	o.Details.PutPersonal(personal)
	return nil
}

// BeforeCreate refuses an order whose details were not split and sealed:
// written through a database without PersonalData, they would be stored
// empty, or in clear by an older path.
func (o *Order) BeforeCreate(*gorm.DB) error {
	if o.PersonalKeyID == "" {
		return fmt.Errorf("order %s: %w", o.TransactionID, ErrNotProtected)
	}
	return nil
}

// beneficiaryEmail is the one field of a stored payout request searched by.
type beneficiaryEmail struct {
	Request struct {
		Beneficiary *struct {
			AdditionalInfo struct {
				PersonalEmail string `json:"personal_email"`
			} `json:"additional_info"`
		} `json:"beneficiary"`
	} `json:"request"`
}

// sealPersonal seals the payout's request: it names the beneficiary, their
// address, documents and bank account.
func (py *Payout) sealPersonal(p *PersonalData) error {
	id, sealed, err := p.seal(json.RawMessage(py.Request), payoutAAD(py.ID))
	if err != nil {
		return err
	}
	py.RequestKeyID, py.RequestSealed, py.LegacyRequest = id, sealed, nil
	var be beneficiaryEmail
	if json.Unmarshal(py.Request, &be) == nil && be.Request.Beneficiary != nil {
		py.BeneficiaryEmailHash = p.Hash(HashEmail, be.Request.Beneficiary.AdditionalInfo.PersonalEmail)
	}
	return nil
}

// openPersonal gives back the request; rows written before requests were
// sealed hold it in clear.
func (py *Payout) openPersonal(p *PersonalData) error {
	if py.RequestKeyID == "" || len(py.RequestSealed) == 0 {
		py.Request = py.LegacyRequest
		return nil
	}
	var raw json.RawMessage
	if err := p.open(py.RequestKeyID, py.RequestSealed, payoutAAD(py.ID), &raw); err != nil {
		return err
	}
	py.Request = []byte(raw)
	return nil
}

// BeforeCreate refuses a payout whose request was not sealed.
func (py *Payout) BeforeCreate(*gorm.DB) error {
	if py.RequestKeyID == "" {
		return fmt.Errorf("payout %s: %w", py.ID, ErrNotProtected)
	}
	return nil
}

// HashOf is the keyed hash (PersonalData.Hash) of value as kind under the
// protection installed on db: what to search the hash columns for.
func HashOf(db *gorm.DB, kind, value string) (string, error) {
	p, err := personalDataOf(db)
	if err != nil {
		return "", err
	}
	return p.Hash(kind, value), nil
}
