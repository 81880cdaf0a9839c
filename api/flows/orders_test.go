package flows

import (
	"errors"
	"testing"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"

	"github.com/paygate/paygate/workflows"
)

func TestClassifyPaymentError(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want error // nil: a wrapped system error
	}{
		{"other content", temporal.NewApplicationError("mismatch", workflows.ErrTypeOrderMismatch), ErrOrderMismatch},
		{"a reopened run with nothing to carry on from", temporal.NewApplicationError("closed", workflows.ErrTypeOrderClosed), ErrOrderClosed},
		{"the workflow id's run is closed", serviceerror.NewWorkflowExecutionAlreadyStarted("started", "", ""), ErrOrderClosed},
		{"not found", serviceerror.NewNotFound("gone"), ErrOrderClosed},
		{"unavailable", serviceerror.NewUnavailable("no frontend"), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := classify(c.err)
			switch {
			case c.want != nil && !errors.Is(got, c.want):
				t.Errorf("classify = %v, want %v", got, c.want)
			case c.want == nil && (errors.Is(got, ErrOrderClosed) || errors.Is(got, ErrOrderMismatch) || !errors.Is(got, c.err)):
				t.Errorf("classify = %v, want the error wrapped", got)
			}
		})
	}
}
