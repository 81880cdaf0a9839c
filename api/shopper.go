package api

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/gin-gonic/gin"
	"go.temporal.io/sdk/client"

	"github.com/paygate/paygate/api/checkout"
	"github.com/paygate/paygate/internal/adapters/connectors/simacquirer"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/signing"
	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

// ShopperFlows runs the shopper's side of orders.
type ShopperFlows interface {
	SignalThreeDS(ctx context.Context, workflowID string, r workflows.ThreeDSResult) error
	SignalAPM(ctx context.Context, workflowID string, r workflows.APMResult) error
	State(ctx context.Context, workflowID string) (workflows.OrderState, error)
	Pay(ctx context.Context, workflowID string, req workflows.PayRequest) (workflows.PaymentResult, error)
	CancelCheckout(ctx context.Context, workflowID string) (workflows.PaymentResult, error)
}

// SignalThreeDS wakes the order for the ACS's outcome of an authentication.
func (t *TemporalOrders) SignalThreeDS(ctx context.Context, workflowID string, r workflows.ThreeDSResult) error {
	return t.Client.SignalWorkflow(ctx, workflowID, "", workflows.SignalThreeDSResult, r)
}

// SignalAPM wakes the order for the provider's status of a payment.
func (t *TemporalOrders) SignalAPM(ctx context.Context, workflowID string, r workflows.APMResult) error {
	return t.Client.SignalWorkflow(ctx, workflowID, "", workflows.SignalAPMResult, r)
}

// State asks the order's workflow for its state.
func (t *TemporalOrders) State(ctx context.Context, workflowID string) (workflows.OrderState, error) {
	v, err := t.Client.QueryWorkflow(ctx, workflowID, "", workflows.QueryOrderState)
	if err != nil {
		return workflows.OrderState{}, err
	}
	var st workflows.OrderState
	err = v.Get(&st)
	return st, err
}

// Pay gives a checkout order the shopper's card and waits for the result.
func (t *TemporalOrders) Pay(ctx context.Context, workflowID string, req workflows.PayRequest) (workflows.PaymentResult, error) {
	return t.update(ctx, workflowID, workflows.UpdatePay, req)
}

// CancelCheckout ends a checkout the shopper left.
func (t *TemporalOrders) CancelCheckout(ctx context.Context, workflowID string) (workflows.PaymentResult, error) {
	return t.update(ctx, workflowID, workflows.UpdateShopperCancel, struct{}{})
}

func (t *TemporalOrders) update(ctx context.Context, workflowID, name string, arg any) (workflows.PaymentResult, error) {
	wait := t.Wait
	if wait <= 0 {
		wait = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	h, err := t.Client.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: workflowID, UpdateName: name, Args: []any{arg}, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return workflows.PaymentResult{}, classify(err)
	}
	var res workflows.PaymentResult
	if err := h.Get(ctx, &res); err != nil {
		return workflows.PaymentResult{}, classify(err)
	}
	return res, nil
}

// threeDSCallback receives the ACS's answer from the shopper's browser. It
// checks the ACS's signature, then only wakes the order with the
// authentication's id: the order asks the ACS for the outcome and never
// records the status, ECI or CAVV posted here. The shopper is then sent on
// with the order's result.
func (s *Server) threeDSCallback(c *gin.Context) {
	ctx := c.Request.Context()
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, MaxBodyBytes)
	if err := c.Request.ParseForm(); err != nil {
		if bodyOverLimit(err) {
			s.shopperMessage(c, http.StatusRequestEntityTooLarge, "en", "payment_failed", codes.RequestTooLarge)
			return
		}
		s.shopperMessage(c, http.StatusBadRequest, "en", "payment_failed", codes.MalformedRequest)
		return
	}
	f := c.Request.PostForm
	id := f.Get("authentication_id")
	if !simacquirer.VerifyThreeDSResult(s.ProviderSecret, id, f.Get("status"), f.Get("cavv"), f.Get("reference"), f.Get("signature")) {
		s.shopperMessage(c, http.StatusForbidden, "en", "payment_failed", codes.BadSignature)
		return
	}
	o, err := models.FindOrderByID(ctx, s.DB, f.Get("reference"))
	if err != nil {
		s.shopperMessage(c, http.StatusNotFound, "en", "payment_failed", codes.OrderNotFound)
		return
	}
	if err := s.Shopper.SignalThreeDS(ctx, o.WorkflowID, workflows.ThreeDSResult{AuthenticationID: id}); err != nil {
		s.Logger.Error("signal 3-D Secure callback", "transaction_id", o.TransactionID, "error", err)
		s.shopperMessage(c, http.StatusServiceUnavailable, o.Details.DefaultLang, "payment_failed", codes.SystemError)
		return
	}
	s.sendShopperOn(c, o)
}

