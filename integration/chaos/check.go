package chaos

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/paygate/paygate/app"
	"github.com/paygate/paygate/internal/adapters/ledger"
	"github.com/paygate/paygate/internal/dev/railsim"
	"github.com/paygate/paygate/internal/dev/simbank"
	"github.com/paygate/paygate/internal/dev/simulator"
	"github.com/paygate/paygate/internal/domain/payout"
	"github.com/paygate/paygate/internal/domain/refund"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/models"
)

// Property is one safety property checked at the end, with what broke it.
type Property struct {
	Name       string
	Checked    int
	Violations []string
}

// Report is the end of a run: the properties and what the run did.
type Report struct {
	Properties []Property
	Payments   int
	Approved   int
	Operations int
	Charges    int
	Refunds    int
	Notices    int
	Refused    int // notification requests the receiver refused
	Payouts    int
	Transfers  int // at the rail
	Faults     []string
	// Answers counts the payments' last answers by result_info.
	Answers map[string]int
}

// Failed reports whether any property was broken.
func (r Report) Failed() bool {
	for _, p := range r.Properties {
		if len(p.Violations) > 0 {
			return true
		}
	}
	return false
}

// String renders the report as a table.
func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "payments %d (approved %d), captures and refunds %d, payouts %d; at the acquirer %d charges, %d refunds; at the rail %d transfers; %d notifications (receiver refused %d requests)\n",
		r.Payments, r.Approved, r.Operations, r.Payouts, r.Charges, r.Refunds, r.Transfers, r.Notices, r.Refused)
	fmt.Fprintf(&b, "faults: %s\n", strings.Join(r.Faults, ", "))
	fmt.Fprintf(&b, "answers:")
	for _, k := range sortedKeys(r.Answers) {
		fmt.Fprintf(&b, " %s ×%d;", k, r.Answers[k])
	}
	b.WriteString("\n\n")
	b.WriteString("| property | checked | violations | first |\n|---|---|---|---|\n")
	for _, p := range r.Properties {
		first := ""
		if len(p.Violations) > 0 {
			first = p.Violations[0]
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %s |\n", p.Name, p.Checked, len(p.Violations), first)
	}
	return b.String()
}

// Quiesce waits until no order is pending, no refund or notification is
// pending and nothing changed (disputes included) for five seconds, or
// until the deadline; then its error names what was still pending.
func (s *Stack) Quiesce(ctx context.Context, within time.Duration) error {
	deadline := time.Now().Add(within)
	last, stable := "", 0
	for {
		w := s.pending(ctx)
		now := w.String()
		if w.empty() && now == last {
			stable++
		} else {
			stable = 0
		}
		if stable >= 5 {
			return nil
		}
		if !w.empty() && time.Until(deadline)%(5*time.Second) < time.Second {
			s.opts.Logf("waiting for %d orders, %d refunds, %d notifications, %d payouts, %d dispute callbacks; %s",
				len(w.orders), len(w.refunds), len(w.notices), len(w.payouts), len(w.disputes), s.noticeDetails(ctx, w.notices))
		}
		last = now
		if time.Now().After(deadline) {
			return fmt.Errorf("not quiet after %s: %s", within, s.describePending(ctx, w))
		}
		pause(ctx, time.Second)
	}
}

// waiting is what Quiesce waits for: the ids still pending, and counts that
// must hold still.
type waiting struct {
	orders, refunds, notices, payouts, disputes []string
	counts                                      string
}

func (w waiting) empty() bool {
	return len(w.orders)+len(w.refunds)+len(w.notices)+len(w.payouts)+len(w.disputes) == 0
}

func (w waiting) String() string {
	return fmt.Sprint(w.orders, w.refunds, w.notices, w.payouts, w.disputes, w.counts)
}

