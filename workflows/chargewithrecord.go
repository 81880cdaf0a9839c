package workflows

import (
	"cmp"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/internal/domain/capture"
)

// shapeChargeWithRecord (shape 5) makes a direct card order's first charge
// attempt in the local activity that records the order and runs its risk
// check (RecordAndCharge), when the verdict lets the order be charged: one
// local activity fewer, and one marker event, on every such payment. The
// attempt is the one chargeAt would make first, with the same input and
// idempotency key; chargeAt takes its end as its first Authorise's, so
// everything after it (the inquiry after a timeout, a second attempt) is
// as before. Orders with a 3-D Secure step, an APM, a route, a hosted page
// or a subscription's charge record and charge as before.
const shapeChargeWithRecord = 5

// recordChargeOptions are RecordAndCharge's: retried as a record write is,
// with the record's time and the charge's. Only its first attempt charges.
var recordChargeOptions = workflow.LocalActivityOptions{
	StartToCloseTimeout:    storeTimeout + authoriseTimeout,
	ScheduleToCloseTimeout: storeRetryHorizon,
	RetryPolicy:            storeOptions.RetryPolicy,
}

// chargesWithRecord reports whether the order's record activity also makes
// its first charge attempt: a new direct card order of shape 5 whose charge
// goes to its one connector.
func (w *orderWorkflow) chargesWithRecord() bool {
	in := w.in
	routed := in.Route != nil && len(in.Route.Connectors) > 0
	return in.Shape >= shapeChargeWithRecord && in.Kind == KindCard && in.APM == nil && !in.ThreeDS &&
		in.Recurring == nil && !routed && w.st.ThreeDS.Data == nil
}

// authoriseInput is the charge of the order at connector conn with
// idempotency key key.
func (w *orderWorkflow) authoriseInput(conn, key string, failover bool) activities.AuthoriseInput {
	in := w.in
	return activities.AuthoriseInput{
		Connector:      conn,
		CardToken:      w.st.Card.Token,
		IdempotencyKey: key,
		Reference:      in.TransactionID,
		Amount:         in.Amount,
		Currency:       in.Currency,
		Capture:        in.CaptureMode == capture.Auto,
		ThreeDS:        cmp.Or(threeDSData(w.st.ThreeDS.Data), in.ExternalThreeDS),
		Installments:   in.Installments,
		// Set only for stored cards, so older histories replay the same.
		StoredCredential: w.st.Card.Stored,
		TokenID:          w.st.Card.TokenID,
		Failover:         failover,
	}
}

// firstAttempt is a charge attempt's end as an Authorise local activity
// would have given it.
type firstAttempt struct {
	outcome activities.ChargeOutcome
	err     error
}

// takeFirstCharge is, in chargeAt's first round at the order's own
// connector, the attempt the record's activity made, once; nil when there
// is none, or when that attempt is to be made again (it failed in a way
// Authorise's retry policy retries).
func (w *orderWorkflow) takeFirstCharge(round int, conn string) *firstAttempt {
	first := w.firstCharge
	if first == nil || round != 0 || conn != w.connectorName() {
		return nil
	}
	w.firstCharge = nil
	switch {
	case first.Outcome != nil:
		return &firstAttempt{outcome: *first.Outcome}
	case first.ErrType != "":
		return &firstAttempt{err: temporal.NewNonRetryableApplicationError(first.ErrMessage, first.ErrType, nil)}
	}
	return nil
}
