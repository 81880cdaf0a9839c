package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Step is a fault applied at a moment of the traffic.
type Step struct {
	At    time.Duration
	Fault Fault
}

// Plan is a run: traffic at Rate payments a second for Traffic, and the
// faults at their moments, each moved by up to Jitter either way so that
// they land at random points of a payment.
type Plan struct {
	Rate    float64
	Traffic time.Duration
	Steps   []Step
	Jitter  time.Duration
	Seed    uint64
	// Cards, when set, replaces the traffic's card rotation.
	Cards []string
	// AllRouted sends every payment to the account routed over both
	// acquirers: a fault of sim-acquirer then meets routed payments before
	// the failures of any other account's open its breaker.
	AllRouted bool
}

// ShortPlan is the two-minute run of `make test`: the worker killed twice,
// the acquirer failing half its operations, and then down and slow, while
// routed traffic moves to the second acquirer.
func ShortPlan(seed uint64) Plan {
	return Plan{Rate: 4, Traffic: 85 * time.Second, Jitter: 4 * time.Second, Seed: seed, Steps: []Step{
		{15 * time.Second, KillWorker},
		{30 * time.Second, AcquirerErrors},
		{45 * time.Second, ConnectorDown},
		{55 * time.Second, KillWorker},
		{66 * time.Second, ConnectorSlow},
	}}
}

// FullPlan is the ten-minute run of `make chaos`: every fault alone, then
// in pairs.
func FullPlan(seed uint64) Plan {
	return Plan{Rate: 5, Traffic: 9 * time.Minute, Jitter: 5 * time.Second, Seed: seed, Steps: []Step{
		{20 * time.Second, KillWorker},
		{50 * time.Second, KillAPI},
		{80 * time.Second, RestartTemporal},
		{120 * time.Second, AcquirerErrors},
		{150 * time.Second, RestartPostgres},
		{190 * time.Second, AcquirerHangs},
		{220 * time.Second, RestartAcquirer},
		{250 * time.Second, KillWorker},
		{280 * time.Second, KillAPI},
		{320 * time.Second, Together(KillWorker, RestartTemporal)},
		{370 * time.Second, Together(KillAPI, AcquirerErrors)},
		{420 * time.Second, Together(RestartPostgres, KillWorker)},
		{470 * time.Second, Together(RestartAcquirer, KillWorker, KillAPI)},
		{495 * time.Second, ConnectorDown},
		{515 * time.Second, Together(ConnectorSlow, KillWorker)},
	}}
}

// Run drives the plan's traffic, applies its faults, waits for the stack to
// settle and checks it.
func Run(ctx context.Context, s *Stack, plan Plan) (Report, error) {
	rnd := rand.New(rand.NewPCG(plan.Seed, plan.Seed^0x9e3779b97f4a7c15))
	tr := NewTraffic(s)
	if len(plan.Cards) > 0 {
		tr.cards = plan.Cards
	}
	tr.allRouted = plan.AllRouted
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		tr.Run(ctx, plan.Rate, plan.Traffic)
	}()
	var applied []string
	for _, st := range plan.Steps {
		at := st.At
		if plan.Jitter > 0 {
			at += time.Duration(rnd.Int64N(int64(2*plan.Jitter))) - plan.Jitter
		}
		pause(ctx, time.Until(start.Add(at)))
		if ctx.Err() != nil {
			break
		}
		s.opts.Logf("%5.1fs  %s", time.Since(start).Seconds(), st.Fault.Name)
		if err := st.Fault.Apply(ctx, s); err != nil {
			return Report{}, fmt.Errorf("%s: %w", st.Fault.Name, err)
		}
		applied = append(applied, fmt.Sprintf("%s at %.0fs", st.Fault.Name, at.Seconds()))
	}
	<-done
	s.opts.Logf("%5.1fs  traffic done; waiting for quiet", time.Since(start).Seconds())
	quietErr := s.Quiesce(ctx, 4*time.Minute)
	s.opts.Logf("%5.1fs  quiet", time.Since(start).Seconds())
	rep, err := s.Check(ctx, tr)
	if err != nil {
		return rep, err
	}
	rep.Faults = applied
	for _, f := range applied {
		if strings.HasPrefix(f, ConnectorDown.Name) || strings.HasPrefix(f, ConnectorSlow.Name) {
			rep.Properties = append(rep.Properties, s.movedOn(tr.Payments()))
			break
		}
	}
	if quietErr != nil {
		rep.Properties = append(rep.Properties, Property{Name: "quiet at the end", Checked: 1, Violations: []string{quietErr.Error()}})
	}
	return rep, nil
}