func (s *Stack) pending(ctx context.Context) waiting {
	db := s.DB.DB.WithContext(ctx)
	var w waiting
	var orders, attempts, held int64
	// A query that fails counts as something pending, named in counts, so
	// that an error is never taken for quiet.
	for _, err := range []error{
		db.Model(&models.Order{}).Where("payment_status = ?", status.Pending).Order("transaction_id").Pluck("transaction_id", &w.orders).Error,
		db.Model(&models.Refund{}).Where("status = ?", refund.Pending).Order("refund_reference_id").Pluck("refund_reference_id", &w.refunds).Error,
		db.Model(&models.Notification{}).Where("status = ?", models.NotifyPending).Order("notify_id").Pluck("notify_id", &w.notices).Error,
		db.Model(&models.Payout{}).Where("status NOT IN ?", []string{string(payout.StatusCompleted), string(payout.StatusFailed)}).
			Order("transaction_id").Pluck("transaction_id", &w.payouts).Error,
		db.Model(&models.Order{}).Count(&orders).Error,
		db.Model(&models.NotificationAttempt{}).Count(&attempts).Error,
		// Disputes come a second after their capture: the acquirer's and
		// the record's count must hold still too.
		db.Model(&models.Dispute{}).Where("held").Count(&held).Error,
	} {
		if err != nil {
			w.orders = append(w.orders, "(query failed: "+err.Error()+")")
		}
	}
	raised := s.Simulator().Disputes()
	for _, d := range raised {
		if d.CallbackPending {
			w.disputes = append(w.disputes, d.DisputeID)
		}
	}
	w.counts = fmt.Sprint(orders, attempts, len(raised), held)
	return w
}

// describePending names what Quiesce still waited for and, for pending
// orders and payouts, what their workflows were doing, so that a run that
// does not settle says why.
func (s *Stack) describePending(ctx context.Context, w waiting) string {
	var b strings.Builder
	list := func(what string, ids []string) {
		if len(ids) == 0 {
			return
		}
		fmt.Fprintf(&b, "%d %s pending (%s); ", len(ids), what, strings.Join(firstFew(ids, 5), ", "))
	}
	list("orders", w.orders)
	list("refunds", w.refunds)
	list("notifications", w.notices)
	list("payouts", w.payouts)
	list("dispute callbacks at the acquirer", w.disputes)
	b.WriteString(s.noticeDetails(ctx, w.notices))
	c, err := s.temporalClient(ctx)
	if err != nil {
		return b.String() + err.Error()
	}
	defer c.Close()
	var wfIDs []string
	db := s.DB.DB.WithContext(ctx)
	// A pending refund or notification is its order's workflow's to settle:
	// that workflow is described too, running (on a timer, say) or not.
	owners := firstFew(w.orders, 3)
	for _, q := range []struct {
		model any
		key   string
		ids   []string
	}{
		{&models.Refund{}, "refund_reference_id", w.refunds},
		{&models.Notification{}, "notify_id", w.notices},
	} {
		if len(q.ids) == 0 {
			continue
		}
		var txs []string
		if err := db.Model(q.model).Where(q.key+" IN ?", firstFew(q.ids, 3)).Distinct().Pluck("transaction_id", &txs).Error; err != nil {
			fmt.Fprintf(&b, "find the orders of %s: %v; ", q.key, err)
		}
		owners = append(owners, txs...)
	}
	if len(owners) > 0 {
		if err := db.Model(&models.Order{}).Where("transaction_id IN ?", owners).Distinct().Pluck("workflow_id", &wfIDs).Error; err != nil {
			fmt.Fprintf(&b, "find the workflows of %v: %v; ", owners, err)
		} else if len(wfIDs) == 0 {
			fmt.Fprintf(&b, "no order recorded for %v; ", owners)
		}
	}
	if len(w.payouts) > 0 {
		var ids []string
		db.Model(&models.Payout{}).Where("transaction_id IN ?", firstFew(w.payouts, 3)).Pluck("id", &ids)
		wfIDs = append(wfIDs, ids...)
	}
	for _, id := range wfIDs {
		d, err := c.DescribeWorkflowExecution(ctx, id, "")
		if err != nil {
			fmt.Fprintf(&b, "%s: %v; ", id, err)
			continue
		}
		fmt.Fprintf(&b, "%s: %s", id, d.WorkflowExecutionInfo.GetStatus())
		for _, a := range d.PendingActivities {
			fmt.Fprintf(&b, ", activity %s attempt %d (%s)", a.ActivityType.GetName(), a.Attempt, a.GetLastFailure().GetMessage())
		}
		if t := d.PendingWorkflowTask; t != nil {
			fmt.Fprintf(&b, ", workflow task since %s", t.ScheduledTime.AsTime().Format(time.TimeOnly))
		}
		fmt.Fprintf(&b, ", its history ends: %s; ", historyTail(ctx, c, id, 12))
	}
	return b.String()
}

