package signing

// PayoutResultFields are the fields a payout notification's encryption_data
// covers, in order: the payout recipe's (the values the merchant signed in
// its request), then the payout's transaction id and what became of it.
// The request recipe alone would let anyone who holds one notification, or
// the request, post a forged FAILED under a valid signature, and a merchant
// who trusts it might pay out again.
//
// It cannot be read as a request of another recipe: it ends in a status
// and a failure type (letters and underscores), where every request recipe
// ends in an amount, ids, a URL or an email address.
var PayoutResultFields = []string{
	"merchant_id", "account_id", "request_id", "payment_currency", "payment_amount",
	"transaction_id", "status", "failure_type",
}

// SignPayoutResult is the upper-case encryption_data of a payout result
// whose fields get reads (a missing field reads as "").
func SignPayoutResult(key string, get func(name string) string) string {
	return SignUpper(key, payoutResultValues(get)...)
}

// VerifyPayoutResult reports whether signature is the encryption_data of the
// payout result under key (hex in either case, constant time).
func VerifyPayoutResult(key, signature string, get func(name string) string) bool {
	return Verify(key, signature, payoutResultValues(get)...)
}

func payoutResultValues(get func(name string) string) []string {
	values := make([]string, len(PayoutResultFields))
	for i, name := range PayoutResultFields {
		values[i] = get(name)
	}
	return values
}
