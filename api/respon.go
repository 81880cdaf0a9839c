package api

import (
	"encoding/xml"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/order"
	"github.com/paygate/paygate/internal/domain/signing"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

// ResultHead is how both XML payment answers begin (interface: respon).
type ResultHead struct {
	MerchantID string `xml:"merchant_id"`
	AccountID  string `xml:"account_id"`
	OrderNo    string `xml:"order_no"`
	Amount     string `xml:"amount"`
	Currency   string `xml:"currency"`
}

// respon is the XML answer of a direct payment (root element respon).
type Respon struct {
	XMLName xml.Name `xml:"respon"`
	ResultHead
	TransactionID            string `xml:"transaction_id"`
	Card                     string `xml:"card"`
	OrderStatus              string `xml:"order_status"`
	ResultInfo               string `xml:"result_info"`
	ContractName             string `xml:"contract_name"`
	RecurringID              string `xml:"recurring_id"`
	RecurringDeductionPeriod string `xml:"recurring_deduction_period"`
	RecurringDeductionTime   string `xml:"recurring_deduction_time"`
	Note                     string `xml:"note"`
	// Custom is the merchant's free field, echoed beside note, the other
	// merchant data the answer carries (issue 29; not in the interface's
	// list of the answer's elements).
	Custom        string      `xml:"custom"`
	TokenID       string      `xml:"token_id"`
	Connector     string      `xml:"connector"`
	ThreeDSResult string      `xml:"threeds_result"`
	RiskAction    string      `xml:"risk_action"`
	RiskScore     string      `xml:"risk_score"`
	RiskReasons   RiskReasons `xml:"risk_reasons"`
	// IssuerURL is where the shopper completes a 3-D Secure challenge.
	IssuerURL      string `xml:"issuer_url,omitempty"`
	EncryptionData string `xml:"encryption_data"`
}

// RiskReasons are the risk rules' verdicts. In the XML answer each rule is
// a name and a status, both direct children of risk_reasons, one rule after
// the other, as the interface shows them (MarshalXML).
type RiskReasons struct {
	Reasons []RiskReason
}

// RiskReason is one rule's verdict.
type RiskReason struct {
	Name   string `xml:"name"`
	Status string `xml:"status"`
}

// MarshalXML writes the reasons as name and status pairs directly under
// risk_reasons.
func (r RiskReasons) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	if err := e.EncodeToken(start); err != nil {
		return err
	}
	for _, x := range r.Reasons {
		if err := e.EncodeElement(x.Name, xml.StartElement{Name: xml.Name{Local: "name"}}); err != nil {
			return err
		}
		if err := e.EncodeElement(x.Status, xml.StartElement{Name: xml.Name{Local: "status"}}); err != nil {
			return err
		}
	}
	return e.EncodeToken(start.End())
}

// UnmarshalXML reads name and status pairs back: each name starts a rule,
// the status after it is that rule's.
func (r *RiskReasons) UnmarshalXML(d *xml.Decoder, start xml.StartElement) error {
	for {
		tok, err := d.Token()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			var v string
			if err := d.DecodeElement(&v, &t); err != nil {
				return err
			}
			switch t.Name.Local {
			case "name":
				r.Reasons = append(r.Reasons, RiskReason{Name: v})
			case "status":
				if len(r.Reasons) == 0 {
					r.Reasons = append(r.Reasons, RiskReason{})
				}
				r.Reasons[len(r.Reasons)-1].Status = v
			}
		case xml.EndElement:
			return nil
		}
	}
}

// paymentResult is what the answer's encryption_data covers.
func (r *Respon) PaymentResult() signing.PaymentResult {
	return signing.PaymentResult{
		MerchantID: r.MerchantID, AccountID: r.AccountID, TransactionID: r.TransactionID, OrderNo: r.OrderNo,
		Currency: r.Currency, Amount: r.Amount, OrderStatus: r.OrderStatus, ResultInfo: r.ResultInfo,
	}
}

// Sign fills encryption_data with the payment-result recipe of docs/design.md §3,
// under the key the request proved. Without one the answer goes unsigned:
// nothing is signed for a caller who has not proved the key.
func (r *Respon) Sign(key string) {
	if key == "" {
		return
	}
	r.EncryptionData = signing.SignPaymentResult(key, r.PaymentResult())
}

