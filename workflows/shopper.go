package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/internal/codes"
	"github.com/paygate/paygate/internal/status"
)

// Order kinds.
const (
	KindCard     = ""         // the merchant sends the card (direct payment)
	KindCheckout = "checkout" // the shopper pays on our hosted page
	KindAPM      = "apm"      // an alternative payment method's provider
)

// Signals and updates of the shopper's side.
const (
	// SignalThreeDSResult carries the ACS's verdict, checked by the API.
	SignalThreeDSResult = "threeds-result"
	// SignalAPMResult carries the provider's callback, checked by the API.
	SignalAPMResult = "apm-result"
	// UpdatePay gives a checkout order the shopper's card.
	UpdatePay = "pay"
	// UpdateShopperCancel is the shopper leaving the hosted page.
	UpdateShopperCancel = "shopper-cancel"
)

// Default windows of the shopper's side (DESIGN §1).
const (
	DefaultSessionWindow = 15 * time.Minute
	DefaultAPMWindow     = 24 * time.Hour
)

// APMOrder is what an alternative payment method needs.
type APMOrder struct {
	Method    string
	Country   string
	BankCode  string
	ReturnURL string
	Name      string
	Email     string
	Document  string
}

// ThreeDSResult is the ACS's verdict as the API received and checked it.
type ThreeDSResult struct {
	AuthenticationID string
	Status           string // authenticated or failed
	ECI              string
	CAVV             string
}

// APMResult is the provider's callback as the API received and checked it.
type APMResult struct {
	PaymentID string
	Status    string // succeeded or cancelled
}

// PayRequest is the card the shopper gave on the payment page.
type PayRequest struct {
	Card CardRef
}

// threeDSState is what the order knows of 3-D Secure.
type threeDSState struct {
	used             bool
	result           string // what threeds_result shows
	awaiting         bool
	authenticationID string
	data             *activities.ThreeDSData
}

// apmState is what the order knows of its APM payment.
type apmState struct {
	paymentID string
	awaiting  bool
}

// awaitShopper records the order as waiting for the shopper (1000,
// order_status -1) and answers with where the shopper goes next.
func (w *orderWorkflow) awaitShopper(ctx workflow.Context, issuerURL string) (PaymentResult, error) {
	res, err := w.finish(ctx, activities.FinishOrderInput{PaymentStatus: int(status.Pending)}, codes.AwaitingShopper, false)
	if err != nil {
		return PaymentResult{}, err
	}
	res.IssuerURL = issuerURL
	return res, nil
}

// authenticate runs 3-D Secure: frictionless cards are charged at once with
// the authentication; a challenge sends the shopper to the ACS.
func (w *orderWorkflow) authenticate(ctx workflow.Context) (PaymentResult, error) {
	var out activities.ThreeDSOutcome
	err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, acquirerOpOptions), a.Authenticate3DS,
		activities.ThreeDSInput{
			CardToken:      w.card.Token,
			IdempotencyKey: idempotencyKey(w.id, "3ds"),
			Amount:         w.in.Amount,
			Currency:       w.in.Currency,
			Reference:      w.in.TransactionID,
			ReturnURL:      w.in.PublicURL + "/v1/3ds/callback",
		}).Get(ctx, &out)
	if err != nil {
		workflow.GetLogger(ctx).Error("3-D Secure authentication failed", "error", err)
		return w.finish(ctx, activities.FinishOrderInput{PaymentStatus: int(status.Failed)}, codes.ConnectorError, true)
	}
	w.threeDS.used = true
	w.threeDS.authenticationID = out.AuthenticationID
	if out.Status == "authenticated" {
		w.threeDS.result = "frictionless"
		w.threeDS.data = &activities.ThreeDSData{AuthenticationID: out.AuthenticationID, ECI: out.ECI, CAVV: out.CAVV}
		return w.authorise(ctx)
	}
	w.threeDS.awaiting = true
	w.threeDS.result = "challenge"
	return w.awaitShopper(ctx, out.ACSURL)
}

