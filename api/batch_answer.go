package api

import (
	"encoding/json"

	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/signing"
)

// Entry statuses as the interface carries them (docs/design.md §4).
const (
	EntryDone    = "1"
	EntryRefused = "0"
	EntryPending = "-1"
)

// batchResponse is the answer of a batch endpoint: the request-level result
// and one answer per entry, in the request's order, under the array's name.
type batchResponse struct {
	MerchantID     string
	AccountID      string
	ReturnStatus   string
	ReturnMessage  string
	EncryptionData string
	array          string
	answers        []any
	transactionIDs []string
}

// sign fills encryption_data with the batch-response recipe of docs/design.md §3.
// Without a key (account unknown) the answer goes unsigned.
func (r *batchResponse) sign(key string) {
	if key == "" {
		return
	}
	values := append([]string{r.MerchantID, r.AccountID, r.ReturnStatus}, r.transactionIDs...)
	r.EncryptionData = signing.SignUpper(key, values...)
}

// renderBatch signs resp with key (none: unsigned) and writes it.
func renderBatch(c *gin.Context, httpStatus int, resp batchResponse, key, resultID string) {
	resp.sign(key)
	c.Set(ContextResultCode, resultID)
	c.JSON(httpStatus, resp)
}

// MarshalJSON writes the fields in the interface's order, the array last
// under its operation's name.
func (r batchResponse) MarshalJSON() ([]byte, error) {
	head, err := json.Marshal(struct {
		MerchantID     string `json:"merchant_id"`
		AccountID      string `json:"account_id"`
		ReturnStatus   string `json:"return_status"`
		ReturnMessage  string `json:"return_message"`
		EncryptionData string `json:"encryption_data"`
	}{r.MerchantID, r.AccountID, r.ReturnStatus, r.ReturnMessage, r.EncryptionData})
	if err != nil {
		return nil, err
	}
	answers := r.answers
	if answers == nil {
		answers = []any{}
	}
	list, err := json.Marshal(answers)
	if err != nil {
		return nil, err
	}
	name, err := json.Marshal(r.array)
	if err != nil {
		return nil, err
	}
	out := append(head[:len(head)-1], ',')
	out = append(out, name...)
	out = append(out, ':')
	out = append(out, list...)
	return append(out, '}'), nil
}

// The answers of one entry, per operation (interface, batch order entries).
type captureAnswer struct {
	entryHead
	CaptureAmount string `json:"capture_amount,omitempty"`
	CaptureStatus string `json:"capture_status"`
	ErrorMessage  string `json:"error_message"`
}

type reviewAnswer struct {
	entryHead
	ReviewFlag   string `json:"review_flag"`
	ReviewStatus string `json:"review_status"`
	ErrorMessage string `json:"error_message"`
}

type cancelAnswer struct {
	entryHead
	CancelStatus string `json:"cancel_status"`
	ErrorMessage string `json:"error_message"`
}

type refundAnswer struct {
	entryHead
	RefundAmount      string `json:"refund_amount"`
	RefundReason      string `json:"refund_reason"`
	RefundStatus      string `json:"refund_status"`
	RefundMessage     string `json:"refund_message"`
	RefundReference   string `json:"refund_reference"`
	RefundReferenceID string `json:"refund_reference_id"`
}

// entryHead is how every entry's answer begins: the entry as sent.
type entryHead struct {
	TransactionID string `json:"transaction_id"`
	OrderNo       string `json:"order_no"`
	Currency      string `json:"currency"`
	Amount        string `json:"amount"`
}

// entryOutcome is what happened to one entry.
type entryOutcome struct {
	status            string     // entryDone, entryRefused or entryPending
	code              codes.Code // why, for a refused entry; the result otherwise
	refundReference   string
	refundReferenceID string
}

func refusedEntry(code codes.Code) entryOutcome {
	return entryOutcome{status: EntryRefused, code: code}
}

// errorMessage is the entry's error_message: empty unless it was refused.
func (o entryOutcome) errorMessage() string {
	if o.status != EntryRefused {
		return ""
	}
	return o.code.String()
}

// answer renders an entry's outcome for op, echoing what the merchant sent.
func (op batchOp) answer(e *batchEntry, o entryOutcome) any {
	head := entryHead{TransactionID: e.TransactionID.String(), OrderNo: e.OrderNo.String(),
		Currency: e.Currency.String(), Amount: e.Amount.String()}
	switch op.kind {
	case batchReview:
		return reviewAnswer{entryHead: head, ReviewFlag: e.ReviewFlag.String(), ReviewStatus: o.status,
			ErrorMessage: o.errorMessage()}
	case batchCancel:
		return cancelAnswer{entryHead: head, CancelStatus: o.status, ErrorMessage: o.errorMessage()}
	case batchRefund:
		return refundAnswer{entryHead: head, RefundAmount: e.RefundAmount.String(),
			RefundReason: e.RefundReason.String(), RefundStatus: o.status, RefundMessage: o.code.String(),
			RefundReference: o.refundReference, RefundReferenceID: o.refundReferenceID}
	default:
		return captureAnswer{entryHead: head, CaptureAmount: e.CaptureAmount.String(), CaptureStatus: o.status,
			ErrorMessage: o.errorMessage()}
	}
}
