package api

import (
	"encoding/xml"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/signing"
)

// respon is the XML answer of a direct payment (root element respon).
type respon struct {
	XMLName                  xml.Name    `xml:"respon"`
	MerchantID               string      `xml:"merchant_id"`
	AccountID                string      `xml:"account_id"`
	OrderNo                  string      `xml:"order_no"`
	Amount                   string      `xml:"amount"`
	Currency                 string      `xml:"currency"`
	TransactionID            string      `xml:"transaction_id"`
	Card                     string      `xml:"card"`
	OrderStatus              string      `xml:"order_status"`
	ResultInfo               string      `xml:"result_info"`
	ContractName             string      `xml:"contract_name"`
	RecurringID              string      `xml:"recurring_id"`
	RecurringDeductionPeriod string      `xml:"recurring_deduction_period"`
	RecurringDeductionTime   string      `xml:"recurring_deduction_time"`
	Note                     string      `xml:"note"`
	TokenID                  string      `xml:"token_id"`
	Connector                string      `xml:"connector"`
	ThreeDSResult            string      `xml:"threeds_result"`
	RiskAction               string      `xml:"risk_action"`
	RiskScore                string      `xml:"risk_score"`
	RiskReasons              riskReasons `xml:"risk_reasons"`
	// IssuerURL is where the shopper completes a 3-D Secure challenge.
	IssuerURL      string `xml:"issuer_url,omitempty"`
	EncryptionData string `xml:"encryption_data"`
}

type riskReasons struct {
	Reasons []riskReason `xml:"reason"`
}

type riskReason struct {
	Name   string `xml:"name"`
	Status string `xml:"status"`
}

// sign fills encryption_data with the payment-result recipe of DESIGN §3.
// Without a key (unknown account) the answer goes unsigned.
func (r *respon) sign(key string) {
	if key == "" {
		return
	}
	r.EncryptionData = signing.SignUpper(key, r.MerchantID, r.AccountID, r.TransactionID, r.OrderNo,
		r.Currency, r.Amount, r.OrderStatus, r.ResultInfo)
}

// failed is the answer to a request refused before any order existed. It
// echoes order_no, amount and currency only when they are well-formed, so a
// signed refusal never carries a value that could shift into a neighbouring
// field of another recipe.
func failed(merchantID, accountID, orderNo, amount, currency string, code codes.Code) *respon {
	if len(orderNo) > maxOrderNo || !printable(orderNo) {
		orderNo = ""
	}
	if !money.KnownCurrency(currency) {
		currency = ""
	}
	if _, err := money.Parse(amount, currency); currency == "" || err != nil {
		amount = ""
	}
	return &respon{
		MerchantID:  merchantID,
		AccountID:   accountID,
		OrderNo:     orderNo,
		Amount:      amount,
		Currency:    currency,
		OrderStatus: "0",
		ResultInfo:  code.String(),
		RiskScore:   "0",
	}
}

func renderXML(c *gin.Context, httpStatus int, r *respon, resultID string) {
	c.Set(ctxResultCode, resultID)
	body, err := xml.Marshal(r)
	if err != nil {
		c.String(http.StatusServiceUnavailable, codes.SystemError.String())
		return
	}
	c.Data(httpStatus, "application/xml; charset=utf-8", append([]byte(xml.Header), body...))
}
