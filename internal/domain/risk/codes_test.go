package risk

import (
	"testing"

	"github.com/paygate/paygate/internal/domain/codes"
)

func TestCodeFor(t *testing.T) {
	tests := []struct {
		rule string
		want codes.Code
	}{
		{RuleAmountLimit, codes.RiskAmountLimit},
		{RuleBlockedCard, codes.RiskBlockedCard},
		{RuleBlockedBIN, codes.RiskBlockedBIN},
		{RuleBlockedCountry, codes.RiskBlockedCountry},
		{RuleCardVelocity, codes.RiskVelocity},
		{RuleEmailVelocity, codes.RiskVelocity},
		{RuleIPVelocity, codes.RiskVelocity},
		{RuleCountryMismatch, codes.RiskCountryMismatch},
		{"", codes.RiskRejected},
		{"no_such_rule", codes.RiskRejected},
	}
	for _, tc := range tests {
		t.Run(tc.rule, func(t *testing.T) {
			if got := CodeFor(tc.rule); got != tc.want {
				t.Errorf("CodeFor(%q) = %v, want %v", tc.rule, got, tc.want)
			}
		})
	}
}

func TestEveryRuleHasItsOwnCode(t *testing.T) {
	for _, rule := range Rules() {
		if CodeFor(rule) == codes.RiskRejected {
			t.Errorf("rule %s has only the generic code", rule)
		}
	}
}
