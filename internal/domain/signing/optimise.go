package signing

// OptimiseRequest is what encryption_data covers on POST /v1/optimise
// (docs/design.md §3, "optimise (compatible)"): merchant_id, account_id,
// request_id, currency, amount and shopper_email, in that order. country is optional and
// not signed.
type OptimiseRequest struct {
	MerchantID   string
	AccountID    string
	RequestID    string
	Currency     string
	Amount       string
	ShopperEmail string
}

// Values are the request's values in signing order.
func (r OptimiseRequest) Values() []string {
	return []string{r.MerchantID, r.AccountID, r.RequestID, r.Currency, r.Amount, r.ShopperEmail}
}

// OptimiseMethod is one ranked payment method of an optimise answer, as the
// answer carries it.
type OptimiseMethod struct {
	PaymentMethod string // "CARD" or an APM name
	Brand         string // the card brand; "" for an APM
	SuccessRate   string // "0.6667"; "" without a sample
	SampleSize    string // decimal
}

// OptimiseResult is what encryption_data covers on an optimise answer. The
// interface names no recipe for it, so it is ours (docs/design.md §3;
// docs/decisions.md, "Payment method optimisation"): merchant_id, account_id, request_id, currency,
// amount and result_info, then payment_method, brand, success_rate and
// sample_size of every method in rank order, then, for a routed account,
// connector, success_rate and sample_size of every connector in rank
// order. It covers the rankings themselves, so a merchant can check that
// nobody reordered them on the way.
type OptimiseResult struct {
	MerchantID string
	AccountID  string
	RequestID  string
	Currency   string
	Amount     string
	ResultInfo string
	Methods    []OptimiseMethod
	// Connectors rank a routed account's connectors; none for an account
	// with one connector, whose answer and signature are as before.
	Connectors []OptimiseConnector
}

// OptimiseConnector is one ranked connector of a routed account's answer.
type OptimiseConnector struct {
	Connector   string
	SuccessRate string // "0.6667"; "" without a sample
	SampleSize  string // decimal
}

// Values are the answer's values in signing order.
func (r OptimiseResult) Values() []string {
	out := []string{r.MerchantID, r.AccountID, r.RequestID, r.Currency, r.Amount, r.ResultInfo}
	for _, m := range r.Methods {
		out = append(out, m.PaymentMethod, m.Brand, m.SuccessRate, m.SampleSize)
	}
	for _, c := range r.Connectors {
		out = append(out, c.Connector, c.SuccessRate, c.SampleSize)
	}
	return out
}

// SignOptimiseResult returns encryption_data of an optimise answer under
// key: upper-case hex, as every answer we sign. Whether the answer may be
// signed at all (the caller proved the key) is for the caller to decide.
func SignOptimiseResult(key string, r OptimiseResult) string {
	return SignUpper(key, r.Values()...)
}