// threeDSDone continues a challenged payment with the ACS's verdict.
func (w *orderWorkflow) threeDSDone(ctx workflow.Context, r ThreeDSResult) error {
	if !w.threeDS.awaiting || r.AuthenticationID != w.threeDS.authenticationID {
		workflow.GetLogger(ctx).Warn("3-D Secure result not awaited", "authentication_id", r.AuthenticationID)
		return nil
	}
	w.threeDS.awaiting = false
	var res PaymentResult
	var err error
	if r.Status == "authenticated" {
		w.threeDS.result = "challenge:authenticated"
		w.threeDS.data = &activities.ThreeDSData{AuthenticationID: r.AuthenticationID, ECI: r.ECI, CAVV: r.CAVV}
		res, err = w.authorise(ctx)
	} else {
		w.threeDS.result = "challenge:failed"
		res, err = w.finish(ctx, activities.FinishOrderInput{PaymentStatus: int(status.Failed)}, codes.ThreeDSFailed, true)
	}
	if err != nil {
		return err
	}
	w.result = &res
	return w.notify(ctx, NotifyPayment, res.Code(), nil)
}

// startAPM creates the payment at the provider and sends the shopper there.
func (w *orderWorkflow) startAPM(ctx workflow.Context) (PaymentResult, error) {
	var out activities.APMOutcome
	err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, acquirerOpOptions), a.CreateAPMPayment,
		activities.APMInput{
			IdempotencyKey: idempotencyKey(w.id, "apm"),
			Method:         w.in.APM.Method,
			Amount:         w.in.Amount,
			Currency:       w.in.Currency,
			Country:        w.in.APM.Country,
			BankCode:       w.in.APM.BankCode,
			Reference:      w.in.TransactionID,
			CallbackURL:    w.in.PublicURL + "/v1/apm/callback",
			ReturnURL:      w.in.APM.ReturnURL,
			Name:           w.in.APM.Name,
			Email:          w.in.APM.Email,
			Document:       w.in.APM.Document,
		}).Get(ctx, &out)
	if err != nil {
		workflow.GetLogger(ctx).Error("APM payment not created", "error", err)
		return w.finish(ctx, activities.FinishOrderInput{PaymentStatus: int(status.Failed)}, codes.ConnectorError, false)
	}
	w.apm = apmState{paymentID: out.PaymentID, awaiting: true}
	return w.awaitShopper(ctx, out.RedirectURL)
}

// apmDone settles an APM payment with the provider's verdict.
func (w *orderWorkflow) apmDone(ctx workflow.Context, r APMResult) error {
	if !w.apm.awaiting || r.PaymentID != w.apm.paymentID {
		workflow.GetLogger(ctx).Warn("APM result not awaited", "payment_id", r.PaymentID)
		return nil
	}
	w.apm.awaiting = false
	var res PaymentResult
	var err error
	if r.Status == "succeeded" {
		w.chargeID = r.PaymentID
		w.authorised, w.captured = w.in.Amount, w.in.Amount
		res, err = w.finish(ctx, activities.FinishOrderInput{PaymentStatus: int(status.Paid), CapturedAmount: w.in.Amount,
			ConnectorRef: r.PaymentID}, codes.OK, false)
	} else {
		res, err = w.finish(ctx, activities.FinishOrderInput{PaymentStatus: int(status.Failed), ConnectorRef: r.PaymentID},
			codes.ShopperCancelled, false)
	}
	if err != nil {
		return err
	}
	w.result = &res
	return w.notify(ctx, NotifyPayment, res.Code(), nil)
}

// shopperLapsed ends an order whose shopper did not finish in time.
func (w *orderWorkflow) shopperLapsed(ctx workflow.Context) error {
	if w.apm.awaiting {
		// The provider may have settled without reaching us: ask it once.
		var out activities.APMOutcome
		err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, acquirerOpOptions), a.GetAPMPayment,
			activities.APMStatusInput{PaymentID: w.apm.paymentID}).Get(ctx, &out)
		if err == nil && out.Status == "succeeded" {
			return w.apmDone(ctx, APMResult{PaymentID: w.apm.paymentID, Status: out.Status})
		}
	}
	w.threeDS.awaiting, w.apm.awaiting = false, false
	code := codes.SessionExpired
	if w.threeDS.used {
		w.threeDS.result = "challenge:timeout"
		code = codes.ThreeDSFailed
	}
	ps := status.Expired
	if w.threeDS.used {
		ps = status.Failed
	}
	res, err := w.finish(ctx, activities.FinishOrderInput{PaymentStatus: int(ps)}, code, true)
	if err != nil {
		return err
	}
	w.result = &res
	return w.notify(ctx, NotifyPayment, res.Code(), nil)
}

// shopperWindow is how long the order waits for its shopper.
func (w *orderWorkflow) shopperWindow() time.Duration {
	if w.in.Kind == KindAPM {
		return max(w.in.Windows.APM, 0)
	}
	return max(w.in.Windows.Session, 0)
}

