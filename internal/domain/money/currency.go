package money

// exponents maps ISO 4217 currency codes to their number of minor-unit
// digits. Only currencies with an exponent of 0 or 2 are listed, because
// amounts on the wire carry at most two fraction digits.
var exponents = map[string]int{
	// Exponent 0.
	"BIF": 0, "CLP": 0, "DJF": 0, "GNF": 0, "ISK": 0, "JPY": 0, "KMF": 0,
	"KRW": 0, "PYG": 0, "RWF": 0, "UGX": 0, "VND": 0, "VUV": 0, "XAF": 0,
	"XOF": 0, "XPF": 0,

	// Exponent 2.
	"AED": 2, "ARS": 2, "AUD": 2, "BDT": 2, "BGN": 2, "BRL": 2, "CAD": 2,
	"CHF": 2, "CNY": 2, "COP": 2, "CZK": 2, "DKK": 2, "DOP": 2, "DZD": 2,
	"EGP": 2, "EUR": 2, "GBP": 2, "GEL": 2, "GHS": 2, "GTQ": 2, "HKD": 2,
	"HUF": 2, "IDR": 2, "ILS": 2, "INR": 2, "KES": 2, "KZT": 2, "LKR": 2,
	"MAD": 2, "MXN": 2, "MYR": 2, "NGN": 2, "NOK": 2, "NZD": 2, "PEN": 2,
	"PHP": 2, "PKR": 2, "PLN": 2, "QAR": 2, "RON": 2, "RSD": 2, "SAR": 2,
	"SEK": 2, "SGD": 2, "THB": 2, "TRY": 2, "TWD": 2, "UAH": 2, "USD": 2,
	"UYU": 2, "ZAR": 2,
}

// Exponent reports the number of minor-unit digits of currency and whether
// the currency is known. The code must be an exact upper-case ISO 4217 code.
func Exponent(currency string) (int, bool) {
	e, ok := exponents[currency]
	return e, ok
}

// KnownCurrency reports whether code is a supported ISO 4217 currency code.
// The match is exact: lower-case or padded codes are not known.
func KnownCurrency(code string) bool {
	_, ok := exponents[code]
	return ok
}
