package order

// Field limits. The interface does not give them; these fit every real
// value and keep records bounded.
const (
	MaxOrderNo   = 64
	MaxNameField = 100
	MaxEmail     = 200
	MaxURL       = 1024
	MaxFreeText  = 2048
)

// Printable reports whether s is non-empty Printable ASCII without spaces,
// as an order_no must be.
func Printable(s string) bool {
	for _, r := range s {
		if r <= ' ' || r > '~' {
			return false
		}
	}
	return s != ""
}
