package workflows_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/internal/domain/capture"
	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/refund"
	"github.com/paygate/paygate/internal/domain/routing"
	"github.com/paygate/paygate/workflows"
	"github.com/stretchr/testify/mock"
)

func down() error {
	return temporal.NewNonRetryableApplicationError("acquirer unavailable", activities.ErrTypeAcquirerDown, nil)
}

func refusedRequest() error {
	return temporal.NewNonRetryableApplicationError("acquirer refused the request", activities.ErrTypeAcquirerRejected, nil)
}

// at is a connector's answer to a charge, with its name on it as the
// activity gives it.
func at(name string, o activities.ChargeOutcome) activities.ChargeOutcome {
	o.Connector = name
	return o
}

// TestChargeFailover: a routed order's charge goes from connector to
// connector only where the failover table allows, each connector with a key
// of its own, and never while the previous one may have charged.
func TestChargeFailover(t *testing.T) {
	route := routing.Plan{Connectors: []string{"sim-bank", "stripe", "sim-acquirer"}, Route: "cards", MaxAttempts: 3}
	soft := route
	soft.RetrySoftDeclines = true
	budget := route
	budget.MaxAttempts = 2
	twice := routing.Plan{Connectors: []string{"sim-bank", "stripe"}, Route: "cards", MaxAttempts: 3}
	const keyBank, keyStripe, keyAcq = wantKey, wantKey + "/stripe", wantKey + "/sim-acquirer"
	type call struct{ connector, key string }
	tests := []struct {
		name      string
		plan      routing.Plan
		answers   []func() (activities.ChargeOutcome, error) // by call
		inquiries []activities.InquiryResult                 // by call
		wantCalls []call
		wantInqs  []call
		wantCode  string
		wantBy    string // the connector the result names
		// wantAttempts are the recorded attempts, connector:outcome.
		wantAttempts []string
	}{
		{"the first approves", route,
			[]func() (activities.ChargeOutcome, error){func() (activities.ChargeOutcome, error) { return at("sim-bank", approved(amount)), nil }},
			nil, []call{{"sim-bank", keyBank}}, nil, "0000", "sim-bank", []string{"sim-bank:approved"}},
		{"the first is down, the second approves", route,
			[]func() (activities.ChargeOutcome, error){
				func() (activities.ChargeOutcome, error) { return activities.ChargeOutcome{}, down() },
				func() (activities.ChargeOutcome, error) { return at("stripe", approved(amount)), nil },
			}, nil, []call{{"sim-bank", keyBank}, {"stripe", keyStripe}}, nil, "0000", "stripe", []string{"sim-bank:down", "stripe:approved"}},
		{"the first refuses the request, the second approves", route,
			[]func() (activities.ChargeOutcome, error){
				func() (activities.ChargeOutcome, error) { return activities.ChargeOutcome{}, refusedRequest() },
				func() (activities.ChargeOutcome, error) { return at("stripe", approved(amount)), nil },
			}, []activities.InquiryResult{{Found: false}}, []call{{"sim-bank", keyBank}, {"stripe", keyStripe}}, []call{{"sim-bank", keyBank}}, "0000", "stripe", []string{"sim-bank:refused", "stripe:approved"}},
		// A worker that died after its charge at the first was sent left
		// it unknown; the attempt of the worker that took over is refused.
		{"the first refuses the request but an earlier attempt charged there: paid there", route,
			[]func() (activities.ChargeOutcome, error){
				func() (activities.ChargeOutcome, error) { return activities.ChargeOutcome{}, refusedRequest() },
			}, []activities.InquiryResult{{Found: true, Outcome: at("sim-bank", approved(amount))}}, []call{{"sim-bank", keyBank}}, []call{{"sim-bank", keyBank}}, "0000", "sim-bank", []string{"sim-bank:approved"}},
		{"a hard decline stops", soft,
			[]func() (activities.ChargeOutcome, error){
				func() (activities.ChargeOutcome, error) {
					return at("sim-bank", declined(connector.DeclineInsufficientFunds)), nil
				},
			}, nil, []call{{"sim-bank", keyBank}}, nil, "A0002", "sim-bank", []string{"sim-bank:hard_decline"}},
		{"a soft decline stops where the account did not opt in", route,
			[]func() (activities.ChargeOutcome, error){
				func() (activities.ChargeOutcome, error) {
					return at("sim-bank", declined(connector.DeclineGeneric)), nil
				},
			}, nil, []call{{"sim-bank", keyBank}}, nil, "A0001", "sim-bank", []string{"sim-bank:soft_decline"}},
		{"a soft decline goes on where it did", soft,
			[]func() (activities.ChargeOutcome, error){
				func() (activities.ChargeOutcome, error) {
					return at("sim-bank", declined(connector.DeclineGeneric)), nil
				},
				func() (activities.ChargeOutcome, error) { return at("stripe", approved(amount)), nil },
			}, nil, []call{{"sim-bank", keyBank}, {"stripe", keyStripe}}, nil, "0000", "stripe", []string{"sim-bank:soft_decline", "stripe:approved"}},
		{"an unknown outcome the inquiry finds approved stops there", route,
			[]func() (activities.ChargeOutcome, error){func() (activities.ChargeOutcome, error) { return activities.ChargeOutcome{}, timeout() }},
			[]activities.InquiryResult{{Found: true, Outcome: at("sim-bank", approved(amount))}},
			[]call{{"sim-bank", keyBank}}, []call{{"sim-bank", keyBank}}, "0000", "sim-bank", []string{"sim-bank:approved"}},
		{"an unknown outcome a final inquiry does not find moves on", route,
			[]func() (activities.ChargeOutcome, error){
				func() (activities.ChargeOutcome, error) { return activities.ChargeOutcome{}, timeout() },
				func() (activities.ChargeOutcome, error) { return at("stripe", approved(amount)), nil },
			},
			[]activities.InquiryResult{{Found: false, NeverCharged: true}},
			[]call{{"sim-bank", keyBank}, {"stripe", keyStripe}}, []call{{"sim-bank", keyBank}}, "0000", "stripe", []string{"sim-bank:down", "stripe:approved"}},
		{"an unknown outcome an inquiry that may lag does not find is charged again there, with its key", route,
			[]func() (activities.ChargeOutcome, error){
				func() (activities.ChargeOutcome, error) { return activities.ChargeOutcome{}, timeout() },
				func() (activities.ChargeOutcome, error) { return at("sim-bank", approved(amount)), nil },
			},
			[]activities.InquiryResult{{Found: false}},
			[]call{{"sim-bank", keyBank}, {"sim-bank", keyBank}}, []call{{"sim-bank", keyBank}}, "0000", "sim-bank", []string{"sim-bank:approved"}},
		// Three rounds, then four late looks (lookLate), all at the
		// connector that may have charged.
		{"an outcome that stays unknown never moves on", route,
			slices.Repeat([]func() (activities.ChargeOutcome, error){
				func() (activities.ChargeOutcome, error) { return activities.ChargeOutcome{}, timeout() },
			}, 7),
			slices.Repeat([]activities.InquiryResult{{Found: false}}, 7),
			slices.Repeat([]call{{"sim-bank", keyBank}}, 7),
			slices.Repeat([]call{{"sim-bank", keyBank}}, 7), "C0001", "sim-bank", []string{"sim-bank:unknown"}},
		{"an outcome a late look finds stops there", route,
			slices.Repeat([]func() (activities.ChargeOutcome, error){
				func() (activities.ChargeOutcome, error) { return activities.ChargeOutcome{}, timeout() },
			}, 4),
			[]activities.InquiryResult{{Found: false}, {Found: false}, {Found: false}, {Found: true, Outcome: at("sim-bank", approved(amount))}},
			slices.Repeat([]call{{"sim-bank", keyBank}}, 4),
			slices.Repeat([]call{{"sim-bank", keyBank}}, 4), "0000", "sim-bank", []string{"sim-bank:approved"}},
		{"the first skipped by its breaker, the second approves", route,
			[]func() (activities.ChargeOutcome, error){
				func() (activities.ChargeOutcome, error) {
					return activities.ChargeOutcome{}, temporal.NewNonRetryableApplicationError("breaker open", activities.ErrTypeAcquirerSkipped, nil)
				},
				func() (activities.ChargeOutcome, error) { return at("stripe", approved(amount)), nil },
			}, nil, []call{{"sim-bank", keyBank}, {"stripe", keyStripe}}, nil, "0000", "stripe", []string{"sim-bank:skipped", "stripe:approved"}},
		{"every connector down", route,
			[]func() (activities.ChargeOutcome, error){
				func() (activities.ChargeOutcome, error) { return activities.ChargeOutcome{}, down() },
				func() (activities.ChargeOutcome, error) { return activities.ChargeOutcome{}, down() },
				func() (activities.ChargeOutcome, error) { return activities.ChargeOutcome{}, down() },
			}, nil, []call{{"sim-bank", keyBank}, {"stripe", keyStripe}, {"sim-acquirer", keyAcq}}, nil, "C0001", "sim-bank", []string{"sim-bank:down", "stripe:down", "sim-acquirer:down"}},
		{"both down once, the first takes it on the next pass, with its own key again", twice,
			[]func() (activities.ChargeOutcome, error){
				func() (activities.ChargeOutcome, error) { return activities.ChargeOutcome{}, down() },
				func() (activities.ChargeOutcome, error) { return activities.ChargeOutcome{}, down() },
				func() (activities.ChargeOutcome, error) { return at("sim-bank", approved(amount)), nil },
			}, nil, []call{{"sim-bank", keyBank}, {"stripe", keyStripe}, {"sim-bank", keyBank}}, nil, "0000", "sim-bank",
			[]string{"sim-bank:down", "stripe:down", "sim-bank:approved"}},
		{"the budget ends it", budget,
			[]func() (activities.ChargeOutcome, error){
				func() (activities.ChargeOutcome, error) { return activities.ChargeOutcome{}, down() },
				func() (activities.ChargeOutcome, error) { return activities.ChargeOutcome{}, down() },
			}, nil, []call{{"sim-bank", keyBank}, {"stripe", keyStripe}}, nil, "C0001", "sim-bank", []string{"sim-bank:down", "stripe:down"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// steps are the charges, by connector, and the pauses that
			// end a workflow task, in the order they came.
			var steps []string
			acq := &acquirer{risk: accepted,
				authorise: func(n int) (activities.ChargeOutcome, error) {
					if n < len(tc.wantCalls) {
						steps = append(steps, tc.wantCalls[n].connector)
					}
					if n >= len(tc.answers) {
						t.Errorf("charge %d, want %d in all", n+1, len(tc.answers))
						return activities.ChargeOutcome{}, down()
					}
					return tc.answers[n]()
				},
				inquire: func(n int) (activities.InquiryResult, error) {
					if n >= len(tc.inquiries) {
						t.Errorf("inquiry %d, want %d in all", n+1, len(tc.inquiries))
						return activities.InquiryResult{}, nil
					}
					return tc.inquiries[n], nil
				}}
			env := newEnv(t, acq)
			env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
				if info.ActivityType.Name == "Accepted" {
					steps = append(steps, "task ends")
				}
			})
			var upserted []string
			env.OnUpsertTypedSearchAttributes(mock.Anything).Return(nil).Run(func(args mock.Arguments) {
				if v, ok := args.Get(0).(temporal.SearchAttributes).GetKeyword(workflows.SearchConnector); ok {
					upserted = append(upserted, v)
				}
			})
			in := orderInput("auto")
			plan := tc.plan
			in.Connector, in.Route = plan.Connectors[0], &plan
			res := run(t, env, in)
			// The search attribute moves to the connector that answered,
			// when it is not the first.
			var wantUpsert []string
			if tc.wantBy != plan.Connectors[0] {
				wantUpsert = []string{tc.wantBy}
			}
			if !slices.Equal(upserted, wantUpsert) {
				t.Errorf("Connector upserts %v, want %v", upserted, wantUpsert)
			}
			var calls, inqs []call
			for _, a := range acq.auths {
				if !a.Failover {
					t.Errorf("charge at %s without failover", a.Connector)
				}
				calls = append(calls, call{a.Connector, a.IdempotencyKey})
			}
			for _, q := range acq.inqs {
				inqs = append(inqs, call{q.Connector, q.IdempotencyKey})
			}
			if !slices.Equal(calls, tc.wantCalls) || !slices.Equal(inqs, tc.wantInqs) {
				t.Errorf("charges %v and inquiries %v, want %v and %v", calls, inqs, tc.wantCalls, tc.wantInqs)
			}
			if res.ResultCode != tc.wantCode || res.Connector != tc.wantBy {
				t.Errorf("result %s by %s, want %s by %s", res.ResultCode, res.Connector, tc.wantCode, tc.wantBy)
			}
			// A charge at another connector comes only after a task has
			// ended with the previous attempt in it (recordBeforeNext).
			for i := 1; i < len(steps); i++ {
				if steps[i] != "task ends" && steps[i-1] != "task ends" && steps[i] != steps[i-1] {
					t.Errorf("charged %s right after %s in one workflow task: %v", steps[i], steps[i-1], steps)
				}
			}
			var attempts []string
			for i, a := range acq.attempts {
				attempts = append(attempts, a.Connector+":"+a.Outcome)
				if a.Attempt != i+1 || a.TransactionID != txID {
					t.Errorf("attempt %d recorded as %+v", i+1, a)
				}
			}
			if !slices.Equal(attempts, tc.wantAttempts) {
				t.Errorf("recorded attempts %v, want %v", attempts, tc.wantAttempts)
			}
			if len(acq.attempts) > 0 && acq.attempts[0].Why != "route cards" {
				t.Errorf("the first attempt's why = %q, want route cards", acq.attempts[0].Why)
			}
			if len(acq.attempts) > 1 && acq.attempts[1].Why != "after sim-bank: "+acq.attempts[0].Outcome {
				t.Errorf("the second attempt's why = %q", acq.attempts[1].Why)
			}
			if len(acq.finish) != 1 || acq.finish[0].Connector != tc.wantBy {
				t.Errorf("the record names %+v, want %s", acq.finish, tc.wantBy)
			}
		})
	}
}