// historyTail names the last n events of the workflow's latest run, with
// the activity, timer, update or signal each is about: where a workflow
// that does not settle waits.
func historyTail(ctx context.Context, c client.Client, id string, n int) string {
	var tail []string
	it := c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return strings.Join(append(tail, "(history: "+err.Error()+")"), ", ")
		}
		name := strings.TrimPrefix(e.GetEventType().String(), "EVENT_TYPE_")
		switch {
		case e.GetActivityTaskScheduledEventAttributes() != nil:
			name += " " + e.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName()
		case e.GetTimerStartedEventAttributes() != nil:
			name += " " + e.GetTimerStartedEventAttributes().GetStartToFireTimeout().AsDuration().String()
		case e.GetMarkerRecordedEventAttributes() != nil:
			name += " " + e.GetMarkerRecordedEventAttributes().GetMarkerName()
		case e.GetWorkflowExecutionUpdateAcceptedEventAttributes() != nil:
			name += " " + e.GetWorkflowExecutionUpdateAcceptedEventAttributes().GetAcceptedRequest().GetInput().GetName()
		case e.GetWorkflowExecutionSignaledEventAttributes() != nil:
			name += " " + e.GetWorkflowExecutionSignaledEventAttributes().GetSignalName()
		}
		tail = append(tail, fmt.Sprintf("%d %s", e.GetEventId(), name))
		if len(tail) > n {
			tail = tail[1:]
		}
	}
	return strings.Join(tail, ", ")
}

// noticeDetails says how far the first pending notifications got.
func (s *Stack) noticeDetails(ctx context.Context, ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	var rows []models.Notification
	s.DB.DB.WithContext(ctx).Where("notify_id IN ?", firstFew(ids, 3)).Find(&rows)
	var b strings.Builder
	for _, n := range rows {
		fmt.Fprintf(&b, "%s made %.0fs ago, %d attempts", n.NotifyID, time.Since(n.CreatedAt).Seconds(), n.Attempts)
		if n.LastAttemptAt != nil {
			fmt.Fprintf(&b, ", the last %.0fs ago (%d %s)", time.Since(*n.LastAttemptAt).Seconds(), n.LastStatusCode, n.LastError)
		}
		b.WriteString("; ")
	}
	return b.String()
}

func firstFew(ids []string, n int) []string {
	if len(ids) > n {
		return ids[:n]
	}
	return ids
}