// registerShopperHandlers installs the signals and updates of the shopper's side.
func (w *orderWorkflow) registerShopperHandlers(ctx workflow.Context) error {
	threeDS := workflow.GetSignalChannel(ctx, SignalThreeDSResult)
	apm := workflow.GetSignalChannel(ctx, SignalAPMResult)
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			var r3 ThreeDSResult
			var ra APMResult
			sel := workflow.NewSelector(ctx)
			sel.AddReceive(threeDS, func(c workflow.ReceiveChannel, more bool) { c.Receive(ctx, &r3) })
			sel.AddReceive(apm, func(c workflow.ReceiveChannel, more bool) { c.Receive(ctx, &ra) })
			sel.Select(ctx)
			// Count the result as in flight, so the order cannot end between
			// its final status and the notification of it.
			w.inFlight++
			if err := w.lock.Lock(ctx); err != nil {
				return
			}
			var err error
			if r3.AuthenticationID != "" {
				err = w.threeDSDone(ctx, r3)
			} else if ra.PaymentID != "" {
				err = w.apmDone(ctx, ra)
			}
			w.lock.Unlock()
			w.inFlight--
			if err != nil {
				workflow.GetLogger(ctx).Error("shopper result", "error", err)
			}
		}
	})
	err := workflow.SetUpdateHandlerWithOptions(ctx, UpdatePay, w.payFromPage, workflow.UpdateHandlerOptions{
		Validator: func(ctx workflow.Context, req PayRequest) error {
			if w.in.Kind != KindCheckout || w.status != status.Pending || w.card.Token != "" {
				return refuse(codes.InvalidState, "the order is not waiting for a card")
			}
			if req.Card.Token == "" {
				return refuse(codes.MissingField, "card")
			}
			return nil
		},
	})
	if err != nil {
		return err
	}
	return workflow.SetUpdateHandlerWithOptions(ctx, UpdateShopperCancel, w.shopperCancel, workflow.UpdateHandlerOptions{
		Validator: func(ctx workflow.Context, _ struct{}) error {
			if w.status != status.Pending || w.threeDS.awaiting {
				return refuse(codes.InvalidState, "the order is not waiting for the shopper")
			}
			return nil
		},
	})
}

// payFromPage charges the card the shopper gave on the payment page. It
// answers once the payment is final or waits for a 3-D Secure challenge.
func (w *orderWorkflow) payFromPage(ctx workflow.Context, req PayRequest) (PaymentResult, error) {
	if err := w.lock.Lock(ctx); err != nil {
		return PaymentResult{}, err
	}
	defer w.lock.Unlock()
	if w.status != status.Pending || w.card.Token != "" {
		return PaymentResult{}, refuse(codes.InvalidState, "the order is not waiting for a card")
	}
	w.card = req.Card
	if err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, storeOptions), a.AttachCard,
		activities.AttachCardInput{TransactionID: w.in.TransactionID, CardMasked: w.card.Masked, CardBrand: w.card.Brand,
			CardToken: w.card.Token, CardFingerprint: w.card.Fingerprint}).Get(ctx, nil); err != nil {
		return PaymentResult{}, err
	}
	res, err := w.checkAndCharge(ctx)
	if err != nil {
		return PaymentResult{}, err
	}
	w.result = &res
	if w.status != status.Pending && w.status != status.HeldForReview {
		if err := w.notify(ctx, NotifyPayment, res.Code(), nil); err != nil {
			return PaymentResult{}, err
		}
	}
	return res, nil
}

// shopperCancel ends a checkout the shopper left.
func (w *orderWorkflow) shopperCancel(ctx workflow.Context, _ struct{}) (PaymentResult, error) {
	if err := w.lock.Lock(ctx); err != nil {
		return PaymentResult{}, err
	}
	defer w.lock.Unlock()
	if w.status != status.Pending {
		return PaymentResult{}, temporal.NewApplicationError("the order is not waiting for the shopper", ErrTypeEntryRefused, codes.InvalidState.ID)
	}
	w.apm.awaiting = false
	res, err := w.finish(ctx, activities.FinishOrderInput{PaymentStatus: int(status.Failed)}, codes.ShopperCancelled, w.card.Token != "")
	if err != nil {
		return PaymentResult{}, err
	}
	w.result = &res
	if err := w.notify(ctx, NotifyPayment, res.Code(), nil); err != nil {
		return PaymentResult{}, err
	}
	return res, nil
}
