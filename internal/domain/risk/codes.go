package risk

import "github.com/paygate/paygate/internal/domain/codes"

// CodeFor returns the result code of a risk verdict by its Result.Rule:
// the code of the rule that weighed most, or the generic R0003 when no
// single rule is named.
func CodeFor(rule string) codes.Code {
	switch rule {
	case RuleAmountLimit:
		return codes.RiskAmountLimit
	case RuleBlockedCard:
		return codes.RiskBlockedCard
	case RuleBlockedBIN:
		return codes.RiskBlockedBIN
	case RuleBlockedCountry:
		return codes.RiskBlockedCountry
	case RuleCardVelocity, RuleEmailVelocity, RuleIPVelocity, RuleDeviceVelocity:
		return codes.RiskVelocity
	case RuleCountryMismatch:
		return codes.RiskCountryMismatch
	case RuleTestValue:
		return codes.RiskTestValue
	}
	return codes.RiskRejected
}
