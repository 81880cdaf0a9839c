package card

import "regexp"

// tokenIDPattern is the shape of the token_ids the gateway hands out.
var tokenIDPattern = regexp.MustCompile(`^tk_[0-9a-f]{40}$`)

// IsTokenID reports whether s has the shape of a token_id the gateway
// hands out; any other is no stored card of any account.
func IsTokenID(s string) bool { return tokenIDPattern.MatchString(s) }
