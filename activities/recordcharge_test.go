package activities

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"go.temporal.io/sdk/temporal"
)

// TestAttemptOf: how RecordAndCharge hands the workflow its charge attempt.
// An answer is an outcome; an error Authorise's retry policy never retries
// keeps its type and message, so the workflow takes it as it would from
// Authorise; any other error asks the workflow to try again.
func TestAttemptOf(t *testing.T) {
	approved := ChargeOutcome{Connector: "sim-acquirer", ChargeID: "ch_1", Approved: true, AuthCode: "A1", CapturedAmount: 1234}
	declined := ChargeOutcome{Connector: "sim-acquirer", ChargeID: "ch_2", DeclineCode: "insufficient_funds"}
	tests := []struct {
		name    string
		outcome ChargeOutcome
		err     error
		want    ChargeAttempt
	}{
		{"approved", approved, nil, ChargeAttempt{Outcome: &approved}},
		{"declined", declined, nil, ChargeAttempt{Outcome: &declined}},
		{"acquirer timeout", ChargeOutcome{}, temporal.NewNonRetryableApplicationError("acquirer did not answer in time", ErrTypeAcquirerTimeout, errors.New("deadline")),
			ChargeAttempt{ErrType: ErrTypeAcquirerTimeout, ErrMessage: "acquirer did not answer in time"}},
		{"acquirer refused", ChargeOutcome{}, temporal.NewNonRetryableApplicationError("acquirer refused the request", ErrTypeAcquirerRejected, nil),
			ChargeAttempt{ErrType: ErrTypeAcquirerRejected, ErrMessage: "acquirer refused the request"}},
		{"card not in the vault", ChargeOutcome{}, temporal.NewNonRetryableApplicationError("card token not in the vault", ErrTypeCardUnavailable, nil),
			ChargeAttempt{ErrType: ErrTypeCardUnavailable, ErrMessage: "card token not in the vault"}},
		{"stored card deleted", ChargeOutcome{}, temporal.NewNonRetryableApplicationError("stored card deleted", ErrTypeCardDeleted, nil),
			ChargeAttempt{ErrType: ErrTypeCardDeleted, ErrMessage: "stored card deleted"}},
		{"acquirer down", ChargeOutcome{}, fmt.Errorf("wrapped: %w", temporal.NewNonRetryableApplicationError("acquirer unavailable", ErrTypeAcquirerDown, nil)),
			ChargeAttempt{ErrType: ErrTypeAcquirerDown, ErrMessage: "acquirer unavailable"}},
		{"a lost connection is tried again", ChargeOutcome{}, errors.New("authorise 1: connection reset by peer"),
			ChargeAttempt{Retry: true, ErrMessage: "authorise 1: connection reset by peer"}},
		{"a retryable application error is tried again", ChargeOutcome{}, temporal.NewApplicationError("busy", "Busy"),
			ChargeAttempt{Retry: true, ErrMessage: "busy (type: Busy, retryable: true)"}},
	}
	a := &Activities{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := a.attemptOf(AuthoriseInput{Reference: "1"}, tc.outcome, tc.err)
			if !reflect.DeepEqual(*got, tc.want) {
				t.Errorf("attempt = %+v, want %+v", *got, tc.want)
			}
		})
	}
}
