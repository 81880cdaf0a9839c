package txid

// Length is the number of digits of every transaction id.
const Length = 19

// Valid reports whether s has the form of a transaction id: exactly 19 ASCII
// digits. Checking the form before an id is echoed in a signed answer keeps
// a digit from shifting between neighbouring values of a recipe.
func Valid(s string) bool {
	if len(s) != Length {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
