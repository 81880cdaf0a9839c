// Package subscriptions is the recurring capability of the merchant API:
// POST /v1/cancelsubscription, POST /v1/subscription to read, pause,
// resume and amend one, and POST /v1/token/delete for the stored cards that
// subscriptions and later payments charge.
package subscriptions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/api/flows"
	"github.com/paygate/paygate/internal/domain/card"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/signing"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/internal/domain/subscription"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

// Handler serves the subscription routes.
type Handler struct {
	// Gate is the merchant API: its authenticated-request step, and the
	// record and logger it holds.
	Gate *api.Server
	// Workflows cancels, pauses, resumes and amends subscriptions; nil
	// refuses them.
	Workflows Workflows
}

// New is the subscription capability of gate, changing subscriptions
// through flows.
func New(gate *api.Server, flows Workflows) *Handler {
	return &Handler{Gate: gate, Workflows: flows}
}

// Routes puts the subscription routes on the merchant API's /v1 group.
func (h *Handler) Routes(v1 gin.IRoutes) {
	v1.POST("/cancelsubscription", h.cancelSubscription)
	v1.POST("/subscription", h.subscription)
	v1.POST("/token/delete", h.deleteToken)
}

// The subscription operations and the token deletion require
// encryption_data.
var (
	_ api.EncryptionDataRequired = (*cancelSubscriptionRequest)(nil)
	_ api.EncryptionDataRequired = (*subscriptionRequest)(nil)
	_ api.EncryptionDataRequired = (*deleteTokenRequest)(nil)
)

// Workflows changes subscription workflows (flows.TemporalSubscriptions).
// Each returns the subscription's state once the change is recorded, or
// flows.ErrSubscriptionClosed when the workflow has ended (its record
// tells how).
type Workflows interface {
	// Cancel returns once no charge can follow.
	Cancel(ctx context.Context, merchantID, recurringID string) (workflows.SubscriptionState, error)
	Pause(ctx context.Context, merchantID, recurringID string) (workflows.SubscriptionState, error)
	Resume(ctx context.Context, merchantID, recurringID string) (workflows.SubscriptionState, error)
	Amend(ctx context.Context, merchantID, recurringID string, a workflows.SubscriptionAmendment) (workflows.SubscriptionState, error)
}

// recurringIDPattern is the shape of the recurring_ids the gateway hands
// out: R and the first payment's transaction id.
var recurringIDPattern = regexp.MustCompile(`^R[0-9]{19}$`)

// cancelSubscriptionRequest is the body of POST /v1/cancelsubscription,
// signed over merchant_id, account_id and recurring_id (docs/design.md §3).
type cancelSubscriptionRequest struct {
	MerchantID     string `json:"merchant_id"`
	AccountID      string `json:"account_id"`
	RecurringID    string `json:"recurring_id"`
	EncryptionData string `json:"encryption_data"`
}

func (r *cancelSubscriptionRequest) Trim() {
	for _, p := range []*string{&r.MerchantID, &r.AccountID, &r.RecurringID, &r.EncryptionData} {
		*p = strings.TrimSpace(*p)
	}
}

func (r *cancelSubscriptionRequest) Echo() api.Echo {
	return api.Echo{MerchantID: r.MerchantID, AccountID: r.AccountID}
}

func (r *cancelSubscriptionRequest) Signature() string { return r.EncryptionData }

func (r *cancelSubscriptionRequest) SignedValues() []string {
	return []string{r.MerchantID, r.AccountID, r.RecurringID}
}

func (r *cancelSubscriptionRequest) RequiresEncryptionData() {}

// subscriptionAnswer is the subscription as it stands: the answer of a
// cancel once no charge can follow, and of POST /v1/subscription.
type subscriptionAnswer struct {
	MerchantID      string `json:"merchant_id"`
	AccountID       string `json:"account_id"`
	RecurringID     string `json:"recurring_id"`
	ContractName    string `json:"contract_name"`
	RecurringStatus string `json:"recurring_status"`
	// Charges counts the successful charges, the first payment included.
	Charges int `json:"charges"`
	// ContractAmount and Currency are what the next charge charges.
	ContractAmount string `json:"contract_amount"`
	Currency       string `json:"currency"`
	// RecurringDeductionPeriod is the interval ("1 month");
	// RecurringDeductionTime the next charge (UTC), "" when none is due
	// (ended or paused).
	RecurringDeductionPeriod string `json:"recurring_deduction_period"`
	RecurringDeductionTime   string `json:"recurring_deduction_time"`
	ResultInfo               string `json:"result_info"`
	EncryptionData           string `json:"encryption_data"`
}

