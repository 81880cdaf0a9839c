package risk

import (
	"reflect"
	"testing"
)

func TestEvaluate(t *testing.T) {
	tests := []struct {
		name  string
		facts Facts
		want  Result
	}{
		{
			name:  "under the limit and not blocked",
			facts: Facts{Amount: 1000, Currency: "USD", AmountLimit: 5000},
			want: Result{Action: Accept, Score: 0, Reasons: []Reason{
				{RuleAmountLimit, Accept}, {RuleBlockedCard, Accept}}},
		},
		{
			name:  "exactly at the limit",
			facts: Facts{Amount: 5000, Currency: "USD", AmountLimit: 5000},
			want: Result{Action: Accept, Score: 0, Reasons: []Reason{
				{RuleAmountLimit, Accept}, {RuleBlockedCard, Accept}}},
		},
		{
			name:  "no limit set",
			facts: Facts{Amount: 1 << 40, Currency: "USD"},
			want: Result{Action: Accept, Score: 0, Reasons: []Reason{
				{RuleAmountLimit, Accept}, {RuleBlockedCard, Accept}}},
		},
		{
			name:  "over the limit",
			facts: Facts{Amount: 5001, Currency: "USD", AmountLimit: 5000},
			want: Result{Action: Reject, Score: 100, Rule: RuleAmountLimit, Reasons: []Reason{
				{RuleAmountLimit, Reject}, {RuleBlockedCard, Accept}}},
		},
		{
			name:  "blocked card",
			facts: Facts{Amount: 100, Currency: "USD", CardBlocked: true},
			want: Result{Action: Reject, Score: 100, Rule: RuleBlockedCard, Reasons: []Reason{
				{RuleAmountLimit, Accept}, {RuleBlockedCard, Reject}}},
		},
		{
			name:  "both",
			facts: Facts{Amount: 9000, Currency: "USD", AmountLimit: 5000, CardBlocked: true},
			want: Result{Action: Reject, Score: 200, Rule: RuleAmountLimit, Reasons: []Reason{
				{RuleAmountLimit, Reject}, {RuleBlockedCard, Reject}}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Evaluate(tc.facts)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Evaluate(%+v) = %+v, want %+v", tc.facts, got, tc.want)
			}
		})
	}
}