// Check compares what the traffic was told, what the record holds, what
// the acquirer did, what the receiver got and what Temporal ran.
func (s *Stack) Check(ctx context.Context, tr *Traffic) (Report, error) {
	var rep Report
	db := s.DB.DB.WithContext(ctx)
	var orders []models.Order
	if err := db.Where("account_id IN ?", []string{s.Auto.AccountID, s.Manual.AccountID, s.Routed.AccountID}).Find(&orders).Error; err != nil {
		return rep, err
	}
	byTx := make(map[string]*models.Order, len(orders))
	byNo := make(map[string]*models.Order, len(orders))
	for i := range orders {
		byTx[orders[i].TransactionID] = &orders[i]
		byNo[orders[i].OrderNo] = &orders[i]
	}
	var refunds []models.Refund
	if err := db.Find(&refunds).Error; err != nil {
		return rep, err
	}
	var notices []models.Notification
	if err := db.Order("transaction_id, seq").Find(&notices).Error; err != nil {
		return rep, err
	}
	sim := s.Simulator()
	charges, simRefunds := sim.Charges(), sim.Refunds()
	payments, ops := tr.Payments(), tr.Operations()
	seen, byOrder, refused := s.Receiver.snapshot()
	rep.Answers = map[string]int{}
	for _, p := range payments {
		info := p.ResultInfo
		if p.Status == "" {
			info = "(no answer)"
		}
		rep.Answers[info]++
	}
	rep.Payments, rep.Operations, rep.Charges, rep.Refunds, rep.Notices, rep.Refused =
		len(payments), len(ops), len(charges), len(simRefunds), len(notices), refused

	// Both acquirers' charges, read once for the checks that count them.
	charged := s.acquiredCharges()
	rep.Properties = append(rep.Properties,
		answersRecorded(payments, ops, byNo, refunds, &rep),
		chargedOnce(charged),
		noOrphanCharges(charged, byTx),
		refundsMatch(charges, simRefunds, byTx, refunds),
		notificationsDelivered(notices, seen, byOrder),
	)
	var payouts []models.Payout
	if err := db.Where("account_id = ?", s.Payer.AccountID).Find(&payouts).Error; err != nil {
		return rep, err
	}
	transfers, err := s.rail.Transfers()
	if err != nil {
		return rep, err
	}
	sent := tr.Payouts()
	rep.Payouts, rep.Transfers = len(sent), len(transfers)
	rep.Properties = append(rep.Properties, payoutsPaidOnce(sent, payouts, transfers))
	wf, err := s.workflowsHealthy(ctx)
	if err != nil {
		return rep, err
	}
	rep.Properties = append(rep.Properties, wf)
	var cvv int64
	if err := db.Model(&models.VaultCard{}).Where("cvv_sealed IS NOT NULL").Count(&cvv).Error; err != nil {
		return rep, err
	}
	p := Property{Name: "no sealed CVV kept", Checked: len(orders)}
	if cvv > 0 {
		p.Violations = append(p.Violations, fmt.Sprintf("%d vault cards still hold a sealed CVV", cvv))
	}
	rep.Properties = append(rep.Properties, p)
	var disputes []models.Dispute
	if err := db.Find(&disputes).Error; err != nil {
		return rep, err
	}
	rep.Properties = append(rep.Properties, disputesHeld(sim.Disputes(), disputes))
	lp, err := ledgerTrue(ctx, s)
	if err != nil {
		return rep, err
	}
	rep.Properties = append(rep.Properties, lp)
	return rep, nil
}

// disputesHeld: every dispute the acquirer raised was taken by the gateway
// (its callback, sent again while the gateway was down, answered 200), is
// recorded, and its money held.
func disputesHeld(raised []simulator.Dispute, recorded []models.Dispute) Property {
	p := Property{Name: "every dispute raised is taken, recorded and held"}
	byRef := map[string]models.Dispute{}
	for _, d := range recorded {
		byRef[d.ConnectorRef] = d
	}
	for _, d := range raised {
		p.Checked++
		got, ok := byRef[d.DisputeID]
		switch {
		case d.CallbackStatus != http.StatusOK:
			p.Violations = append(p.Violations, fmt.Sprintf("%s: callback answered %d after %d attempts", d.DisputeID, d.CallbackStatus, d.CallbackAttempts))
		case !ok:
			p.Violations = append(p.Violations, d.DisputeID+": told of, never recorded")
		case !got.Held:
			p.Violations = append(p.Violations, d.DisputeID+": recorded "+got.Status+", money not held")
		}
	}
	return p
}

// paidStatuses are the payment statuses of an order whose charge stands.
var paidStatuses = map[status.Payment]bool{
	status.Authorised: true, status.Paid: true, status.Refunded: true, status.PartiallyRefunded: true,
}

