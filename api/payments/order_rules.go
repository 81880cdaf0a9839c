package payments

import (
	"encoding/json"
	"net/url"
	"slices"

	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/order"
	"github.com/paygate/paygate/internal/domain/subscription"
)

// The field rules every kind of order shares: lengths, printable order
// numbers, http(s) addresses and the order of "missing field" answers.

// firstEmpty names the first empty field of fields, in the interface's
// order of the payment fields; "" when none is.
func firstEmpty(fields map[string]string) string {
	// Report in a fixed order so the answer does not depend on map order.
	for _, name := range []string{"merchant_id", "account_id", "order_no", "currency", "amount", "card",
		"expiration_month", "expiration_year", "security_code", "first_name", "last_name", "shopper_email"} {
		if v, ok := fields[name]; ok && v == "" {
			return name
		}
	}
	return ""
}

// validURL reports whether s is an absolute http or https URL within the
// length limit, without user info: a notification to such a URL is
// refused at every delivery (notifyclient.CheckURL), and credentials do
// not belong in a redirect or a stored column.
func validURL(s string) bool {
	if len(s) > order.MaxURL {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.User == nil
}

// overlong names the first free-text field longer than the limit.
func overlong(d *order.Details) string {
	b, _ := json.Marshal(d)
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(b, &fields)
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		// Measure the text itself, not its JSON form, where "&" or "<" take six bytes.
		var text string
		if raw := fields[name]; len(raw) > order.MaxFreeText+2 && raw[0] == '"' && json.Unmarshal(raw, &text) == nil && len(text) > order.MaxFreeText {
			return name
		}
	}
	return ""
}

// reservedOrderNo refuses a merchant's order_no of the form the gateway
// gives its subscriptions' charges (subscription.IsChargeOrderNo).
const reservedOrderNo = "order_no of the form R<19 digits>-c<n> is the gateway's own, for subscription charges"

// validateRedirectOrder checks what every order that sends the shopper away
// and back has: order_no, currency, amount and the http(s) return_url,
// cancel_url and notify_url.
func validateRedirectOrder(d *order.Details, account *merchant.Account) (money.Amount, *codes.Code) {
	fail := func(c codes.Code) (money.Amount, *codes.Code) { return money.Amount{}, &c }
	if d.ReturnURL == "" {
		return fail(codes.MissingField.With("return_url"))
	}
	if len(d.OrderNo) > order.MaxOrderNo || !order.Printable(d.OrderNo) {
		return fail(codes.InvalidField.With("order_no must be 1 to 64 printable characters without spaces"))
	}
	if subscription.IsChargeOrderNo(d.OrderNo) {
		return fail(codes.InvalidField.With(reservedOrderNo))
	}
	if !money.KnownCurrency(d.Currency) || !account.AllowsCurrency(d.Currency) {
		return fail(codes.UnsupportedCurrency.With(d.Currency))
	}
	amount, err := money.Parse(d.Amount.String(), d.Currency)
	if err != nil || amount.Minor <= 0 {
		return fail(codes.InvalidAmount.With("amount must be a positive decimal with at most two fraction digits"))
	}
	for _, u := range []struct{ name, value string }{
		{"return_url", d.ReturnURL}, {"cancel_url", d.CancelURL}, {"notify_url", d.NotifyURL},
	} {
		if u.value != "" && !validURL(u.value) {
			return fail(codes.InvalidField.With(u.name + " must be an http or https URL without user info"))
		}
	}
	return amount, nil
}