// apmCallback receives the APM provider's server-to-server callback. It
// checks the provider's signature, then only wakes the order with the
// payment's id: the order asks the provider for the payment's status and
// never records the status posted here.
func (s *Server) apmCallback(c *gin.Context) {
	ctx := c.Request.Context()
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, MaxBodyBytes))
	if err != nil {
		if bodyOverLimit(err) {
			c.JSON(http.StatusRequestEntityTooLarge, gin.H{"error": "body too large"})
			return
		}
		c.JSON(http.StatusBadRequest, gin.H{"error": "unreadable body"})
		return
	}
	if !simacquirer.VerifyProviderSignature(s.ProviderSecret, body, c.GetHeader("X-Provider-Signature")) {
		s.Logger.Warn("APM callback with a bad signature", "client_ip", c.ClientIP())
		c.JSON(http.StatusUnauthorized, gin.H{"error": "bad signature"})
		return
	}
	var cb struct {
		PaymentID string `json:"payment_id"`
		Reference string `json:"reference"`
	}
	if code := decodeBody(body, &cb); code != nil || cb.PaymentID == "" || cb.Reference == "" {
		c.JSON(http.StatusBadRequest, gin.H{"error": "malformed callback"})
		return
	}
	o, err := models.FindOrderByID(ctx, s.DB, cb.Reference)
	if err != nil {
		c.JSON(http.StatusNotFound, gin.H{"error": "unknown reference"})
		return
	}
	if err := s.Shopper.SignalAPM(ctx, o.WorkflowID, workflows.APMResult{PaymentID: cb.PaymentID}); err != nil {
		s.Logger.Error("signal APM callback", "transaction_id", o.TransactionID, "error", err)
		c.JSON(http.StatusServiceUnavailable, gin.H{"error": "try again"})
		return
	}
	c.JSON(http.StatusOK, gin.H{"ok": true})
}

// bodyOverLimit reports whether err is a body over its http.MaxBytesReader limit.
func bodyOverLimit(err error) bool {
	var e *http.MaxBytesError
	return errors.As(err, &e)
}

// finalState waits (a bounded time) until the order no longer waits for
// its shopper.
func (s *Server) finalState(ctx context.Context, workflowID string) (workflows.OrderState, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := s.Shopper.State(ctx, workflowID)
		if err == nil && st.PaymentStatus != status.Pending && st.Result != nil {
			return st, nil
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = errors.New("the order is still pending")
			}
			return st, err
		}
		select {
		case <-ctx.Done():
			return st, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// sendShopperOn waits for the order's final result and sends the shopper
// to the merchant's return_url with the signed result, or shows it.
func (s *Server) sendShopperOn(c *gin.Context, o *models.Order) {
	lang := o.Details.DefaultLang
	st, err := s.finalState(c.Request.Context(), o.WorkflowID)
	if err != nil || st.Result == nil {
		s.Logger.Warn("order result not final yet", "transaction_id", o.TransactionID, "error", err)
		s.shopperMessage(c, http.StatusOK, lang, "processing", codes.AwaitingShopper)
		return
	}
	target := o.Details.ReturnURL
	if target == "" {
		title := "payment_failed"
		if st.Result.OrderStatus == status.OrderSuccess {
			title = "pay_title"
		}
		s.shopperMessage(c, http.StatusOK, lang, title, st.Result.Code())
		return
	}
	s.redirectWithResult(c, target, o, st.Result)
}

// resultFields are the signed payment result a shopper brings back to the
// merchant (DESIGN §3, payment result recipe).
func (s *Server) resultFields(o *models.Order, res *workflows.PaymentResult) (url.Values, error) {
	account, err := s.Accounts.Load(context.Background(), o.MerchantID, o.AccountID)
	if err != nil {
		return nil, err
	}
	v := url.Values{}
	v.Set("merchant_id", o.MerchantID)
	v.Set("account_id", o.AccountID)
	v.Set("transaction_id", o.TransactionID)
	v.Set("order_no", o.OrderNo)
	v.Set("currency", o.Currency)
	v.Set("amount", money.FromMinor(o.Amount, o.Currency).String())
	v.Set("order_status", res.OrderStatus.String())
	v.Set("result_info", res.Code().String())
	v.Set("encryption_data", signing.SignUpper(account.SignKey(), v.Get("merchant_id"), v.Get("account_id"),
		v.Get("transaction_id"), v.Get("order_no"), v.Get("currency"), v.Get("amount"), v.Get("order_status"), v.Get("result_info")))
	return v, nil
}

// redirectWithResult sends the browser to target with the signed result in
// the query string; it never holds card data.
func (s *Server) redirectWithResult(c *gin.Context, target string, o *models.Order, res *workflows.PaymentResult) {
	v, err := s.resultFields(o, res)
	if err != nil {
		s.Logger.Error("sign payment result", "transaction_id", o.TransactionID, "error", err)
		s.shopperMessage(c, http.StatusServiceUnavailable, o.Details.DefaultLang, "payment_failed", codes.SystemError)
		return
	}
	u, err := url.Parse(target)
	if err != nil {
		s.shopperMessage(c, http.StatusOK, o.Details.DefaultLang, "payment_failed", res.Code())
		return
	}
	q := u.Query()
	for k, vals := range v {
		q[k] = vals
	}
	u.RawQuery = q.Encode()
	c.Set(ctxResultCode, res.ResultCode)
	c.Redirect(http.StatusSeeOther, u.String())
}

// shopperMessage renders a short page for the shopper.
func (s *Server) shopperMessage(c *gin.Context, httpStatus int, lang, titleKey string, code codes.Code) {
	c.Set(ctxResultCode, code.ID)
	c.Status(httpStatus)
	c.Header("Content-Type", "text/html; charset=utf-8")
	c.Header("Cache-Control", "no-store")
	if err := checkout.RenderMessage(c.Writer, lang, checkout.Message(lang, titleKey), code.String()); err != nil {
		s.Logger.Error("render page", "error", err)
	}
}