// TestFailoverPauseByVersion: the pause before the next connector is the
// activity that does nothing for orders that meet it now, and the 1 ms timer
// for orders that recorded version 1 of failover-recorded, which replay so.
func TestFailoverPauseByVersion(t *testing.T) {
	tests := []struct {
		name      string
		version   workflow.Version // 0: as a new order asks
		wantSteps []string         // up to the second charge
	}{
		{"now", 0, []string{"charge sim-bank", "activity Accepted", "charge stripe"}},
		{"recorded at version 1", 1, []string{"charge sim-bank", "timer 1ms", "charge stripe"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var steps []string
			acq := &acquirer{risk: accepted, authorise: func(n int) (activities.ChargeOutcome, error) {
				steps = append(steps, "charge "+[]string{"sim-bank", "stripe"}[min(n, 1)])
				if n == 0 {
					return activities.ChargeOutcome{}, down()
				}
				return at("stripe", approved(amount)), nil
			}}
			env := newEnv(t, acq)
			if tc.version != 0 {
				env.OnGetVersion("failover-recorded", workflow.DefaultVersion, 2).Return(tc.version)
			}
			env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
				steps = append(steps, "activity "+info.ActivityType.Name)
			})
			env.SetOnTimerScheduledListener(func(_ string, d time.Duration) {
				steps = append(steps, "timer "+d.String())
			})
			in := orderInput("auto")
			in.Connector, in.Route = "sim-bank", &routing.Plan{Connectors: []string{"sim-bank", "stripe"}, Route: "cards", MaxAttempts: 2}
			if res := run(t, env, in); res.ResultCode != "0000" || res.Connector != "stripe" {
				t.Fatalf("result %s by %s, want 0000 by stripe", res.ResultCode, res.Connector)
			}
			// The paid order's own activities and timers come after the
			// second charge.
			if len(steps) < len(tc.wantSteps) || !slices.Equal(steps[:len(tc.wantSteps)], tc.wantSteps) {
				t.Errorf("steps %v, want them to begin %v", steps, tc.wantSteps)
			}
		})
	}
}

