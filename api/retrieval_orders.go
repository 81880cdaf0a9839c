package api

import (
	"context"
	"fmt"
	"strconv"

	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/models"
)

// Query results of one entry: found, or named but not found.
const (
	queryFound    = "1"
	queryNotFound = "0"
)

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

// toQueriedOrder is an order as the query answers it.
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
		PaymentStatus:     strconv.Itoa(int(o.PaymentStatus)),
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

// AntifraudProvider names our own risk engine in queried orders.
const AntifraudProvider = "paygate-risk"

// queryOrders looks up the orders sel names, or the page of its window
// after the cursor, with their latest notifications, and lists them as the
// query answers them; next is the cursor of the next page, if any.
func (s *Server) queryOrders(ctx context.Context, req *retrievalRequest, sel querySelection) ([]queriedOrder, string, error) {
	var orders []models.Order
	var next string
	var err error
	if sel.named() {
		orders, err = s.Records.FindOrders(ctx, req.MerchantID, req.AccountID, sel.orderNos, sel.trades)
	} else {
		orders, err = s.Records.FindOrdersBetween(ctx, req.MerchantID, req.AccountID, sel.from, sel.to, req.Cursor, maxQueryOrders+1)
		if len(orders) > maxQueryOrders {
			orders = orders[:maxQueryOrders]
			next = orders[len(orders)-1].TransactionID
		}
	}
	if err != nil {
		return nil, "", fmt.Errorf("find orders: %w", err)
	}
	var latest map[string]models.Notification
	if len(orders) > 0 {
		txIDs := make([]string, len(orders))
		for i := range orders {
			txIDs[i] = orders[i].TransactionID
		}
		if latest, err = s.Records.LatestNotifications(ctx, txIDs); err != nil {
			return nil, "", fmt.Errorf("find notifications: %w", err)
		}
	}
	list := queriedList(orders, latest, sel)
	if err := s.addSubscriptionResults(ctx, orders, list); err != nil {
		return nil, "", err
	}
	return list, next, nil
}

// addSubscriptionResults fills the subscription_result of the orders that
// belong to a subscription (its first payment or one of its charges) from
// the subscription's record. list begins with orders, in their order.
func (s *Server) addSubscriptionResults(ctx context.Context, orders []models.Order, list []queriedOrder) error {
	var ids []string
	for i := range orders {
		if orders[i].RecurringID != "" {
			ids = append(ids, orders[i].RecurringID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	subs, err := s.Records.FindSubscriptionsByID(ctx, ids)
	if err != nil {
		return fmt.Errorf("find subscriptions: %w", err)
	}
	for i := range orders {
		if sub, ok := subs[orders[i].RecurringID]; ok {
			list[i].SubscriptionResult = subscriptionResultOf(&sub)
		}
	}
	return nil
}

// queriedList lists the orders found and then, so that a merchant can tell
// a missing order from a dropped one, each order named and not found.
func queriedList(orders []models.Order, latest map[string]models.Notification, sel querySelection) []queriedOrder {
	list := make([]queriedOrder, 0, len(orders))
	seenNo, seenTrade := map[string]bool{}, map[string]bool{}
	for i := range orders {
		q := toQueriedOrder(&orders[i])
		if n, ok := latest[orders[i].TransactionID]; ok {
			q.NotifyStatus, q.NotifyAttempts, q.NotifyID = string(n.Status), n.Attempts, n.NotifyID
		}
		list = append(list, q)
		seenNo[orders[i].OrderNo], seenTrade[orders[i].TransactionID] = true, true
	}
	for _, no := range sel.orderNos {
		if !seenNo[no] {
			list = append(list, queriedOrder{OrderNo: no, QueryResult: queryNotFound, ResultInfo: codes.OrderNotFound.String(), FraudCheckResult: []fraudCheck{}})
		}
	}
	for _, t := range sel.trades {
		if !seenTrade[t] {
			list = append(list, queriedOrder{TransactionID: t, QueryResult: queryNotFound, ResultInfo: codes.OrderNotFound.String(), FraudCheckResult: []fraudCheck{}})
		}
	}
	return list
}
