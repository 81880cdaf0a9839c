package signing

// PaymentResult is what encryption_data covers on a payment result: the XML
// answer of a payment, the return_url redirect and every notification
// (docs/design.md §3, the payment-result recipe). Values are as the answer carries
// them (amount canonical, result_info "<code>:<message>").
type PaymentResult struct {
	MerchantID    string
	AccountID     string
	TransactionID string
	OrderNo       string
	Currency      string
	Amount        string
	OrderStatus   string
	ResultInfo    string
}

// recipeField is one field of the payment-result recipe: its name in a
// form and where the struct holds it.
type recipeField struct {
	name  string
	value *string
}

// recipe lists the fields in the order they are signed. It is the one place
// that spells the recipe, so the answer, the redirect and the notification
// cannot drift apart.
func (r *PaymentResult) recipe() []recipeField {
	return []recipeField{
		{"merchant_id", &r.MerchantID},
		{"account_id", &r.AccountID},
		{"transaction_id", &r.TransactionID},
		{"order_no", &r.OrderNo},
		{"currency", &r.Currency},
		{"amount", &r.Amount},
		{"order_status", &r.OrderStatus},
		{"result_info", &r.ResultInfo},
	}
}

func (r PaymentResult) values() []string {
	fields := r.recipe()
	values := make([]string, len(fields))
	for i, f := range fields {
		values[i] = *f.value
	}
	return values
}

// SignPaymentResult returns encryption_data of a payment result under key:
// upper-case hex over the payment-result recipe. Whether an answer may be
// signed at all (the caller proved the key) is for the caller to decide.
func SignPaymentResult(key string, r PaymentResult) string {
	return SignUpper(key, r.values()...)
}

// VerifyPaymentResult reports whether signature is encryption_data of the
// payment result under key (hex in either case, constant time).
func VerifyPaymentResult(key, signature string, r PaymentResult) bool {
	return Verify(key, signature, r.values()...)
}

// PaymentResultFrom reads a payment result from named fields, such as a
// form's or a notification's; a missing field reads as "".
func PaymentResultFrom(get func(name string) string) PaymentResult {
	var r PaymentResult
	for _, f := range r.recipe() {
		*f.value = get(f.name)
	}
	return r
}

// Each calls set with the name and value of every recipe field, in signing
// order, to write the result into a form or a query string.
func (r PaymentResult) Each(set func(name, value string)) {
	for _, f := range r.recipe() {
		set(f.name, *f.value)
	}
}
