package queries

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/models"
)

// Query results of one entry: found, or named but not found.
const (
	queryFound    = "1"
	queryNotFound = "0"
)

// toQueriedOrder is an order as the query answers it.
func toQueriedOrder(o *models.Order) api.QueriedOrder {
	d := &o.Details
	q := api.QueriedOrder{
		Amount:        money.FromMinor(o.Amount, o.Currency).String(),
		Currency:      o.Currency,
		OrderNo:       o.OrderNo,
		TransactionID: o.TransactionID,
		ReferenceNo:   o.ConnectorRef,
		Website:       d.Website,
		DeliveryInformation: api.DeliveryInformation{
			DeliveryAddress:    d.DeliveryAddress,
			DeliveryCity:       d.DeliveryCity,
			DeliveryCountry:    d.DeliveryCountry,
			DeliveryFirstName:  d.DeliveryFirstName,
			DeliveryLastName:   d.DeliveryLastName,
			DeliveryPostalCode: d.DeliveryPostalCode.String(),
			DeliveryState:      d.DeliveryState,
		},
		AntifraudProvider: AntifraudProvider,
		FraudCheckResult:  []api.FraudCheck{},
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
		q.FraudCheckResult = append(q.FraudCheckResult, api.FraudCheck{CheckItems: r.Name, Status: r.Status})
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
func (h *Handler) queryOrders(ctx context.Context, req *retrievalRequest, sel querySelection) ([]api.QueriedOrder, string, error) {
	var orders []models.Order
	var next string
	var err error
	switch {
	case sel.named():
		orders, err = h.Gate.Records.FindOrders(ctx, req.MerchantID, req.AccountID, sel.orderNos, sel.trades)
	case sel.changes:
		orders, err = h.Gate.Records.FindOrdersChanged(ctx, req.MerchantID, req.AccountID, sel.after, maxQueryOrders)
		// The cursor always says where to read on from: after the last
		// order answered, or where the merchant was when nothing changed.
		switch {
		case len(orders) > 0:
			next = changeCursor(orders[len(orders)-1])
		case sel.after != nil:
			next = strings.TrimSpace(req.Cursor)
		}
	default:
		orders, err = h.Gate.Records.FindOrdersBetween(ctx, req.MerchantID, req.AccountID, sel.from, sel.to, req.Cursor, maxQueryOrders+1)
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
		if latest, err = h.Gate.Records.LatestNotifications(ctx, txIDs); err != nil {
			return nil, "", fmt.Errorf("find notifications: %w", err)
		}
	}
	list := queriedList(orders, latest, sel)
	if err := h.addSubscriptionResults(ctx, orders, list); err != nil {
		return nil, "", err
	}
	return list, next, nil
}

// addSubscriptionResults fills the subscription_result of the orders that
// belong to a subscription (its first payment or one of its charges) from
// the subscription's record. list begins with orders, in their order.
func (h *Handler) addSubscriptionResults(ctx context.Context, orders []models.Order, list []api.QueriedOrder) error {
	var ids []string
	for i := range orders {
		if orders[i].RecurringID != "" {
			ids = append(ids, orders[i].RecurringID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	subs, err := h.Gate.Records.FindSubscriptionsByID(ctx, ids)
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
func queriedList(orders []models.Order, latest map[string]models.Notification, sel querySelection) []api.QueriedOrder {
	list := make([]api.QueriedOrder, 0, len(orders))
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
			list = append(list, api.QueriedOrder{OrderNo: no, QueryResult: queryNotFound, ResultInfo: codes.OrderNotFound.String(), FraudCheckResult: []api.FraudCheck{}})
		}
	}
	for _, t := range sel.trades {
		if !seenTrade[t] {
			list = append(list, api.QueriedOrder{TransactionID: t, QueryResult: queryNotFound, ResultInfo: codes.OrderNotFound.String(), FraudCheckResult: []api.FraudCheck{}})
		}
	}
	return list
}

// subscriptionResultOf is the query's subscription_result of an order that
// belongs to sub.
func subscriptionResultOf(sub *models.Subscription) api.SubscriptionResult {
	out := api.SubscriptionResult{ContractName: sub.ContractName, RecurringID: sub.RecurringID,
		RecurringDeductionPeriod: sub.Period, RecurringStatus: strconv.Itoa(sub.Status)}
	if sub.NextChargeAt != nil {
		out.RecurringDeductionTime = sub.NextChargeAt.UTC().Format(time.DateOnly)
	}
	return out
}