// failed is the answer to a request refused before any order existed. It
// echoes order_no, amount and currency only when they are well-formed, so a
// signed refusal never carries a value that could shift into a neighbouring
// field of another recipe.
func FailedRespon(merchantID, accountID, orderNo, amount, currency string, code codes.Code) *Respon {
	if len(orderNo) > order.MaxOrderNo || !order.Printable(orderNo) {
		orderNo = ""
	}
	if !money.KnownCurrency(currency) {
		currency = ""
	}
	if _, err := money.Parse(amount, currency); currency == "" || err != nil {
		amount = ""
	}
	return &Respon{
		ResultHead:  ResultHead{MerchantID: merchantID, AccountID: accountID, OrderNo: orderNo, Amount: amount, Currency: currency},
		OrderStatus: "0",
		ResultInfo:  code.String(),
		RiskScore:   "0",
	}
}

// RenderXML writes an XML answer (a respon or an APMRespon) and leaves its
// result code for the request log.
func RenderXML(c *gin.Context, httpStatus int, answer any, resultID string) {
	c.Set(ContextResultCode, resultID)
	body, err := xml.Marshal(answer)
	if err != nil {
		c.String(http.StatusServiceUnavailable, codes.SystemError.String())
		return
	}
	c.Data(httpStatus, "application/xml; charset=utf-8", append([]byte(xml.Header), body...))
}

// ResultRespon is the answer of a payment the order's workflow has just
// given its result for.
func ResultRespon(res workflows.PaymentResult) *Respon {
	r := &Respon{
		ResultHead: ResultHead{MerchantID: res.MerchantID, AccountID: res.AccountID, OrderNo: res.OrderNo,
			Amount: money.FromMinor(res.Amount, res.Currency).String(), Currency: res.Currency},
		TransactionID: res.TransactionID,
		Card:          res.CardMasked,
		OrderStatus:   res.OrderStatus.String(),
		ResultInfo:    res.Code().String(),
		Connector:     res.Connector,
		ThreeDSResult: res.ThreeDSResult,
		IssuerURL:     res.IssuerURL,
		RiskAction:    res.Risk.Action,
		RiskScore:     strconv.Itoa(res.Risk.Score),
		TokenID:       res.TokenID,
	}
	r.setRecurring(res.Recurring)
	for _, reason := range res.Risk.Reasons {
		r.RiskReasons.Reasons = append(r.RiskReasons.Reasons, RiskReason{Name: reason.Name, Status: reason.Status})
	}
	return r
}

// OrderRespon is the answer of a payment from its record, for a repeated
// request whose workflow has closed.
func OrderRespon(o *models.Order) *Respon {
	r := &Respon{
		ResultHead: ResultHead{MerchantID: o.MerchantID, AccountID: o.AccountID, OrderNo: o.OrderNo,
			Amount: money.FromMinor(o.Amount, o.Currency).String(), Currency: o.Currency},
		TransactionID: o.TransactionID,
		Card:          o.CardMasked,
		OrderStatus:   strconv.Itoa(int(o.OrderStatus)),
		ResultInfo:    codes.Code{ID: o.ResultCode, Message: o.ResultMessage}.String(),
		Note:          o.Details.Note,
		Custom:        o.Details.Custom,
		Connector:     o.Connector,
		ThreeDSResult: o.ThreeDSResult,
		RiskAction:    o.RiskAction,
		RiskScore:     strconv.Itoa(o.RiskScore),
		TokenID:       o.TokenID,
	}
	for _, reason := range o.RiskReasons {
		r.RiskReasons.Reasons = append(r.RiskReasons.Reasons, RiskReason{Name: reason.Name, Status: reason.Status})
	}
	return r
}

// APMRespon is the XML answer of an APM payment: where to send the shopper.
type APMRespon struct {
	XMLName xml.Name `xml:"respon"`
	ResultHead
	IssuerURL      string `xml:"issuer_url"`
	TransactionID  string `xml:"transaction_id"`
	OrderStatus    string `xml:"order_status"`
	ResultInfo     string `xml:"result_info"`
	EncryptionData string `xml:"encryption_data"`
}

// APMShape is the signed payment result r as an APM payment answers it.
func (r *Respon) APMShape() *APMRespon {
	return &APMRespon{
		ResultHead: r.ResultHead, IssuerURL: r.IssuerURL, TransactionID: r.TransactionID,
		OrderStatus: r.OrderStatus, ResultInfo: r.ResultInfo, EncryptionData: r.EncryptionData,
	}
}