// answer answers the subscription's record, signed with key over
// merchant_id, account_id, recurring_id, recurring_status and result_info.
func (h *Handler) answer(c *gin.Context, key string, sub *models.Subscription) {
	a := subscriptionAnswer{MerchantID: sub.MerchantID, AccountID: sub.AccountID, RecurringID: sub.RecurringID,
		ContractName: sub.ContractName, RecurringStatus: strconv.Itoa(sub.Status), Charges: sub.Charges,
		RecurringDeductionPeriod: sub.Period, ResultInfo: codes.OK.String()}
	if terms, plan, err := termsOf(sub); err == nil {
		amount := plan.AmountOf(terms, sub.Charges+1)
		a.ContractAmount, a.Currency = amount.String(), amount.Currency
	} else {
		h.Gate.Logger.Error("subscription terms", "recurring_id", sub.RecurringID, "error", err)
	}
	if sub.NextChargeAt != nil && !subscription.Status(sub.Status).Final() {
		a.RecurringDeductionTime = sub.NextChargeAt.UTC().Format(subscription.AnswerTimeLayout)
	}
	a.EncryptionData = signing.SignUpper(key, a.MerchantID, a.AccountID, a.RecurringID, a.RecurringStatus, a.ResultInfo)
	c.Set(api.ContextResultCode, codes.OK.ID)
	c.JSON(http.StatusOK, a)
}

// termsOf reads the terms and the plan a subscription's record keeps.
func termsOf(sub *models.Subscription) (subscription.Terms, subscription.Plan, error) {
	var (
		terms subscription.Terms
		plan  subscription.Plan
	)
	if err := json.Unmarshal(sub.Terms, &terms); err != nil {
		return terms, plan, fmt.Errorf("terms of %s: %w", sub.RecurringID, err)
	}
	if len(sub.Plan) > 0 {
		if err := json.Unmarshal(sub.Plan, &plan); err != nil {
			return terms, plan, fmt.Errorf("plan of %s: %w", sub.RecurringID, err)
		}
	}
	return terms, plan, nil
}

// cancelSubscription handles POST /v1/cancelsubscription. The answer comes
// once the workflow has taken the cancel: no charge starts after it. A
// subscription already ended answers its final status.
func (h *Handler) cancelSubscription(c *gin.Context) {
	var req cancelSubscriptionRequest
	m, ok := h.Gate.AcceptMerchant(c, api.JSONAnswers, &req)
	if !ok {
		return
	}
	var err error
	ctx := c.Request.Context()
	if req.RecurringID == "" {
		m.Refuse(codes.MissingField.With("recurring_id"))
		return
	}
	if !recurringIDPattern.MatchString(req.RecurringID) {
		m.Refuse(codes.SubscriptionNotFound)
		return
	}
	if h.Gate.Records == nil || h.Workflows == nil {
		m.Refuse(codes.SystemError)
		return
	}
	sub, ok := h.found(m, h.findSubscription)(ctx, req.MerchantID, req.AccountID, req.RecurringID)
	if !ok {
		return
	}
	if subscription.Status(sub.Status).Open() {
		if _, err := h.Workflows.Cancel(ctx, req.MerchantID, req.RecurringID); err != nil && !errors.Is(err, flows.ErrSubscriptionClosed) {
			h.Gate.Logger.Error("cancel subscription", "recurring_id", req.RecurringID, "error", err)
			m.Refuse(codes.SystemError)
			return
		}
		// The workflow recorded what it answered; the record is what
		// every later answer and query reads.
		if sub, err = h.Gate.Records.FindSubscription(ctx, req.MerchantID, req.AccountID, req.RecurringID); err != nil {
			h.Gate.Logger.Error("find subscription", "recurring_id", req.RecurringID, "error", err)
			m.Refuse(codes.SystemError)
			return
		}
	}
	h.answer(c, m.Key(), sub)
}

// found wraps a lookup of a subscription so that a missing one is refused
// I0026 and a failed one S0001 (logged) on m; ok is false once refused.
func (h *Handler) found(m *api.Merchant, find func(ctx context.Context, merchantID, accountID, recurringID string) (*models.Subscription, error)) func(ctx context.Context, merchantID, accountID, recurringID string) (*models.Subscription, bool) {
	return func(ctx context.Context, merchantID, accountID, recurringID string) (*models.Subscription, bool) {
		sub, err := find(ctx, merchantID, accountID, recurringID)
		switch {
		case errors.Is(err, models.ErrSubscriptionNotFound):
			m.Refuse(codes.SubscriptionNotFound)
			return nil, false
		case err != nil:
			h.Gate.Logger.Error("find subscription", "recurring_id", recurringID, "error", err)
			m.Refuse(codes.SystemError)
			return nil, false
		}
		return sub, true
	}
}

