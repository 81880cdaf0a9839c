package api

import (
	"errors"
	"net/http"

	"github.com/paygate/paygate/api/apidoc"

	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/domain/codes"
)

// Every merchant operation answers in a shape of its own: the XML respon of
// /v1/authorise, the batch JSON, the two query JSONs and the shopper's page
// of /v1/checkout. A refusal is the same in all of them (an HTTP status, a
// result code, what the request said it was and, once the caller proved the
// key, a signature), so one mapper turns what went wrong into the status and
// code, and each AnswerFormat renders them in its shape.

// Refusal is a refused request's answer before it is rendered.
type Refusal struct {
	HTTPStatus int
	Code       codes.Code
	Echo       Echo
	// Key is the Key the caller proved; "" leaves the answer unsigned, so
	// nothing is signed for a caller who has proved nothing.
	Key string
}

// Echo is what a refusal repeats of the request: its ids and, where the
// format has them, order_no, amount and currency (the XML respon, which
// drops any that are not well-formed: see failed) or the page's language.
type Echo struct {
	MerchantID, AccountID     string
	OrderNo, Amount, Currency string
	Lang                      string
}

// undecoded is the echo of a request whose body could not be read or
// decoded: nothing of it, and its page in English.
var undecoded = Echo{Lang: "en"}

// statusAndCode is an answer's HTTP status and result code.
type statusAndCode struct {
	httpStatus int
	code       codes.Code
}

// AnswerFormat is the shape of one operation's answers.
type AnswerFormat struct {
	Render func(s *Server, c *gin.Context, r Refusal)

	// The formats have always differed in a few answers; these keep each
	// answer byte for byte as it was. Left zero, a format answers as most
	// do (see answerTo).

	// systemErrorStatus is the HTTP status of a system error: 503, but the
	// XML respon carries it as a result code under 200.
	systemErrorStatus int
	// unreadable answers a body that could not be read (one too large is
	// always 413 RequestTooLarge): 400 MalformedRequest naming it.
	unreadable *statusAndCode
	// idsMissing answers a request without merchant_id or account_id:
	// MissingField naming the first one missing.
	idsMissing *codes.Code
	// echoesDecodeFailure: a body that does not decode is answered with
	// the ids that decoded before the failure, untrimmed, rather than none.
	echoesDecodeFailure bool

	// docMedia and docRefusal describe the refusals for the API
	// reference: their media type and a value of their type.
	docMedia   string
	docRefusal any
}

// unreadableBody is how most formats answer a body that could not be read.
var unreadableBody = statusAndCode{http.StatusBadRequest, codes.MalformedRequest.With("body could not be read")}

// missingIDError is a request without merchant_id or account_id; field is
// the first one missing.
type missingIDError struct{ field string }

func (e *missingIDError) Error() string { return "missing " + e.field }

// missingIDs is the missingIDError of a request whose merchant_id or
// account_id is empty; nil when both are there.
func missingIDs(merchantID, accountID string) error {
	switch {
	case merchantID == "":
		return &missingIDError{field: "merchant_id"}
	case accountID == "":
		return &missingIDError{field: "account_id"}
	}
	return nil
}

// refusedError refuses a request with a result code.
type refusedError struct{ code codes.Code }

func (e *refusedError) Error() string { return "refused: " + e.code.String() }

// refused is the error that answers code.
func refused(code codes.Code) error { return &refusedError{code: code} }

// answerTo maps what refused a request to the HTTP status and result code
// f answers with: a refused code, an error of the authenticated-request
// step, an unknown account, or anything else, which is a system error.
func (f AnswerFormat) answerTo(err error) (int, codes.Code) {
	var r *refusedError
	var missing *missingIDError
	switch {
	case errors.As(err, &r) && r.code.Is(codes.SystemError):
		return f.systemError(), r.code
	case errors.As(err, &r):
		return http.StatusOK, r.code
	case errors.Is(err, errTooLarge):
		return http.StatusRequestEntityTooLarge, codes.RequestTooLarge
	case errors.Is(err, errBodyUnreadable):
		u := unreadableBody
		if f.unreadable != nil {
			u = *f.unreadable
		}
		return u.httpStatus, u.code
	case errors.As(err, &missing):
		if f.idsMissing != nil {
			return http.StatusOK, *f.idsMissing
		}
		return http.StatusOK, codes.MissingField.With(missing.field)
	case errors.Is(err, merchant.ErrUnknownAccount):
		return http.StatusOK, codes.UnknownMerchant
	default:
		return f.systemError(), codes.SystemError
	}
}

// systemError is the HTTP status f answers a system error with.
func (f AnswerFormat) systemError() int {
	if f.systemErrorStatus == 0 {
		return http.StatusServiceUnavailable
	}
	return f.systemErrorStatus
}

