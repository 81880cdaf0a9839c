package risk

// binLen is how many leading digits of a card number are its BIN here: the
// six that a masked card shows.
const binLen = 6

// binCountries is the issuing country of the BINs we know: the simulated
// acquirer's test cards, and a few test BINs of other countries, made of
// "400" and the country's ISO 3166 numeric code. A real deployment would
// ask a BIN database; this table stands in for one.
var binCountries = map[string]string{
	"424242": "US", // 4242 4242 4242 4242, approved
	"400000": "US", // 4000 0000 0000 xxxx, the simulator's outcome cards
	"555555": "US", // 5555 5555 5555 4444, approved
	"378282": "US", // 3782 822463 10005, American Express test card
	"400826": "GB", // 4008 2600 0000 0004
	"400276": "DE", // 4002 7600 0000 0009
	"400076": "BR", // 4000 7600 0000 0001
}

// BIN returns the first six digits of a masked (or full) card number, or ""
// when it does not start with six digits. It is pure, so workflows may call
// it.
func BIN(masked string) string {
	if len(masked) < binLen || !digits(masked[:binLen]) {
		return ""
	}
	return masked[:binLen]
}

// CardCountry returns the issuing country of a BIN, or "" when it is not
// known.
func CardCountry(bin string) string {
	return binCountries[bin]
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
