package api

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/models"
)

// maxQueryOrders is the most orders one query may name or return.
const maxQueryOrders = 100

// AntifraudProvider names our own risk engine in queried orders.
const AntifraudProvider = "paygate-risk"

type retrievalRequest struct {
	MerchantID     string `json:"merchant_id"`
	AccountID      string `json:"account_id"`
	EncryptionData string `json:"encryption_data"`
	Orders         string `json:"orders"`
	Trades         string `json:"trades"`
	StartTime      string `json:"start_time"`
	EndTime        string `json:"end_time"`
	Cursor         string `json:"cursor"`
}

type retrievalResponse struct {
	MerchantID    string         `json:"merchant_id"`
	AccountID     string         `json:"account_id"`
	ReturnStatus  string         `json:"return_status"`
	ReturnMessage string         `json:"return_message"`
	OrdersList    []queriedOrder `json:"orders_list"`
	NextCursor    string         `json:"next_cursor,omitempty"`
}

type queriedOrder struct {
	Amount              string              `json:"amount"`
	Currency            string              `json:"currency"`
	OrderNo             string              `json:"order_no"`
	TransactionID       string              `json:"transaction_id"`
	ReferenceNo         string              `json:"reference_no"`
	Website             string              `json:"website"`
	DeliveryInformation deliveryInformation `json:"delivery_information"`
	AntifraudProvider   string              `json:"antifraud_provider"`
	FraudCheckResult    []fraudCheck        `json:"fraud_check_result"`
	Is3DS               string              `json:"is3ds"`
	PaymentStatus       string              `json:"payment_status"`
	QueryResult         string              `json:"query_result"`
	ResultInfo          string              `json:"result_info"`
	Card                string              `json:"card"`
	ShopperEmail        string              `json:"shopper_email"`
	ShopperPhone        string              `json:"shopper_phone"`
	SubscriptionResult  subscriptionResult  `json:"subscription_result"`
	TransactionDate     string              `json:"transaction_date"`
	// The order's latest notification: pending, delivered or failed, ""
	// when it has none.
	NotifyStatus   string `json:"notify_status"`
	NotifyAttempts int    `json:"notify_attempts"`
	NotifyID       string `json:"notify_id"`
}

type deliveryInformation struct {
	DeliveryAddress    string `json:"delivery_address"`
	DeliveryCity       string `json:"delivery_city"`
	DeliveryCountry    string `json:"delivery_country"`
	DeliveryFirstName  string `json:"delivery_firstname"`
	DeliveryLastName   string `json:"delivery_lastname"`
	DeliveryPostalCode string `json:"delivery_postal_code"`
	DeliveryState      string `json:"delivery_state"`
}

type fraudCheck struct {
	CheckItems string `json:"check_items"`
	Status     string `json:"status"`
}

type subscriptionResult struct {
	ContractName             string `json:"contract_name"`
	RecurringDeductionPeriod string `json:"recurring_deduction_period"`
	RecurringDeductionTime   string `json:"recurring_deduction_time"`
	RecurringID              string `json:"recurring_id"`
	RecurringStatus          string `json:"recurring_status"`
}

// Query results of one entry: found, or named but not found.
const (
	queryFound    = "1"
	queryNotFound = "0"
)

