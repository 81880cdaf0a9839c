package subscriptions

import (
	"context"
	"errors"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/api/flows"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/subscription"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

// The actions of POST /v1/subscription.
const (
	actionQuery  = "query"
	actionPause  = "pause"
	actionResume = "resume"
	actionUpdate = "update"
)

// subscriptionRequest is the body of POST /v1/subscription. Its signature
// is over merchant_id, account_id, recurring_id, action, contract_amount
// and recurring_deduction_time (empty when absent). The action is signed,
// so a signature seen on one action cannot be sent as another, nor as a
// cancel, whose recipe has three values.
type subscriptionRequest struct {
	MerchantID  string `json:"merchant_id"`
	AccountID   string `json:"account_id"`
	RecurringID string `json:"recurring_id"`
	Action      string `json:"action"`
	// ContractAmount and RecurringDeductionTime are the update's: the new
	// amount of every later charge, and the next charge's date.
	ContractAmount         string `json:"contract_amount"`
	RecurringDeductionTime string `json:"recurring_deduction_time"`
	EncryptionData         string `json:"encryption_data"`
}

func (r *subscriptionRequest) Trim() {
	for _, p := range []*string{&r.MerchantID, &r.AccountID, &r.RecurringID, &r.Action, &r.ContractAmount,
		&r.RecurringDeductionTime, &r.EncryptionData} {
		*p = strings.TrimSpace(*p)
	}
}

func (r *subscriptionRequest) Echo() api.Echo {
	return api.Echo{MerchantID: r.MerchantID, AccountID: r.AccountID}
}

func (r *subscriptionRequest) Signature() string { return r.EncryptionData }

func (r *subscriptionRequest) SignedValues() []string {
	return []string{r.MerchantID, r.AccountID, r.RecurringID, r.Action, r.ContractAmount, r.RecurringDeductionTime}
}

func (r *subscriptionRequest) RequiresEncryptionData() {}

// subscription handles POST /v1/subscription: query answers the
// subscription as its record stands; pause, resume and update change it
// through its workflow and answer once the change is recorded (and its
// notification to the first payment's notify_url is under way). Pausing a
// paused subscription, or resuming an active one, changes nothing and
// answers it as it is; an ended one cannot change (I0034).
func (h *Handler) subscription(c *gin.Context) {
	var req subscriptionRequest
	m, ok := h.Gate.AcceptMerchant(c, api.JSONAnswers, &req)
	if !ok {
		return
	}
	var err error
	ctx := c.Request.Context()
	switch {
	case req.RecurringID == "":
		m.Refuse(codes.MissingField.With("recurring_id"))
		return
	case req.Action == "":
		m.Refuse(codes.MissingField.With("action"))
		return
	case req.Action != actionQuery && req.Action != actionPause && req.Action != actionResume && req.Action != actionUpdate:
		m.Refuse(codes.InvalidField.With("action must be query, pause, resume or update"))
		return
	case req.Action != actionUpdate && (req.ContractAmount != "" || req.RecurringDeductionTime != ""):
		m.Refuse(codes.InvalidField.With("contract_amount and recurring_deduction_time are taken by update only"))
		return
	case !recurringIDPattern.MatchString(req.RecurringID):
		m.Refuse(codes.SubscriptionNotFound)
		return
	case h.Gate.Records == nil || h.Workflows == nil && req.Action != actionQuery:
		m.Refuse(codes.SystemError)
		return
	}
	sub, ok := h.found(m, h.findSubscription)(ctx, req.MerchantID, req.AccountID, req.RecurringID)
	if !ok {
		return
	}
	if req.Action == actionQuery {
		h.answer(c, m.Key(), sub)
		return
	}
	if subscription.Status(sub.Status).Final() {
		m.Refuse(codes.SubscriptionEnded)
		return
	}
	change, code := h.change(req, sub)
	if code != nil {
		m.Refuse(*code)
		return
	}
	if _, err := change(ctx); err != nil && !errors.Is(err, flows.ErrSubscriptionClosed) {
		h.Gate.Logger.Error("change subscription", "recurring_id", req.RecurringID, "action", req.Action, "error", err)
		m.Refuse(codes.SystemError)
		return
	}
	// The workflow recorded the change before it answered; the record is
	// what the answer, the query and the order queries read.
	if sub, err = h.Gate.Records.FindSubscription(ctx, req.MerchantID, req.AccountID, req.RecurringID); err != nil {
		h.Gate.Logger.Error("find subscription", "error", err)
		m.Refuse(codes.SystemError)
		return
	}
	if subscription.Status(sub.Status).Final() {
		// It ended while the change was on its way.
		m.Refuse(codes.SubscriptionEnded)
		return
	}
	h.answer(c, m.Key(), sub)
}

// change is the workflow call a pause, resume or update makes, or the
// refusal of an update's fields.
func (h *Handler) change(req subscriptionRequest, sub *models.Subscription) (func(context.Context) (workflows.SubscriptionState, error), *codes.Code) {
	switch req.Action {
	case actionPause:
		return func(ctx context.Context) (workflows.SubscriptionState, error) {
			return h.Workflows.Pause(ctx, req.MerchantID, req.RecurringID)
		}, nil
	case actionResume:
		return func(ctx context.Context) (workflows.SubscriptionState, error) {
			return h.Workflows.Resume(ctx, req.MerchantID, req.RecurringID)
		}, nil
	}
	terms, _, err := termsOf(sub)
	if err != nil {
		h.Gate.Logger.Error("subscription terms", "recurring_id", sub.RecurringID, "error", err)
		code := codes.SystemError
		return nil, &code
	}
	a, err := subscription.ParseAmendment(terms, req.ContractAmount, req.RecurringDeductionTime, h.Gate.Now())
	if err != nil {
		code := codes.InvalidField.With(err.Error())
		return nil, &code
	}
	return func(ctx context.Context) (workflows.SubscriptionState, error) {
		return h.Workflows.Amend(ctx, req.MerchantID, req.RecurringID, a)
	}, nil
}
