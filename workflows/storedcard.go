package workflows

import (
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/internal/domain/subscription"
)

// keepsCard reports whether an approved payment of this order keeps its
// card: the merchant asked (token_flag=YES) or a subscription needs it.
func (w *orderWorkflow) keepsCard() bool {
	if w.in.Kind == KindAPM || w.in.APM != nil {
		return false
	}
	return strings.EqualFold(w.in.Details.TokenFlag, "YES") || w.in.Subscription != nil
}

// afterApproval keeps the card of an approved payment for the account and
// starts the subscription the payment carries. Neither ever fails the
// order: a card that cannot be kept is logged and the payment stands
// without a token_id, and so without its subscription.
func (w *orderWorkflow) afterApproval(ctx workflow.Context) {
	if !w.keepsCard() {
		return
	}
	if w.version(ctx, changeStoredCards, 1) == workflow.DefaultVersion {
		return
	}
	if !w.st.Card.Stored {
		lctx := workflow.WithLocalActivityOptions(ctx, storeOptions)
		var kept activities.KeepCardResult
		err := workflow.ExecuteLocalActivity(lctx, a.KeepCard, activities.KeepCardInput{
			TransactionID: w.in.TransactionID, MerchantID: w.in.MerchantID, AccountID: w.in.AccountID,
			CardToken: w.st.Card.Token, CardMasked: w.st.Card.Masked, CardBrand: w.st.Card.Brand, Fingerprint: w.st.Card.Fingerprint,
		}).Get(ctx, &kept)
		if err != nil {
			workflow.GetLogger(ctx).Error("card not kept", "transaction_id", w.in.TransactionID, "error", err)
			return
		}
		w.st.TokenID = kept.TokenID
		w.st.Card.TokenID = kept.TokenID
	}
	if w.in.Subscription != nil && w.st.TokenID != "" {
		w.startSubscription(ctx)
	}
}

// startSubscription starts the subscription of an approved first payment as
// a workflow of its own that outlives the order.
func (w *orderWorkflow) startSubscription(ctx workflow.Context) {
	terms := *w.in.Subscription
	paid := workflow.Now(ctx)
	recurringID := RecurringID(w.in.TransactionID)
	id := SubscriptionWorkflowID(w.in.MerchantID, recurringID)
	details := w.in.Details
	details.Subscription = nil
	details.TokenFlag, details.TokenID = "", ""
	in := SubscriptionInput{
		RecurringID:        recurringID,
		MerchantID:         w.in.MerchantID,
		AccountID:          w.in.AccountID,
		FirstTransactionID: w.in.TransactionID,
		FirstPaid:          paid,
		Terms:              terms,
		Card:               CardRef{Token: w.st.Card.Token, Masked: w.st.Card.Masked, Brand: w.st.Card.Brand, Fingerprint: w.st.Card.Fingerprint, Stored: true, TokenID: w.st.TokenID},
		Details:            details,
		Connector:          w.in.Connector,
		NotifySchedule:     w.in.NotifySchedule,
		Windows:            w.in.Windows,
		Progress:           SubscriptionProgress{Cycle: 1, Charges: 1},
	}
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:            id,
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		// Ops find a subscription in the Temporal UI by its merchant,
		// account and recurring_id, and see its status.
		TypedSearchAttributes: temporal.NewSearchAttributes(
			SearchMerchantID.ValueSet(w.in.MerchantID),
			SearchAccountID.ValueSet(w.in.AccountID),
			SearchRecurringID.ValueSet(recurringID),
			SearchSubscriptionStatus.ValueSet(int64(subscription.Active)),
		),
	})
	child := workflow.ExecuteChildWorkflow(cctx, SubscriptionWorkflowType, in)
	// Waiting for the start is what makes the child outlive this order.
	if err := child.GetChildWorkflowExecution().Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Error("subscription not started", "recurring_id", recurringID, "error", err)
		return
	}
	w.st.Recurring = &RecurringResult{
		ContractName: terms.ContractName,
		RecurringID:  recurringID,
		Period:       terms.Period(),
		Status:       int(subscription.Active),
	}
	if !terms.Ended(paid, 2) {
		w.st.Recurring.Next = terms.Due(paid, 2)
	} else {
		w.st.Recurring.Status = int(subscription.Finished)
	}
}

// reportCharge tells a subscription the result of its charge. A
// subscription that has ended no longer listens; that is not an error of
// the order.
func (w *orderWorkflow) reportCharge(ctx workflow.Context, res PaymentResult) {
	r := w.in.Recurring
	approved := res.PaymentStatus == status.Paid || res.PaymentStatus == status.Authorised
	err := workflow.SignalExternalWorkflow(ctx, r.WorkflowID, "", SignalSubscriptionCharge, SubscriptionChargeResult{
		Cycle: r.Cycle, Attempt: r.Attempt, TransactionID: res.TransactionID, OrderNo: w.in.OrderNo,
		Approved: approved, ResultCode: res.ResultCode, ResultMessage: res.ResultMessage, Unknown: w.chargeUnknown && !approved,
	}).Get(ctx, nil)
	if err != nil {
		workflow.GetLogger(ctx).Warn("subscription not told of its charge", "recurring_id", r.RecurringID, "error", err)
	}
}