func answersRecorded(payments []Payment, ops []Operation, byNo map[string]*models.Order, refunds []models.Refund, rep *Report) Property {
	p := Property{Name: "every success answer is recorded so"}
	for _, pay := range payments {
		if pay.Status != "1" {
			continue
		}
		rep.Approved++
		p.Checked++
		o := byNo[pay.OrderNo]
		switch {
		case o == nil:
			p.Violations = append(p.Violations, pay.OrderNo+": approved, not recorded")
		case !paidStatuses[o.PaymentStatus] && o.PaymentStatus != status.Cancelled:
			p.Violations = append(p.Violations, fmt.Sprintf("%s: approved, recorded %d", pay.OrderNo, o.PaymentStatus))
		case o.Amount != pay.Amount:
			p.Violations = append(p.Violations, fmt.Sprintf("%s: approved %d, recorded %d", pay.OrderNo, pay.Amount, o.Amount))
		}
	}
	refunded := map[string]int64{}
	for _, r := range refunds {
		if r.Status != refund.Failed {
			refunded[r.TransactionID] += r.Amount
		}
	}
	for _, op := range ops {
		if !op.Success {
			continue
		}
		p.Checked++
		o := byNo[op.OrderNo]
		switch {
		case o == nil:
			p.Violations = append(p.Violations, op.OrderNo+": "+op.Kind+" answered, order not recorded")
		case op.Kind == "capture" && o.CapturedAmount != op.Amount:
			p.Violations = append(p.Violations, fmt.Sprintf("%s: capture of %d answered, %d recorded", op.OrderNo, op.Amount, o.CapturedAmount))
		case op.Kind == "refund" && refunded[op.TransactionID] < op.Amount:
			p.Violations = append(p.Violations, fmt.Sprintf("%s: refund of %d answered, %d recorded", op.OrderNo, op.Amount, refunded[op.TransactionID]))
		}
	}
	return p
}

// acquired is a charge at either acquirer, as the checks read it.
type acquired struct {
	Connector, ID, Reference string
	Approved, Voided         bool
	At                       time.Time
}

// acquiredCharges are the charges both acquirers made: a routed order may
// be charged at either, and must be charged at one only.
func (s *Stack) acquiredCharges() []acquired {
	var out []acquired
	for _, c := range s.Simulator().Charges() {
		out = append(out, acquired{"sim-acquirer", c.ChargeID, c.Reference, c.Status == simulator.StatusApproved, c.Voided, c.CreatedAt})
	}
	for _, p := range s.bank.Payments() {
		approved := p.State == simbank.StateAuthorised || p.State == simbank.StateCaptured || p.State == simbank.StateReversed
		out = append(out, acquired{"sim-bank", p.PaymentID, p.MerchantRef, approved, p.State == simbank.StateReversed, p.CreatedAt})
	}
	return out
}

func chargedOnce(charges []acquired) Property {
	p := Property{Name: "no order charged twice"}
	approved := map[string][]string{}
	for _, c := range charges {
		if c.Approved {
			approved[c.Reference] = append(approved[c.Reference], c.Connector+" "+c.ID)
		}
	}
	for _, ref := range sortedKeys(approved) {
		p.Checked++
		if at := approved[ref]; len(at) > 1 {
			p.Violations = append(p.Violations, fmt.Sprintf("order %s charged %d times: %s", ref, len(at), strings.Join(at, ", ")))
		}
	}
	return p
}

func noOrphanCharges(charges []acquired, byTx map[string]*models.Order) Property {
	p := Property{Name: "every charge belongs to an order recorded paid"}
	for _, c := range charges {
		if !c.Approved || c.Voided {
			continue
		}
		p.Checked++
		o := byTx[c.Reference]
		switch {
		case o == nil:
			p.Violations = append(p.Violations, fmt.Sprintf("%s charge %s for %s: no such order", c.Connector, c.ID, c.Reference))
		case !paidStatuses[o.PaymentStatus]:
			p.Violations = append(p.Violations, fmt.Sprintf("%s charge %s (made %s): order %s recorded %d %s at %s, connector ref %q, created %s, workflow %s",
				c.Connector, c.ID, c.At.Format("15:04:05.000"), c.Reference, o.PaymentStatus, o.ResultCode, o.Connector, o.ConnectorRef, o.CreatedAt.Format("15:04:05.000"), o.WorkflowID))
		case o.Connector != c.Connector:
			p.Violations = append(p.Violations, fmt.Sprintf("%s charge %s: order %s records %s", c.Connector, c.ID, c.Reference, o.Connector))
		}
	}
	return p
}

// movedOn checks that, with sim-acquirer down or slow, routed payments
// were charged at sim-bank.
func (s *Stack) movedOn(payments []Payment) Property {
	p := Property{Name: "routed payments moved to sim-bank while sim-acquirer failed"}
	atBank := map[string]bool{}
	for _, b := range s.bank.Payments() {
		atBank[b.MerchantRef] = true
	}
	moved := 0
	for _, pay := range payments {
		if pay.Routed && pay.Status == "1" {
			p.Checked++
			if atBank[pay.TransactionID] {
				moved++
			}
		}
	}
	if moved == 0 {
		p.Violations = append(p.Violations, fmt.Sprintf("none of %d approved routed payments was charged at sim-bank", p.Checked))
	}
	return p
}

