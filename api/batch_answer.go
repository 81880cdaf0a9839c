package api

import (
	"encoding/json"

	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/internal/domain/signing"
)

// Entry statuses as the interface carries them (docs/design.md §4).
const (
	EntryDone    = "1"
	EntryRefused = "0"
	EntryPending = "-1"
)

// BatchAnswer is the answer of a batch endpoint (api/operations): the
// request-level result and one answer per entry, in the request's order,
// under the array's name.
type BatchAnswer struct {
	MerchantID     string
	AccountID      string
	ReturnStatus   string
	ReturnMessage  string
	EncryptionData string
	// Array names the request's and the answer's array (capture_orders...).
	Array string
	// Entries are the entries' answers; TransactionIDs the ids they carry,
	// which the answer's signature covers.
	Entries        []any
	TransactionIDs []string
}

// sign fills encryption_data with the batch-response recipe of docs/design.md §3.
// Without a key (account unknown) the answer goes unsigned.
func (r *BatchAnswer) sign(key string) {
	if key == "" {
		return
	}
	values := append([]string{r.MerchantID, r.AccountID, r.ReturnStatus}, r.TransactionIDs...)
	r.EncryptionData = signing.SignUpper(key, values...)
}

// RenderBatch signs resp with key (none: unsigned) and writes it.
func RenderBatch(c *gin.Context, httpStatus int, resp BatchAnswer, key, resultID string) {
	resp.sign(key)
	c.Set(ContextResultCode, resultID)
	c.JSON(httpStatus, resp)
}

// MarshalJSON writes the fields in the interface's order, the array last
// under its operation's name.
func (r BatchAnswer) MarshalJSON() ([]byte, error) {
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
	answers := r.Entries
	if answers == nil {
		answers = []any{}
	}
	list, err := json.Marshal(answers)
	if err != nil {
		return nil, err
	}
	name, err := json.Marshal(r.Array)
	if err != nil {
		return nil, err
	}
	out := append(head[:len(head)-1], ',')
	out = append(out, name...)
	out = append(out, ':')
	out = append(out, list...)
	return append(out, '}'), nil
}
