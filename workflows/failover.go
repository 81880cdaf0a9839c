package workflows

import (
	"cmp"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/routing"
)

// chargeRouted tries the order's charge on the connectors of its route, in
// order, going on only where routing.Decide allows: the connector was down
// or refused the request, or declined softly where the account opted in;
// past the last connector it starts again from the first, after a pause,
// until the route's budget of attempts is spent. A charge whose outcome
// stayed unknown after chargeAt's inquiries stops the payment: it never
// moves while a connector may have charged.
func (w *orderWorkflow) chargeRouted(ctx workflow.Context) (activities.ChargeOutcome, codes.Code, error) {
	plan := *w.in.Route
	why := "route " + plan.Route
	if plan.Split {
		why += " (volume split)"
	}
	for n := 1; ; n++ {
		conn := plan.Next(n)
		if n > len(plan.Connectors) && (n-1)%len(plan.Connectors) == 0 {
			// Every connector was tried once more: a pause first.
			if err := workflow.Sleep(ctx, routePassPause); err != nil {
				return activities.ChargeOutcome{}, codes.Code{}, err
			}
		}
		start := workflow.Now(ctx)
		outcome, code, class, err := w.chargeAt(ctx, conn, true)
		if err != nil {
			return outcome, code, err
		}
		w.noteAttempt(ctx, activities.ChargeAttemptInput{TransactionID: w.in.TransactionID, Attempt: n, Connector: conn,
			ConnectorRef: outcome.ChargeID, Outcome: cmp.Or(string(class), "not_sent"), DeclineReason: outcome.DeclineCode,
			LatencyMS: workflow.Now(ctx).Sub(start).Milliseconds(), Why: why, At: start})
		if class == "" || routing.Decide(class, plan, n) != routing.TryNext {
			if outcome.Connector != "" && outcome.Connector != plan.Connectors[0] {
				// Found under the connector that answered, in the UI.
				if err := workflow.UpsertTypedSearchAttributes(ctx, SearchConnector.ValueSet(outcome.Connector)); err != nil {
					return outcome, code, err
				}
			}
			return outcome, code, nil
		}
		workflow.GetLogger(ctx).Warn("charge goes on to the next connector", "connector", conn, "outcome", class,
			"next", plan.Next(n+1), "route", plan.Route)
		why = "after " + conn + ": " + string(class)
		if err := w.recordBeforeNext(ctx); err != nil {
			return activities.ChargeOutcome{}, codes.Code{}, err
		}
	}
}

// recordBeforeNext ends the workflow task before the next connector is
// charged. Local activities reach the history only when their task ends: a
// worker that died after charging the next connector in the same task would
// leave that charge unknown to the worker that takes over, which runs this
// connector's charge again and, answered differently (its breaker closed,
// a fault passed), stops here with the card charged at both. With the
// attempt recorded first, the worker that takes over goes on to the next
// connector too, with the same key. Version 1 ended the task with a 1 ms
// timer, which Temporal fires up to a second late; version 2 with endTask.
func (w *orderWorkflow) recordBeforeNext(ctx workflow.Context) error {
	switch w.version(ctx, changeFailoverRecorded, 2) {
	case workflow.DefaultVersion:
		return nil
	case 1:
		return workflow.Sleep(ctx, failoverRecordPause)
	default:
		return endTask(ctx)
	}
}

// failoverRecordPause is version 1's timer that ends the task before the
// next connector.
const failoverRecordPause = time.Millisecond

// routePassPause is the pause before a routed charge tries its connectors
// again from the first.
const routePassPause = time.Second

// noteAttempt records one attempt of the charge. A record that cannot be
// written is logged and left: the charge's outcome is what counts.
func (w *orderWorkflow) noteAttempt(ctx workflow.Context, in activities.ChargeAttemptInput) {
	lctx := workflow.WithLocalActivityOptions(ctx, storeOptions)
	if err := workflow.ExecuteLocalActivity(lctx, a.RecordChargeAttempt, in).Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Error("record charge attempt", "attempt", in.Attempt, "connector", in.Connector, "error", err)
	}
}

// attemptOutcome sorts a connector's answer to a charge for failover.
func attemptOutcome(o activities.ChargeOutcome) routing.Outcome {
	if o.Approved {
		return routing.Approved
	}
	return routing.DeclineOutcome(o.DeclineCode)
}

// chargeKey is the idempotency key of the order's charge at connector
// conn: the order's first connector has the key orders always had, every
// other its own, so that no connector ever sees another's key.
func (w *orderWorkflow) chargeKey(conn string) string {
	if conn == w.connectorName() {
		return w.key("authorise")
	}
	return w.key("authorise/" + conn)
}

// chargeConnector is the connector the charge's capture, void, refunds and
// inquiries go to: for a routed order the one that answered its charge;
// for every other order its own, as always.
func (w *orderWorkflow) chargeConnector() string {
	if w.in.Route != nil && w.st.AnsweredBy != "" {
		return w.st.AnsweredBy
	}
	return w.connectorName()
}