func refundsMatch(charges []simulator.Charge, simRefunds []simulator.Refund, byTx map[string]*models.Order, refunds []models.Refund) Property {
	p := Property{Name: "refunds at the acquirer equal refunds recorded"}
	chargeTx := map[string]string{}
	for _, c := range charges {
		chargeTx[c.ChargeID] = c.Reference
	}
	atAcquirer := map[string]int64{}
	for _, r := range simRefunds {
		if r.Status != simulator.RefundFailed {
			atAcquirer[chargeTx[r.ChargeID]] += r.Amount
		}
	}
	recorded := map[string]int64{}
	for _, r := range refunds {
		if r.Status != refund.Failed {
			recorded[r.TransactionID] += r.Amount
		}
	}
	for tx, o := range byTx {
		if o.RefundedAmount > 0 && recorded[tx] == 0 {
			recorded[tx] = 0 // the order says refunded; the rows must agree
		}
	}
	txs := map[string]bool{}
	for tx := range atAcquirer {
		txs[tx] = true
	}
	for tx := range recorded {
		txs[tx] = true
	}
	for _, tx := range sortedKeys(txs) {
		p.Checked++
		a, r := atAcquirer[tx], recorded[tx]
		var orderAmt int64 = -1
		if o := byTx[tx]; o != nil {
			orderAmt = o.RefundedAmount
		}
		if a != r || orderAmt != r {
			p.Violations = append(p.Violations, fmt.Sprintf("order %s: acquirer refunded %d, refunds recorded %d, order says %d", tx, a, r, orderAmt))
		}
	}
	return p
}

func notificationsDelivered(notices []models.Notification, seen map[string]int, byOrder map[string][]string) Property {
	p := Property{Name: "every notification delivered, same notify_id, in order"}
	perOrder := map[string][]string{}
	for _, n := range notices {
		p.Checked++
		perOrder[subjectOf(n.NotifyID)] = append(perOrder[subjectOf(n.NotifyID)], n.NotifyID)
		if n.Status != models.NotifyDelivered {
			p.Violations = append(p.Violations, fmt.Sprintf("%s: %s after %d attempts", n.NotifyID, n.Status, n.Attempts))
		} else if seen[n.NotifyID] == 0 {
			p.Violations = append(p.Violations, n.NotifyID+": recorded delivered, never received")
		}
	}
	for subject, got := range byOrder {
		want := perOrder[subject]
		if strings.Join(got, ",") != strings.Join(want, ",") {
			p.Violations = append(p.Violations, fmt.Sprintf("%s: received %v, recorded %v", subject, got, want))
		}
	}
	return p
}

// workflowsHealthy finds workflows that failed, timed out or were
// terminated, and running ones that are stuck: a workflow task nobody took
// for a minute or an activity failing again and again.
func (s *Stack) workflowsHealthy(ctx context.Context) (Property, error) {
	p := Property{Name: "no workflow failed or stuck"}
	c, err := s.temporalClient(ctx)
	if err != nil {
		return p, err
	}
	defer c.Close()
	var token []byte
	for {
		page, err := c.ListWorkflow(ctx, listRequest(token))
		if err != nil {
			return p, fmt.Errorf("list workflows: %w", err)
		}
		for _, e := range page.Executions {
			p.Checked++
			id := e.Execution.WorkflowId
			switch st := e.Status.String(); st {
			case "Completed", "ContinuedAsNew":
			case "Running":
				d, err := c.DescribeWorkflowExecution(ctx, id, e.Execution.RunId)
				if err != nil {
					return p, fmt.Errorf("describe %s: %w", id, err)
				}
				if t := d.PendingWorkflowTask; t != nil && time.Since(t.ScheduledTime.AsTime()) > time.Minute {
					p.Violations = append(p.Violations, id+": workflow task waiting since "+t.ScheduledTime.AsTime().Format(time.TimeOnly))
				}
				for _, a := range d.PendingActivities {
					if a.Attempt > 5 {
						p.Violations = append(p.Violations, fmt.Sprintf("%s: activity %s on attempt %d", id, a.ActivityType.GetName(), a.Attempt))
					}
				}
			default:
				p.Violations = append(p.Violations, id+": "+st)
			}
		}
		if token = page.NextPageToken; len(token) == 0 {
			return p, nil
		}
	}
}

