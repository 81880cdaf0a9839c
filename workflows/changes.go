package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Change ids: each names one change to a workflow's code that running
// workflows must replay around (workflow.GetVersion). Every change is asked
// the same way, through version (orders: answered from the order's shape
// when the shape settles it, shape.go) or workflow.GetVersion (payouts).
// The strings are recorded in histories and never change; docs/versioning.md
// says what each guards and when its old branch can go.
const (
	// changeLedgerPosting: orders post to the ledger; orders recorded
	// before post nothing and replay as they ran.
	changeLedgerPosting = "ledger-posting"
	// changeContinueAsNew: orders continue as new when their history
	// grows long; orders begun before never do.
	changeContinueAsNew = "order-continue-as-new"
	// changeCallbackInquiry: a 3-D Secure or APM callback only wakes the
	// order, which then asks the provider; orders that handled a callback
	// before replay the callback's word.
	changeCallbackInquiry = "callback-inquiry"
	// changeStoredCards: orders keep their card for the merchant and
	// start subscriptions; orders begun before replay without either.
	changeStoredCards = "stored-cards"
	// changeUnknownOutcomes: an acquirer that never answered is not taken
	// for a refusal: a refund stays pending and is sent again, and a void
	// at the authorisation's end is resolved without failing the order.
	changeUnknownOutcomes = "unknown-outcomes"
	// changePayoutUnknownSubmission: a submission the rail answered
	// neither way keeps the money reserved; runs that met it before
	// released the money, and replay that.
	changePayoutUnknownSubmission = "payout-unknown-submission"
	// changeSubscriptionSearch: subscriptions show their status as a search
	// attribute (SubscriptionStatus); runs begun before replay without it.
	changeSubscriptionSearch = "subscription-search-status"
	// changeFailoverRecorded: a routed order ends its workflow task before
	// charging the next connector, so a worker that dies cannot leave a
	// charge there unknown; orders that failed over before replay without.
	// Version 1 ended the task with a 1 ms timer, version 2 with the
	// activity that does nothing (Accepted).
	changeFailoverRecorded = "failover-recorded"
	// changePayoutLocalRail: a payout's rail calls (find, submit, read)
	// run as local activities inside the workflow task; runs begun before
	// replay them as activities on the task queue.
	changePayoutLocalRail = "payout-local-rail"
	// changeDisputeStaleAnswer: an inquiry answered while the merchant's
	// answer moved the dispute is asked again; runs that met it before
	// applied the older answer, and replay that.
	changeDisputeStaleAnswer = "dispute-stale-answer"
	// changeDisputeRefusedAnswer: a merchant's answer the acquirer refuses
	// has the dispute ask the acquirer at once and refuse the answer as
	// not awaited; runs that met a refusal before failed the update with
	// the acquirer's error, and replay that.
	changeDisputeRefusedAnswer = "dispute-refused-answer"
	// changeDisputeInquiryLost: an inquiry lost or accepted holds and
	// takes the disputed money, which the acquirer took back; runs that
	// lost an inquiry before moved no money, and replay that.
	changeDisputeInquiryLost = "dispute-inquiry-lost"
	// changeDisputeHoldRefused: a hold the ledger refused leaves the
	// dispute not held; runs that met a refusal before counted it held and
	// tried to release or take it, and replay that.
	changeDisputeHoldRefused = "dispute-hold-refused"
	// changeDisputeFirstAskAgain: a dispute whose first inquiry the
	// acquirer refused asks again for a week; runs that met a refusal
	// before ended at once, and replay that.
	changeDisputeFirstAskAgain = "dispute-first-ask-again"
	// changeDisputeAskedAgain: a dispute the acquirer moves from under
	// review back to needs_response at the same stage takes a new answer
	// and has a deadline again; runs that met such a move before kept the
	// first answer as given (a new one refused, no deadline), and replay
	// that.
	changeDisputeAskedAgain = "dispute-asked-again"
	// changeDisputeAcquirerFee: a dispute takes the fee its acquirer
	// reports (connector.Dispute.FeeKnown) until its hold; a worker of the
	// code before would hold or take 15 major units beside it. Asked only
	// when the acquirer reported a fee, which no fact recorded before did.
	changeDisputeAcquirerFee = "dispute-acquirer-fee"
	// changeDisputeContinueAsNew: a dispute continues as new after its
	// run's share of wakes (or on Temporal's suggestion); runs begun before
	// that reach it replay without, and never continue.
	changeDisputeContinueAsNew = "dispute-continue-as-new"
	// changeIdleSavedThenMoved: a first run that saved its state for
	// reopening when idle, then took an operation that ended the order
	// (refunded in full), saves its final state as it ends; runs that met
	// it before left the paid state saved, and replay that.
	changeIdleSavedThenMoved = "idle-saved-then-moved"
	// changeRefundFailedAnswer: a refund the acquirer answers failed at
	// once is answered refused with its code; runs that met one before
	// answered it done (0000), and replay that.
	changeRefundFailedAnswer = "refund-failed-answer"
	// changeAmountKeepsDunning: a subscription's change of its amount
	// alone does not start its cycle over (an attempt at once, the dunning
	// anew); runs that took such a change before restarted it, and replay
	// that.
	changeAmountKeepsDunning = "amount-keeps-dunning"
	// changeCancelBeforeCharge: a subscription cancelled while a charge
	// is prepared (its transaction id drawn) does not start that charge;
	// runs that met such a cancel before charged once more, and replay
	// that.
	changeCancelBeforeCharge = "cancel-before-charge"
	// changeSubscriptionCardGone: a subscription asks whether its stored
	// card is still there before it makes a cycle's charge order, and one
	// deleted (by the merchant, or erased with its shopper) suspends it
	// with no order made; runs before made the order, which recorded the
	// shopper's details again before the charge was refused, and replay
	// that.
	changeSubscriptionCardGone = "subscription-card-gone"
	// changeSubscriptionChargeUnknown: a charge order that could not learn
	// whether the card was charged (SubscriptionChargeResult.Unknown)
	// suspends its subscription for ops instead of being retried under a
	// new key; runs that met one before retried, and replay that.
	changeSubscriptionChargeUnknown = "subscription-charge-unknown"
	// changeChargeOrderClosed: a subscription whose charge order closes
	// without reporting reads its record for a day and takes its result,
	// or is suspended when it has none; runs that met such an order before
	// waited for its report for ever, and replay that.
	changeChargeOrderClosed = "charge-order-closed"
	// changeRefusalInquiry: a charge attempt refused before it reached
	// the acquirer (card not in the vault) or by it (a 4xx) asks the
	// acquirer before the order fails, as an earlier attempt may have
	// charged; orders that met a refusal before failed at once, and replay
	// that.
	changeRefusalInquiry = "charge-refusal-inquiry"
	// changeLateLook: a charge that stayed unknown at a connector whose
	// inquiry may lag (Stripe) is sent again with its key and asked about
	// over an hour before the order fails (lookLate); orders that met one
	// before failed at once, and replay that.
	changeLateLook = "charge-late-look"
	// changeRefundConnectorMissing: a refund sent again after an unknown
	// outcome by a worker whose configuration lacks its connector is sent
	// again later, not failed; orders that met that before failed the
	// refund and released its amount, and replay that.
	changeRefundConnectorMissing = "refund-connector-missing"
	// changeRefundWatchedUnsaved: a pending refund whose row could not be
	// written is watched (or sent again) all the same and answered
	// pending; orders that met such a write before failed the update and
	// left the refund's amount held with nothing to settle it, and replay
	// that.
	changeRefundWatchedUnsaved = "refund-watched-unsaved"
	// changeOperationUnanswered: a merchant's capture or cancel the
	// acquirer answered neither way is sent again with its key until it
	// answers (a refusal then settled by asking about the charge), and
	// answered as the acquirer has it; orders that met one before
	// answered it refused C0001, and replay that.
	changeOperationUnanswered = "operation-unanswered"
	// changePayoutLookAgain: a payout whose submission went unanswered
	// and whose first look found no transfer asks the rail again after 1,
	// 4, 15 and 40 minutes before it releases the money; runs that met
	// that before released it at once, and replay that.
	changePayoutLookAgain = "payout-look-again"
	// changePayoutReleaseUnreserved: a payout whose reservation was
	// refused or failed releases the run's reservation as it fails, in
	// case an earlier attempt made it; runs that failed so before left
	// such a reservation open, and replay that.
	changePayoutReleaseUnreserved = "payout-release-unreserved"
	// changeVoidRefusedLookAgain: a void at the window's end refused
	// while a lagging inquiry (Stripe's search) showed the charge
	// authorised asks again over an hour before the order expires; runs
	// that met that before expired at once, and replay that.
	changeVoidRefusedLookAgain = "void-refused-look-again"
	// changeRefundSettledUnsaved: a held refund that settles while its row
	// cannot be written still debits the ledger, moves the order and
	// notifies the merchant; orders that met such a write before stopped
	// at it, and replay that.
	changeRefundSettledUnsaved = "refund-settled-unsaved"
	// changeShopperCallOff: an order that stops waiting for its shopper at
	// its window's end, or by the shopper's own cancel, first calls off
	// what the shopper could still complete (the APM payment at its
	// provider; at Stripe, the 3-D Secure PaymentIntent), and a shopper's
	// cancel is refused while the shopper is at the challenge; orders that
	// ended so before asked the provider once, and replay that.
	changeShopperCallOff = "shopper-call-off"
	// changeThreeDSFailedAtStart: a 3-D Secure authentication that fails
	// as it starts, or asks for a challenge with no ACS to send the shopper
	// to, fails the payment at once (A0005); orders that met one before
	// waited for a challenge that could not come, and replay that.
	changeThreeDSFailedAtStart = "threeds-failed-at-start"
	// changePayAfterAPMChosen: a card given on the payment page whose
	// update waited for the order's lock while the shopper chose an APM is
	// refused, as its validator would have; orders that met that race
	// before attached the card to the APM order, and replay that.
	changePayAfterAPMChosen = "pay-after-apm-chosen"
	// changeAPMReviewRejects: an APM order the risk rules would hold for
	// review is rejected instead (a reviewer's approval had no shopper to
	// send to the provider, and charged a card the order does not have);
	// orders held so before replay the hold.
	changeAPMReviewRejects = "apm-review-rejects"
	// changeDisputeNoticeID: a dispute notice whose id would pass 40
	// characters (a dispute id over 34) is named by the dispute id's
	// digest and the notice's number; disputes before cut the id at 40,
	// which dropped the number so that later notices shared the first's
	// id and were lost, and replay that.
	changeDisputeNoticeID = "dispute-notice-id"
	// changeRedeliverGroups: a resend of several orders' notifications
	// (RedeliverInput.Groups) delivers each order's by a child of its own;
	// a run a worker of the code before began went on one by one, and
	// replays so.
	changeRedeliverGroups = "redeliver-groups"
	// changeNotifySuperseded: a delivery the activity found superseded by
	// a newer notification ends at once; a worker of the code before took
	// it for a refused attempt and waited, and replays so.
	changeNotifySuperseded = "notify-superseded"
	// changeShopperWindow: an order at the APM provider waits the APM
	// window, also when the shopper chose the APM on the payment page, and
	// a pending order's window starts again when it sends its shopper on
	// (the challenge, the provider); orders begun before kept the page's
	// session from its start, and replay that.
	changeShopperWindow = "shopper-window"
	// changePayoutNotifyInline: a payout makes its notification's first
	// attempt itself (a local activity in its last workflow task) and
	// starts the Redeliver child only when that attempt is not
	// acknowledged; runs begun before start the child at once.
	changePayoutNotifyInline = "payout-notify-inline"
	// changeRedeliverAfterSender: a Redeliver run handed a notification
	// its sender tried (RedeliverInput.Attempted) does not reset it, waits
	// its turn and numbers its attempts after the sender's; a run a worker
	// of the code before began resets it and sends at once, and replays so.
	changeRedeliverAfterSender = "redeliver-after-sender"
	// changePayoutCancelRelease: a payout cancelled while it waits for its
	// payment date releases its money and records FAILED on a context the
	// cancellation does not reach; runs cancelled before tried on the
	// cancelled context, left the money reserved, and replay that.
	changePayoutCancelRelease = "payout-cancel-release"
	// changePayoutRailOutage: a payout whose rail call ran out of retries
	// asks the rail again for a day (askRail), and a look before the
	// submission that went unanswered keeps the money reserved; runs that
	// met an unanswered call before ended at once (the first look's as
	// RAIL_UNAVAILABLE, the money released), and replay that.
	changePayoutRailOutage = "payout-rail-outage"
	// changeAcceptedFirst: an update that moves money or changes the record
	// (an order's capture, cancel, review, refund and shopper updates; a
	// subscription's changes) ends its workflow task, with an activity
	// that does nothing, before its first local activity, so that Temporal
	// holds the update as accepted before the acquirer or the record hears
	// of it. Runs that took such an update before replay without it.
	changeAcceptedFirst = "update-accepted-first"
	// changeReconDayFailedGoesOn: a scheduled reconciliation goes on to the
	// next day when a day's child failed (its acquirer's report unanswered
	// for a day); runs that met one before failed there, and replay that.
	changeReconDayFailedGoesOn = "recon-day-failed-goes-on"
	// changeRefundRowFirst: a refund's row is written, pending, before its
	// request goes to the acquirer; refunds asked before wrote it only
	// with the acquirer's answer, and replay that.
	changeRefundRowFirst = "refund-row-first"
	// changeRefundAnsweredUnsaved: a refund the acquirer settled in its
	// answer whose row the record would not take still debits the ledger,
	// moves the order and notifies; runs that met one before failed the
	// update there, and replay that.
	changeRefundAnsweredUnsaved = "refund-answered-unsaved"
)