// TestUnroutedOrderChargesAsBefore: an order without a route charges its
// connector alone, without failover, with the key orders always had.
func TestUnroutedOrderChargesAsBefore(t *testing.T) {
	acq := &acquirer{risk: accepted, authorise: func(int) (activities.ChargeOutcome, error) { return activities.ChargeOutcome{}, down() }}
	env := newEnv(t, acq)
	in := orderInput("auto")
	in.Connector = "sim-bank"
	res := run(t, env, in)
	if len(acq.auths) != 1 || acq.auths[0].Failover || acq.auths[0].Connector != "sim-bank" || acq.auths[0].IdempotencyKey != wantKey {
		t.Errorf("charges %+v, want one at sim-bank without failover", acq.auths)
	}
	if res.ResultCode != "C0001" || res.Connector != "sim-bank" {
		t.Errorf("result %s by %s", res.ResultCode, res.Connector)
	}
}

// TestFailedOverOrderStaysWhereItWasCharged: an order charged at its
// route's second connector, the first being down, is captured and refunded
// there, and its refund polled there.
func TestFailedOverOrderStaysWhereItWasCharged(t *testing.T) {
	acq := &acquirer{
		risk: accepted,
		authorise: func(n int) (activities.ChargeOutcome, error) {
			if n == 0 {
				return activities.ChargeOutcome{}, down()
			}
			return at("stripe", approved(0)), nil
		},
		refundStatus: func(int) refund.Status { return refund.Pending },
	}
	env := newEnv(t, acq)
	captureThenRefund(t, env)
	in := orderInput(capture.Manual)
	in.Connector, in.Route = "sim-bank", &routing.Plan{Connectors: []string{"sim-bank", "stripe"}, Route: "cards", MaxAttempts: 2}
	res := run(t, env, in)
	if res.Connector != "stripe" {
		t.Errorf("result connector %q, want stripe", res.Connector)
	}
	if len(acq.captures) != 1 || acq.captures[0].Connector != "stripe" {
		t.Errorf("captures %+v, want one at stripe", acq.captures)
	}
	if len(acq.refunds) != 1 || acq.refunds[0].Connector != "stripe" {
		t.Errorf("refunds %+v, want one at stripe", acq.refunds)
	}
	if len(acq.polls) == 0 {
		t.Fatal("the pending refund was never polled")
	}
	for _, p := range acq.polls {
		if p.Connector != "stripe" {
			t.Errorf("refund polled at %s, want stripe", p.Connector)
		}
	}
}