// temporalClient dials the stack's Temporal server with the gateway's
// payload codec.
func (s *Stack) temporalClient(ctx context.Context) (client.Client, error) {
	dc, fc, err := app.TemporalConverters(s.DB.Keys)
	if err != nil {
		return nil, err
	}
	s.tMu.Lock()
	addr := s.tsrv.HostPort()
	s.tMu.Unlock()
	c, err := client.DialContext(ctx, client.Options{HostPort: addr, DataConverter: dc, FailureConverter: fc})
	if err != nil {
		return nil, fmt.Errorf("dial temporal: %w", err)
	}
	return c, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// payoutsPaidOnce: a payout answered COMPLETED is recorded so; one recorded
// COMPLETED was paid at the rail exactly once, for its amount; the rail paid
// nothing the record does not hold as completed.
func payoutsPaidOnce(sent []PayoutReq, payouts []models.Payout, transfers []railsim.Transfer) Property {
	p := Property{Name: "every payout paid once, as recorded"}
	byRequest := map[string]models.Payout{}
	byID := map[string]models.Payout{}
	for _, po := range payouts {
		byRequest[po.RequestID] = po
		byID[po.ID] = po
	}
	paid := map[string][]railsim.Transfer{}
	for _, t := range transfers {
		if t.Status == railsim.StatusCompleted {
			paid[t.IdempotencyKey] = append(paid[t.IdempotencyKey], t)
		}
	}
	for _, s := range sent {
		if s.Status != string(payout.StatusCompleted) {
			continue
		}
		p.Checked++
		if po, ok := byRequest[s.RequestID]; !ok || po.Status != string(payout.StatusCompleted) {
			p.Violations = append(p.Violations, fmt.Sprintf("payout %s answered COMPLETED, recorded %q", s.RequestID, po.Status))
		}
	}
	for _, po := range payouts {
		p.Checked++
		ts := paid[po.ID]
		switch {
		case po.Status == string(payout.StatusCompleted) && len(ts) != 1:
			p.Violations = append(p.Violations, fmt.Sprintf("payout %s recorded COMPLETED, paid %d times at the rail", po.RequestID, len(ts)))
		case po.Status == string(payout.StatusCompleted) && ts[0].Amount != po.TransferAmount:
			p.Violations = append(p.Violations, fmt.Sprintf("payout %s: the rail paid %d, recorded %d", po.RequestID, ts[0].Amount, po.TransferAmount))
		case po.Status != string(payout.StatusCompleted) && len(ts) > 0:
			p.Violations = append(p.Violations, fmt.Sprintf("payout %s recorded %s, yet paid at the rail", po.RequestID, po.Status))
		}
	}
	for key := range paid {
		if _, ok := byID[key]; !ok {
			p.Violations = append(p.Violations, "the rail paid "+key+", which no payout holds")
		}
	}
	return p
}

// ledgerTrue: the ledger's invariants hold after everything the faults
// did (ledger.Check: entries balance, balances are their lines, nothing
// negative that must not be, the receivable, pending money and dispute
// holds are what the open captures, refunds and disputes say). Checked
// counts the entries.
func ledgerTrue(ctx context.Context, s *Stack) (Property, error) {
	p := Property{Name: "the ledger balances"}
	var n int64
	if err := s.DB.DB.WithContext(ctx).Model(&models.JournalEntry{}).Count(&n).Error; err != nil {
		return p, err
	}
	p.Checked = int(n)
	violations, err := ledger.New(s.DB.DB).Check(ctx)
	if err != nil {
		return p, err
	}
	for _, v := range violations {
		p.Violations = append(p.Violations, fmt.Sprintf("%s %s/%s %s: %s", v.Rule, v.MerchantID, v.AccountID, v.Currency, v.Detail))
	}
	return p, nil
}