// subscriptionRecordWait bounds how long a cancel waits for the record of a
// subscription whose first payment has already been answered.
const subscriptionRecordWait = 10 * time.Second

// findSubscription returns the subscription's record. The first payment is
// answered once its subscription workflow has started, and the workflow
// writes the record a moment later: a merchant who cancels at once, while
// the first payment of this account exists, waits for the record rather than
// being told there is no such subscription.
func (h *Handler) findSubscription(ctx context.Context, merchantID, accountID, recurringID string) (*models.Subscription, error) {
	sub, err := h.Gate.Records.FindSubscription(ctx, merchantID, accountID, recurringID)
	if !errors.Is(err, models.ErrSubscriptionNotFound) {
		return sub, err
	}
	first, ferr := h.Gate.Records.FindOrders(ctx, merchantID, accountID, nil, []string{strings.TrimPrefix(recurringID, "R")})
	if ferr != nil || len(first) == 0 || first[0].Details.Subscription == nil || first[0].OrderStatus != status.OrderSuccess {
		return nil, err
	}
	deadline := time.Now().Add(subscriptionRecordWait)
	for errors.Is(err, models.ErrSubscriptionNotFound) && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		sub, err = h.Gate.Records.FindSubscription(ctx, merchantID, accountID, recurringID)
	}
	return sub, err
}

// deleteTokenRequest is the body of POST /v1/token/delete. Its signature is
// over merchant_id, account_id and token_id (our recipe: the interface
// shows no token operation).
type deleteTokenRequest struct {
	MerchantID     string `json:"merchant_id"`
	AccountID      string `json:"account_id"`
	TokenID        string `json:"token_id"`
	EncryptionData string `json:"encryption_data"`
}

func (r *deleteTokenRequest) Trim() {
	for _, p := range []*string{&r.MerchantID, &r.AccountID, &r.TokenID, &r.EncryptionData} {
		*p = strings.TrimSpace(*p)
	}
}

func (r *deleteTokenRequest) Echo() api.Echo {
	return api.Echo{MerchantID: r.MerchantID, AccountID: r.AccountID}
}

func (r *deleteTokenRequest) Signature() string { return r.EncryptionData }

func (r *deleteTokenRequest) SignedValues() []string {
	return []string{r.MerchantID, r.AccountID, r.TokenID}
}

func (r *deleteTokenRequest) RequiresEncryptionData() {}

// deleteTokenAnswer is the answer of a token deletion.
type deleteTokenAnswer struct {
	MerchantID     string `json:"merchant_id"`
	AccountID      string `json:"account_id"`
	TokenID        string `json:"token_id"`
	ResultInfo     string `json:"result_info"`
	EncryptionData string `json:"encryption_data"`
}

// deleteToken handles POST /v1/token/delete: the account's stored card is
// no longer usable. Deleting it again answers the same.
func (h *Handler) deleteToken(c *gin.Context) {
	var req deleteTokenRequest
	m, ok := h.Gate.AcceptMerchant(c, api.JSONAnswers, &req)
	if !ok {
		return
	}
	if req.TokenID == "" {
		m.Refuse(codes.MissingField.With("token_id"))
		return
	}
	if !card.IsTokenID(req.TokenID) {
		m.Refuse(codes.TokenNotFound)
		return
	}
	if h.Gate.Records == nil {
		m.Refuse(codes.SystemError)
		return
	}
	err := h.Gate.Records.DeleteStoredCard(c.Request.Context(), req.MerchantID, req.AccountID, req.TokenID, h.Gate.Now().UTC())
	switch {
	case errors.Is(err, models.ErrStoredCardNotFound):
		m.Refuse(codes.TokenNotFound)
		return
	case err != nil:
		h.Gate.Logger.Error("delete stored card", "error", err)
		m.Refuse(codes.SystemError)
		return
	}
	a := deleteTokenAnswer{MerchantID: req.MerchantID, AccountID: req.AccountID, TokenID: req.TokenID,
		ResultInfo: codes.OK.String()}
	a.EncryptionData = signing.SignUpper(m.Key(), a.MerchantID, a.AccountID, a.TokenID, a.ResultInfo)
	c.Set(api.ContextResultCode, codes.OK.ID)
	c.JSON(http.StatusOK, a)
}
