package checkout

import (
	"net/url"
	"sort"
	"strings"
)

// Field is one hidden input of a generated form.
type Field struct{ Name, Value string }

// ForwardingData is what the forwarding page needs.
type ForwardingData struct {
	Action string  // where the page posts, "/v1/checkout"
	Fields []Field // every hidden input, in order (the handler builds them)
}

// Gateway holds the gateway-side values of the forwarding page, taken from
// the merchant account's configuration.
type Gateway struct {
	GbcID, ConnectorCode, AccountName, Website, PmID, ApmType, Descriptor, OrderPrefix, RRTimezone,
	OrderNumLength, SendBGoods, ReplaceName, SendBankWebsite, ReplaceUpID, ReplaceMatchAddress, ToPassPage string
}

// excludedFields are request fields never echoed into the forwarding page:
// the signature (it travels as signInfo) and card data, which a hosted
// payment request should not carry and which must never be written into a
// page, a URL or a log. Names are compared without case, underscores or
// dashes, so Card, card_number and CVV are card data too.
var excludedFields = map[string]bool{
	"encryptiondata":  true,
	"card":            true,
	"cardnumber":      true,
	"cardno":          true,
	"pan":             true,
	"expirationmonth": true,
	"expirationyear":  true,
	"expirymonth":     true,
	"expiryyear":      true,
	"expiry":          true,
	"expirationdate":  true,
	"securitycode":    true,
	"cvv":             true,
	"cvv2":            true,
	"cvc":             true,
	"cvc2":            true,
}

// separators are dropped from a field name before excludedFields is asked.
var separators = strings.NewReplacer("_", "", "-", "")

// excluded reports whether a request field is never echoed (excludedFields).
func excluded(name string) bool {
	return excludedFields[separators.Replace(strings.ToLower(name))]
}

// camelTwins lists the interface's alternative names and the request field
// each one repeats, in page order. An empty source means the value is not a
// request field and is supplied separately.
var camelTwins = []struct{ name, source string }{
	{"orderNo", "order_no"},
	{"orderAmount", "amount"},
	{"orderCurrency", "currency"},
	{"notifyUrl", "notify_url"},
	{"returnUrl", "return_url"},
	{"cancelUrl", "cancel_url"},
	{"signInfo", ""},
	{"merNo", "merchant_id"},
	{"gatewayNo", "account_id"},
	{"shopperId", "shopper_id"},
	{"shopperLevel", "shopper_level"},
	{"firstName", "first_name"},
	{"lastName", "last_name"},
	{"itemTotal", "item_total"},
	{"taxTotal", "tax_total"},
	{"shipFee", "shipping"},
	{"shippingDiscount", "shipping_discount"},
	{"goodsInfo", "items"},
	{"isOpen3D", "open3d"},
	{"paymentToken", "token_id"},
	{"shipFirstName", "delivery_firstname"},
	{"shipLastName", "delivery_lastname"},
	{"shipCountry", "delivery_country"},
	{"shipState", "delivery_state"},
	{"shipCity", "delivery_city"},
	{"shipAddress", "delivery_address"},
	{"shipZip", "delivery_postal_code"},
	{"defaultLang", "default_lang"},
	{"verifyBillingAddress", "verify_billing_address"},
	{"remark", "note"},
}

// passThrough are request fields the page always carries under their own
// names, empty when the request lacks them.
var passThrough = []string{
	"return_url", "cancel_url",
	// source_notify_url and source_request_ip are inserted between these.
	"default_lang", "logo_name", "merSendLogoNo", "verify_billing_address",
	"card_type", "payment_method", "APMType",
}

// fieldList builds an ordered list of fields in which each name appears
// once: a name keeps its first position, and a later non-empty value
// replaces an earlier one (so derived and gateway-side values win over a
// request field of the same name, while an empty one never erases data).
type fieldList struct {
	fields []Field
	index  map[string]int
}

func (l *fieldList) add(name, value string) {
	if i, ok := l.index[name]; ok {
		if value != "" {
			l.fields[i].Value = value
		}
		return
	}
	l.index[name] = len(l.fields)
	l.fields = append(l.fields, Field{Name: name, Value: value})
}

// ForwardingFields builds the hidden inputs of the interface's forwarding
// page, in this order:
//
//   - every request field under its own name, sorted by name
//     (encryption_data and card data excluded);
//   - the camelCase twins (orderNo, orderAmount, ..., remark), signInfo being
//     the signature;
//   - return_url, cancel_url, source_notify_url (the request's notify_url),
//     source_request_ip (requestIP), default_lang, logo_name, merSendLogoNo,
//     verify_billing_address, card_type, payment_method, APMType;
//   - allParams: the echoed request fields as one query string;
//   - the gateway-side inputs gbc_id, connector_code, account_name, website,
//     pm_id, apm_type, descriptor, orderprefix, rrtimezone, ordernumlength,
//     sendbgoods, replacename, send_bank_website, replace_up_id,
//     replace_match_address, to_pass_page.
//
// Missing values are empty strings. Each name appears once, at its first
// position; a later non-empty value for the same name replaces the earlier
// one (the gateway's website replaces the request's website when set).
func ForwardingFields(req map[string]string, gw Gateway, signature, requestIP string) []Field {
	l := &fieldList{index: make(map[string]int)}

	names := make([]string, 0, len(req))
	params := url.Values{}
	for name := range req {
		if name == "" || excluded(name) {
			continue
		}
		names = append(names, name)
		params.Set(name, req[name])
	}
	sort.Strings(names)
	for _, name := range names {
		l.add(name, req[name])
	}

	for _, t := range camelTwins {
		if t.source == "" {
			l.add(t.name, signature)
			continue
		}
		l.add(t.name, req[t.source])
	}

	l.add(passThrough[0], req[passThrough[0]])
	l.add(passThrough[1], req[passThrough[1]])
	l.add("source_notify_url", req["notify_url"])
	l.add("source_request_ip", requestIP)
	for _, name := range passThrough[2:] {
		l.add(name, req[name])
	}

	l.add("allParams", params.Encode())

	for _, f := range []Field{
		{"gbc_id", gw.GbcID},
		{"connector_code", gw.ConnectorCode},
		{"account_name", gw.AccountName},
		{"website", gw.Website},
		{"pm_id", gw.PmID},
		{"apm_type", gw.ApmType},
		{"descriptor", gw.Descriptor},
		{"orderprefix", gw.OrderPrefix},
		{"rrtimezone", gw.RRTimezone},
		{"ordernumlength", gw.OrderNumLength},
		{"sendbgoods", gw.SendBGoods},
		{"replacename", gw.ReplaceName},
		{"send_bank_website", gw.SendBankWebsite},
		{"replace_up_id", gw.ReplaceUpID},
		{"replace_match_address", gw.ReplaceMatchAddress},
		{"to_pass_page", gw.ToPassPage},
	} {
		l.add(f.Name, f.Value)
	}
	return l.fields
}
