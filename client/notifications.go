package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"

	"github.com/paygate/paygate/internal/domain/notify"
)

// Notification is one notification the gateway sent to a notify_url,
// verified. Which fields it has depends on NotifyType: "payment",
// "review", "capture", "cancel", "refund", "expiry" carry the payment
// result (and the refund's fields); "payout" the payout's; "settlement",
// "subscription" and "dispute" their own. NotifyID is unique: a
// notification delivered twice has the same one, so handle it once.
type Notification struct {
	NotifyType    string `form:"notify_type"`
	NotifyID      string `form:"notify_id"`
	MerchantID    string `form:"merchant_id"`
	AccountID     string `form:"account_id"`
	TransactionID string `form:"transaction_id"`
	OrderNo       string `form:"order_no"`
	Amount        string `form:"amount"`
	Currency      string `form:"currency"`
	Card          string `form:"card"`
	OrderStatus   string `form:"order_status"`
	PaymentStatus string `form:"payment_status"`
	ResultInfo    string `form:"result_info"`
	CaptureAmount string `form:"capture_amount"`

	RefundAmount      string `form:"refund_amount"`
	RefundReason      string `form:"refund_reason"`
	RefundStatus      string `form:"refund_status"`
	RefundMessage     string `form:"refund_message"`
	RefundReference   string `form:"refund_reference"`
	RefundReferenceID string `form:"refund_reference_id"`

	RequestID                 string `form:"request_id"`
	PaymentAmount             string `form:"payment_amount"`
	PaymentCurrency           string `form:"payment_currency"`
	Status                    string `form:"status"`
	FailureType               string `form:"failure_type"`
	FailureReason             string `form:"failure_reason"`
	ShortReferenceID          string `form:"short_reference_id"`
	AmountBeneficiaryReceives string `form:"amount_beneficiary_receives"`
	AmountPayerPays           string `form:"amount_payer_pays"`
	FeeAmount                 string `form:"fee_amount"`
	FeeCurrency               string `form:"fee_currency"`

	SettlementDate string `form:"settlement_date"`
	Connector      string `form:"connector"`
	Captures       string `form:"captures"`
	CapturedAmount string `form:"captured_amount"`
	Refunds        string `form:"refunds"`
	RefundedAmount string `form:"refunded_amount"`
	Chargebacks    string `form:"chargebacks"`
	Fees           string `form:"fees"`
	NetAmount      string `form:"net_amount"`

	RecurringID            string `form:"recurring_id"`
	RecurringStatus        string `form:"recurring_status"`
	Change                 string `form:"change"`
	Charges                string `form:"charges"`
	ContractName           string `form:"contract_name"`
	ContractAmount         string `form:"contract_amount"`
	RecurringDeductionTime string `form:"recurring_deduction_time"`

	DisputeID     string `form:"dispute_id"`
	Event         string `form:"event"`
	Reason        string `form:"reason"`
	Stage         string `form:"stage"`
	Fee           string `form:"fee"`
	EvidenceDueBy string `form:"evidence_due_by"`

	EncryptionData string `form:"encryption_data"`

	// Fields holds every field as sent, the ones above included.
	Fields url.Values `form:"-"`
}

// ErrNotification is a notification that is not the gateway's: a bad or
// missing signature, a stale timestamp, or another account's.
var ErrNotification = errors.New("paygate: notification refused")

// NotificationTolerance is how far a notification's webhook-timestamp may
// be from the client's clock.
const NotificationTolerance = notify.DefaultTolerance

// maxNotification is the largest notification body read.
const maxNotification = 1 << 20

// VerifyNotification checks a received notification: its Standard
// Webhooks headers (webhook-id, webhook-timestamp within
// NotificationTolerance, webhook-signature) under the account's key, its
// encryption_data when its kind carries one, and that it is for this
// client's account. Only a notification it returns may be acted on.
func (c *Client) VerifyNotification(h http.Header, body []byte) (*Notification, error) {
	// The gateway signs with the account's current key; during a rotation
	// that may still be an old one.
	var err error
	for _, key := range append([]string{c.creds.SignKey}, c.creds.OldSignKeys...) {
		if err = notify.Verify(key, h, body, c.now(), NotificationTolerance); err == nil {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotification, err)
	}
	fields, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotification, err)
	}
	if fields.Get("merchant_id") != c.creds.MerchantID || fields.Get("account_id") != c.creds.AccountID {
		return nil, fmt.Errorf("%w: it is for account %s/%s", ErrNotification, fields.Get("merchant_id"), fields.Get("account_id"))
	}
	n := &Notification{Fields: fields}
	v := reflect.ValueOf(n).Elem()
	for i := range v.NumField() {
		if name := v.Type().Field(i).Tag.Get("form"); name != "-" {
			v.Field(i).SetString(fields.Get(name))
		}
	}
	return n, nil
}

// NotificationHandler is an http.Handler for a notify_url: it verifies
// each notification and gives it to handle. A notification that is not
// the gateway's is answered 401 and never reaches handle (refused, when
// not nil, hears why); when handle fails the answer is 500, so the gateway
// delivers it again later; else 200 acknowledges it. handle may see one
// notification more than once (a lost acknowledgement): use NotifyID to
// act once. The gateway waits 10 s for the answer: record the
// notification and do slow work afterwards.
func (c *Client) NotificationHandler(handle func(context.Context, *Notification) error, refused func(error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxNotification+1))
		if err != nil || len(body) > maxNotification {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		n, err := c.VerifyNotification(r.Header, body)
		if err != nil {
			if refused != nil {
				refused(err)
			}
			http.Error(w, "notification refused", http.StatusUnauthorized)
			return
		}
		if err := handle(r.Context(), n); err != nil {
			http.Error(w, "not handled, send it again", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
}
