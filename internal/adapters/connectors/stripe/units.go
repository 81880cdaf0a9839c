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
	return roundDiv(amount, scaleOf(currency))
}

// scaleOf is how many of Stripe's units of currency make one of ours.
func scaleOf[C ~string](currency C) int64 {
	if f, ok := stripeScale[strings.ToUpper(string(currency))]; ok {
		return f
	}
	return 1
}

// roundDiv is n/d (d above zero) rounded half away from zero, either sign:
// Go's division truncates a negative quotient toward zero.
func roundDiv(n, d int64) int64 {
	if n < 0 {
		return -((-n + d/2) / d)
	}
	return (n + d/2) / d
}