// endTaskOptions: endTask's pause is an activity that does nothing, run by
// the worker that completes the task; quick retries cover a worker's death.
var endTaskOptions = workflow.ActivityOptions{
	StartToCloseTimeout: 10 * time.Second,
	RetryPolicy: &temporal.RetryPolicy{
		InitialInterval:    100 * time.Millisecond,
		BackoffCoefficient: 2,
		MaximumInterval:    5 * time.Second,
	},
}

// acceptFirst makes the running update durable before its handler does
// anything outside the workflow. An update is kept by Temporal only once the
// workflow task that accepted it completes; local activities run inside that
// task. Without the pause, a task lost with its update (Temporal restarted
// while the caller had given up, say) leaves the acquirer's capture and the
// record's rows behind while the workflow never took the update: the order
// waits, authorised, for a capture that was made (TestCaptureSurvivesCrashes).
// With it, a lost task loses only the update's arrival, and a task lost
// after it is run again from the history, the update included. The pause is
// an activity, not a timer: the dev server fires even a 1 ms timer about a
// second later, which made every capture of a batch a second slower.
func acceptFirst(ctx workflow.Context, version workflow.Version) error {
	if version == workflow.DefaultVersion {
		return nil
	}
	return endTask(ctx)
}

// endTask ends the workflow task with the activity that does nothing, so
// that what the task did so far is in the history before the workflow goes
// on. The worker that completes the task runs it at once (eager activities).
func endTask(ctx workflow.Context) error {
	return workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, endTaskOptions), a.Accepted).Get(ctx, nil)
}
