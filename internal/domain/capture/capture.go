// Package capture holds an account's capture mode (docs/design.md §4): whether an
// approved card payment is captured at once or waits for the merchant.
package capture

// Mode is an account's capture mode. The values are the text the accounts
// and orders tables store, so they must never change.
type Mode string

// The capture modes.
const (
	// Auto is a sale: the payment is authorised and captured at once
	// (payment_status 3000).
	Auto Mode = "auto"
	// Manual authorises only (2000); the merchant captures within the
	// authorisation window.
	Manual Mode = "manual"
)