func (s *Server) retrievalTrans(c *gin.Context) {
	ctx := c.Request.Context()
	var req retrievalRequest
	refuse := func(httpStatus int, code codes.Code) {
		c.Set(ctxResultCode, code.ID)
		c.JSON(httpStatus, retrievalResponse{
			MerchantID: req.MerchantID, AccountID: req.AccountID,
			ReturnStatus: "0", ReturnMessage: code.String(), OrdersList: []queriedOrder{},
		})
	}
	body, err := readBody(c.Request.Body)
	if errors.Is(err, errTooLarge) {
		refuse(http.StatusRequestEntityTooLarge, codes.RequestTooLarge)
		return
	}
	if err != nil {
		refuse(http.StatusBadRequest, codes.MalformedRequest)
		return
	}
	if code := decodeBody(body, &req); code != nil {
		refuse(http.StatusOK, *code)
		return
	}
	req.MerchantID, req.AccountID = strings.TrimSpace(req.MerchantID), strings.TrimSpace(req.AccountID)
	if req.MerchantID == "" || req.AccountID == "" {
		missing := "account_id"
		if req.MerchantID == "" {
			missing = "merchant_id"
		}
		refuse(http.StatusOK, codes.MissingField.With(missing))
		return
	}
	account, err := s.Accounts.Load(ctx, req.MerchantID, req.AccountID)
	if errors.Is(err, merchant.ErrUnknownAccount) {
		refuse(http.StatusOK, codes.UnknownMerchant)
		return
	}
	if err != nil {
		s.Logger.Error("load account", "account_id", req.AccountID, "error", err)
		refuse(http.StatusServiceUnavailable, codes.SystemError)
		return
	}
	if _, ok := s.authenticate(c, account, strings.TrimSpace(req.EncryptionData), req.MerchantID, req.AccountID); !ok {
		refuse(http.StatusOK, codes.BadSignature)
		return
	}
	if !account.AllowsQueryFrom(c.ClientIP()) {
		refuse(http.StatusOK, codes.IPNotAllowed.With(c.ClientIP()))
		return
	}
	orderNos, trades := splitList(req.Orders), splitList(req.Trades)
	var orders []models.Order
	var next string
	switch {
	case len(orderNos)+len(trades) > maxQueryOrders:
		refuse(http.StatusOK, codes.TooManyOrders.With("at most 100 orders and trades together"))
		return
	case len(orderNos)+len(trades) > 0:
		orders, err = models.FindOrders(ctx, s.DB, req.MerchantID, req.AccountID, orderNos, trades)
	default:
		from, to, ok := parseWindow(req.StartTime, req.EndTime)
		if !ok {
			refuse(http.StatusOK, codes.MissingField.With("orders, trades, or start_time and end_time (yyyyMMddHHmmss)"))
			return
		}
		orders, err = models.FindOrdersBetween(ctx, s.DB, req.MerchantID, req.AccountID, from, to, req.Cursor, maxQueryOrders+1)
		if len(orders) > maxQueryOrders {
			orders = orders[:maxQueryOrders]
			next = orders[len(orders)-1].TransactionID
		}
	}
	if err != nil {
		s.Logger.Error("query orders", "account_id", req.AccountID, "error", err)
		refuse(http.StatusServiceUnavailable, codes.SystemError)
		return
	}
	var latest map[string]models.Notification
	if len(orders) > 0 {
		txIDs := make([]string, len(orders))
		for i := range orders {
			txIDs[i] = orders[i].TransactionID
		}
		latest, err = models.LatestNotifications(ctx, s.DB, txIDs)
		if err != nil {
			s.Logger.Error("query notifications", "account_id", req.AccountID, "error", err)
			refuse(http.StatusServiceUnavailable, codes.SystemError)
			return
		}
	}
	list := make([]queriedOrder, 0, len(orders))
	seenNo, seenTrade := map[string]bool{}, map[string]bool{}
	for i := range orders {
		q := toQueriedOrder(&orders[i])
		if n, ok := latest[orders[i].TransactionID]; ok {
			q.NotifyStatus, q.NotifyAttempts, q.NotifyID = n.Status, n.Attempts, n.NotifyID
		}
		list = append(list, q)
		seenNo[orders[i].OrderNo], seenTrade[orders[i].TransactionID] = true, true
	}
	// Name what was asked for and not found, so a merchant can tell a
	// missing order from a dropped one.
	for _, no := range orderNos {
		if !seenNo[no] {
			list = append(list, queriedOrder{OrderNo: no, QueryResult: queryNotFound, ResultInfo: codes.OrderNotFound.String(), FraudCheckResult: []fraudCheck{}})
		}
	}
	for _, t := range trades {
		if !seenTrade[t] {
			list = append(list, queriedOrder{TransactionID: t, QueryResult: queryNotFound, ResultInfo: codes.OrderNotFound.String(), FraudCheckResult: []fraudCheck{}})
		}
	}
	c.Set(ctxResultCode, codes.OK.ID)
	c.JSON(http.StatusOK, retrievalResponse{
		MerchantID: req.MerchantID, AccountID: req.AccountID,
		ReturnStatus: "1", ReturnMessage: "OK", OrdersList: list, NextCursor: next,
	})
}

func toQueriedOrder(o *models.Order) queriedOrder {
	d := &o.Details
	q := queriedOrder{
		Amount:        money.FromMinor(o.Amount, o.Currency).String(),
		Currency:      o.Currency,
		OrderNo:       o.OrderNo,
		TransactionID: o.TransactionID,
		ReferenceNo:   o.ConnectorRef,
		Website:       d.Website,
		DeliveryInformation: deliveryInformation{
			DeliveryAddress:    d.DeliveryAddress,
			DeliveryCity:       d.DeliveryCity,
			DeliveryCountry:    d.DeliveryCountry,
			DeliveryFirstName:  d.DeliveryFirstName,
			DeliveryLastName:   d.DeliveryLastName,
			DeliveryPostalCode: d.DeliveryPostalCode.String(),
			DeliveryState:      d.DeliveryState,
		},
		AntifraudProvider: AntifraudProvider,
		FraudCheckResult:  []fraudCheck{},
		Is3DS:             "0",
		PaymentStatus:     strconv.Itoa(o.PaymentStatus),
		QueryResult:       queryFound,
		ResultInfo:        codes.Code{ID: o.ResultCode, Message: o.ResultMessage}.String(),
		Card:              o.CardMasked,
		ShopperEmail:      d.ShopperEmail,
		ShopperPhone:      d.ShopperPhone,
		TransactionDate:   o.CreatedAt.UTC().Format("20060102150405"),
	}
	if o.ResultCode == "" {
		q.ResultInfo = ""
	}
	if o.Is3DS {
		q.Is3DS = "1"
	}
	for _, r := range o.RiskReasons {
		q.FraudCheckResult = append(q.FraudCheckResult, fraudCheck{CheckItems: r.Name, Status: r.Status})
	}
	if sub := d.Subscription; sub != nil {
		q.SubscriptionResult.ContractName = sub.ContractName
	}
	return q
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if p := strings.TrimSpace(part); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// parseWindow reads the 14-digit UTC times of a paged query.
func parseWindow(start, end string) (time.Time, time.Time, bool) {
	from, err1 := time.Parse("20060102150405", strings.TrimSpace(start))
	to, err2 := time.Parse("20060102150405", strings.TrimSpace(end))
	if err1 != nil || err2 != nil || !from.Before(to) {
		return time.Time{}, time.Time{}, false
	}
	return from, to, true
}
