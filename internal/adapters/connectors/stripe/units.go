package stripe

import "strings"

// stripeScale is how many of Stripe's units make one of our minor units,
// for the currencies where the two differ. Ours are ISO 4217's; Stripe
// counts ISK, which ISO gives no minor unit, in hundredths (an amount a
// multiple of 100). Sent as it is, 5000 ISK charged the shopper 50 ISK
// while the record said 5000.
var stripeScale = map[string]int64{"ISK": 100}

// toStripe is an amount of ours in Stripe's units.
func toStripe(amount int64, currency string) int64 {
	if f, ok := stripeScale[strings.ToUpper(currency)]; ok {
		return amount * f
	}
	return amount
}

// fromStripe is an amount in Stripe's units in ours, rounded half away
// from zero (Stripe's charges in ISK are whole, its fees need not be).
func fromStripe[C ~string](amount int64, currency C) int64 {
	f, ok := stripeScale[strings.ToUpper(string(currency))]
	if !ok {
		return amount
	}
	if amount < 0 {
		return -((-amount + f/2) / f)
	}
	return (amount + f/2) / f
}