// answer maps err and renders it, echoing e and signed with key.
func (f AnswerFormat) answer(s *Server, c *gin.Context, e Echo, key string, err error) {
	httpStatus, code := f.answerTo(err)
	f.Render(s, c, Refusal{HTTPStatus: httpStatus, Code: code, Echo: e, Key: key})
}

// The formats.
var (
	// XMLAnswers is the respon of /v1/authorise, signed with the
	// payment-result recipe.
	XMLAnswers = AnswerFormat{Render: renderXMLRefusal, systemErrorStatus: http.StatusOK, docMedia: apidoc.XML, docRefusal: Respon{}}
	// QueryAnswers is the JSON of /v1/retrievalTrans; never signed.
	QueryAnswers = AnswerFormat{Render: renderQueryRefusal, echoesDecodeFailure: true,
		unreadable: &statusAndCode{http.StatusBadRequest, codes.MalformedRequest}, docMedia: apidoc.JSON, docRefusal: QueryAnswer{}}
	// RefundQueryAnswers is the JSON of /v1/retrievalRefund; never signed.
	RefundQueryAnswers = AnswerFormat{Render: renderRefundQueryRefusal, docMedia: apidoc.JSON, docRefusal: RefundQueryAnswer{}}
	// PageAnswers is the shopper's page of /v1/checkout; never signed.
	PageAnswers = AnswerFormat{Render: renderPageRefusal,
		unreadable: &statusAndCode{http.StatusRequestEntityTooLarge, codes.RequestTooLarge},
		idsMissing: new(codes.MissingField.With("merchant_id, account_id")), docMedia: apidoc.HTML}
)

// BatchAnswers is the JSON of the batch operation whose array is named
// array, signed with the batch-response recipe.
func BatchAnswers(array string) AnswerFormat {
	return AnswerFormat{Render: func(_ *Server, c *gin.Context, r Refusal) {
		RenderBatch(c, r.HTTPStatus, BatchAnswer{
			MerchantID: r.Echo.MerchantID, AccountID: r.Echo.AccountID,
			ReturnStatus: "0", ReturnMessage: r.Code.String(), Array: array,
		}, r.Key, r.Code.ID)
	}, docMedia: apidoc.JSON}
}

func renderXMLRefusal(_ *Server, c *gin.Context, r Refusal) {
	resp := FailedRespon(r.Echo.MerchantID, r.Echo.AccountID, r.Echo.OrderNo, r.Echo.Amount, r.Echo.Currency, r.Code)
	resp.Sign(r.Key)
	RenderXML(c, r.HTTPStatus, resp, r.Code.ID)
}

func renderQueryRefusal(_ *Server, c *gin.Context, r Refusal) {
	c.Set(ContextResultCode, r.Code.ID)
	c.JSON(r.HTTPStatus, QueryAnswer{
		MerchantID: r.Echo.MerchantID, AccountID: r.Echo.AccountID,
		ReturnStatus: "0", ReturnMessage: r.Code.String(), OrdersList: []QueriedOrder{},
	})
}

func renderRefundQueryRefusal(_ *Server, c *gin.Context, r Refusal) {
	c.Set(ContextResultCode, r.Code.ID)
	c.JSON(r.HTTPStatus, RefundQueryAnswer{
		MerchantID: r.Echo.MerchantID, AccountID: r.Echo.AccountID,
		ReturnStatus: "0", ReturnMessage: r.Code.String(), RefundList: []QueriedRefund{},
	})
}

func renderPageRefusal(s *Server, c *gin.Context, r Refusal) {
	s.ShopperMessage(c, r.HTTPStatus, r.Echo.Lang, "payment_failed", r.Code)
}

// JSONRefusal is the JSON of a refused payout, payout query, token or
// subscription request: the ids and the result code. It is never signed.
type JSONRefusal struct {
	MerchantID     string `json:"merchant_id"`
	AccountID      string `json:"account_id"`
	ResultInfo     string `json:"result_info"`
	EncryptionData string `json:"encryption_data"`
}

// JSONAnswers is the JSON of the refusals of /v1/payout, /v1/payout/query,
// /v1/token/delete and /v1/cancelsubscription.
var JSONAnswers = AnswerFormat{Render: func(_ *Server, c *gin.Context, r Refusal) {
	c.Set(ContextResultCode, r.Code.ID)
	c.JSON(r.HTTPStatus, JSONRefusal{MerchantID: r.Echo.MerchantID, AccountID: r.Echo.AccountID, ResultInfo: r.Code.String()})
}, docMedia: apidoc.JSON, docRefusal: JSONRefusal{}}
