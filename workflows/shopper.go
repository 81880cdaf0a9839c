package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/order"
	"github.com/paygate/paygate/internal/domain/status"
)

// Order kinds, under the names the API starts orders with; they are the
// domain's (internal/domain/order).
const (
	KindCard     = order.KindCard     // the merchant sends the card (direct payment)
	KindCheckout = order.KindCheckout // the shopper pays on our hosted page
	KindAPM      = order.KindAPM      // an alternative payment method's provider
)

// Signals and updates of the shopper's side.
const (
	// SignalThreeDSResult wakes an order waiting for a 3-D Secure
	// challenge: the ACS says the authentication it names has an outcome.
	// The order asks the ACS for that outcome.
	SignalThreeDSResult = "threeds-result"
	// SignalAPMResult wakes an order waiting for its APM payment: the
	// provider says the payment it names has moved. The order asks the
	// provider for the payment's status.
	SignalAPMResult = "apm-result"
	// UpdatePay gives a checkout order the shopper's card.
	UpdatePay = "pay"
	// UpdatePayAPM starts a checkout order's payment with the alternative
	// payment method the shopper chose on the payment page.
	UpdatePayAPM = "pay-apm"
	// UpdateShopperCancel is the shopper leaving the hosted page.
	UpdateShopperCancel = "shopper-cancel"
)

// Default windows of the shopper's side (docs/design.md §1).
const (
	DefaultSessionWindow = order.DefaultSessionWindow
	DefaultAPMWindow     = order.DefaultAPMWindow
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

// ThreeDSResult wakes an order waiting for a 3-D Secure challenge. It names
// the authentication only: what a callback claims is never recorded.
type ThreeDSResult struct {
	AuthenticationID string
	// Deprecated: Status, ECI and CAVV are what a callback claimed. Orders
	// ignore them; they are read only to replay orders that took a
	// callback's word before changeCallbackInquiry. Left empty, they are
	// not sent.
	Status string `json:",omitempty"`
	ECI    string `json:",omitempty"`
	CAVV   string `json:",omitempty"`
}

// APMResult wakes an order waiting for its APM payment. It names the
// provider's payment only: what a callback claims is never recorded.
type APMResult struct {
	PaymentID string
	// Deprecated: Status is what a callback claimed. Orders ignore it; it
	// is read only to replay orders that took a callback's word before
	// changeCallbackInquiry. Left empty, it is not sent.
	Status string `json:",omitempty"`
}

// providerInquiryOptions: what a callback woke the order for is asked of the
// provider until it answers; meanwhile nothing is recorded. The inquiry is
// cancelled when the order stops waiting (its window lapsed, the shopper
// left), so a provider that never comes back never holds the order open.
var providerInquiryOptions = workflow.ActivityOptions{
	StartToCloseTimeout: 30 * time.Second,
	RetryPolicy: &temporal.RetryPolicy{
		InitialInterval:    time.Second,
		BackoffCoefficient: 2,
		MaximumInterval:    2 * time.Minute,
	},
}

// PayRequest is the card the shopper gave on the payment page.
type PayRequest struct {
	Card CardRef
}

// PayAPMRequest is the alternative payment method the shopper chose on the
// payment page, with what its provider needs.
type PayAPMRequest struct {
	APM APMOrder
}

// awaitShopper records the order as waiting for the shopper (1000,
// order_status -1) and answers with where the shopper goes next.
func (w *orderWorkflow) awaitShopper(ctx workflow.Context, issuerURL string) (PaymentResult, error) {
	res, err := w.finish(ctx, activities.FinishOrderInput{PaymentStatus: status.Pending}, codes.AwaitingShopper, false)
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
			Connector:      w.connectorName(),
			CardToken:      w.st.Card.Token,
			IdempotencyKey: w.key("3ds"),
			Amount:         w.in.Amount,
			Currency:       w.in.Currency,
			Reference:      w.in.TransactionID,
			ReturnURL:      w.in.PublicURL + "/v1/3ds/callback",
			Browser:        browserOf(w.in.Details),
		}).Get(ctx, &out)
	if err != nil {
		workflow.GetLogger(ctx).Error("3-D Secure authentication failed", "error", err)
		return w.finish(ctx, activities.FinishOrderInput{PaymentStatus: status.Failed}, codes.ConnectorError, true)
	}
	if out.Status != connector.Authenticated && (out.Status == connector.AuthenticationFailed || out.ACSURL == "") &&
		w.version(ctx, changeThreeDSFailedAtStart, 1) != workflow.DefaultVersion {
		workflow.GetLogger(ctx).Warn("3-D Secure authentication failed as it started", "status", out.Status)
		next, step := w.st.ThreeDSFailedAtStart(out.AuthenticationID)
		w.st = next
		return w.finish(ctx, activities.FinishOrderInput{PaymentStatus: step.Status}, step.Code, true)
	}
	next, step := w.st.ThreeDSStarted(out.AuthenticationID, out.Status, out.ECI, out.CAVV)
	w.st = next
	if step.Next == order.ChargeCard {
		return w.authorise(ctx)
	}
	return w.awaitShopper(ctx, out.ACSURL)
}

// threeDSCallback handles the ACS's callback for an order. A callback for
// an authentication the order does not wait for changes nothing. Otherwise
// the order asks the ACS for the authentication and goes on with the ACS's
// answer: authenticated (charge with the ACS's ECI and CAVV), failed (A0005)
// or still challenged (keep waiting, the session window still runs).
func (w *orderWorkflow) threeDSCallback(ctx workflow.Context, r ThreeDSResult) error {
	id := r.AuthenticationID
	awaited := func() bool { return w.st.AwaitsThreeDS(id) }
	return w.confirmCallback(ctx, callback{
		what: "3-D Secure", idKey: "authentication_id", id: id, awaited: awaited,
		takeWord: func(ctx workflow.Context) error {
			return w.threeDSSettle(ctx, activities.ThreeDSOutcome{AuthenticationID: id, Status: order.CallbackAuthentication(r.Status),
				ECI: r.ECI, CAVV: r.CAVV})
		},
		ask: func(ctx workflow.Context) (func(workflow.Context) error, bool) {
			var au activities.ThreeDSOutcome
			in := activities.ThreeDSStatusInput{Connector: w.connectorName(), AuthenticationID: id}
			if !w.askProvider(ctx, a.Get3DSAuthentication, in, &au, awaited) {
				return nil, false
			}
			au.AuthenticationID = id
			return func(ctx workflow.Context) error { return w.threeDSSettle(ctx, au) }, true
		},
	})
}

// callback is a provider's callback as the order confirms it: the wait it
// names, the word it brings (taken as it is only by orders from before
// orders asked the provider), and how the provider is asked and its answer
// settled.
type callback struct {
	what, idKey, id string // for the log
	awaited         func() bool
	takeWord        func(workflow.Context) error
	ask             func(workflow.Context) (settle func(workflow.Context) error, answered bool)
}

// confirmCallback treats a callback as a rumour: a callback for what the
// order does not wait for changes nothing; otherwise the order asks the
// provider, without holding the order's lock while it waits, and settles
// the provider's answer under the lock if the order still waits for it.
func (w *orderWorkflow) confirmCallback(ctx workflow.Context, c callback) error {
	if err := w.lockLoaded(ctx); err != nil {
		return err
	}
	if !c.awaited() {
		w.lock.Unlock()
		workflow.GetLogger(ctx).Warn(c.what+" callback not awaited", c.idKey, c.id)
		return nil
	}
	if w.version(ctx, changeCallbackInquiry, 1) == workflow.DefaultVersion {
		// Handled before orders asked the provider: replay the callback's word.
		defer w.lock.Unlock()
		return c.takeWord(ctx)
	}
	w.lock.Unlock()
	settle, answered := c.ask(ctx)
	if !answered {
		return nil
	}
	if err := w.lockLoaded(ctx); err != nil {
		return err
	}
	defer w.lock.Unlock()
	if !c.awaited() {
		return nil
	}
	return settle(ctx)
}

// threeDSSettle continues a challenged payment with the ACS's answer; an
// authentication still challenged leaves the order waiting.
func (w *orderWorkflow) threeDSSettle(ctx workflow.Context, au activities.ThreeDSOutcome) error {
	next, step := w.st.ThreeDSAnswered(au.Status, au.ECI, au.CAVV)
	w.st = next
	var res PaymentResult
	var err error
	switch step.Next {
	case order.ChargeCard:
		res, err = w.authorise(ctx)
	case order.FinishPayment:
		res, err = w.finish(ctx, activities.FinishOrderInput{PaymentStatus: step.Status}, step.Code, true)
	default:
		workflow.GetLogger(ctx).Info("3-D Secure challenge not answered yet: the order waits",
			"authentication_id", au.AuthenticationID, "acs_status", au.Status)
		return nil
	}
	if err != nil {
		return err
	}
	w.st.Result = &res
	return w.notify(ctx, NotifyPayment, res.Code(), nil)
}

// askProvider runs a status inquiry (activity, with in) for a callback and
// stores the provider's answer in valuePtr. It retries until the provider
// answers; it gives up, reporting false, when the provider refuses the
// inquiry or when waiting turns false (the inquiry is then cancelled). It
// never fails the workflow.
func (w *orderWorkflow) askProvider(ctx workflow.Context, activity, in, valuePtr any, waiting func() bool) bool {
	logger := workflow.GetLogger(ctx)
	ictx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	f := workflow.ExecuteActivity(workflow.WithActivityOptions(ictx, providerInquiryOptions), activity, in)
	if err := workflow.Await(ctx, func() bool { return f.IsReady() || !waiting() }); err != nil {
		return false
	}
	if !f.IsReady() {
		logger.Info("the order stopped waiting: status inquiry dropped")
		return false
	}
	if err := f.Get(ctx, valuePtr); err != nil {
		logger.Error("status inquiry refused: the order keeps waiting", "error", err)
		return false
	}
	return true
}

// startAPM creates the payment at the provider and sends the shopper there.
func (w *orderWorkflow) startAPM(ctx workflow.Context) (PaymentResult, error) {
	var out activities.APMOutcome
	err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, acquirerOpOptions), a.CreateAPMPayment,
		activities.APMInput{
			Connector:      w.connectorName(),
			IdempotencyKey: w.key("apm"),
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
		return w.finish(ctx, activities.FinishOrderInput{PaymentStatus: status.Failed}, codes.ConnectorError, false)
	}
	w.st = w.st.APMStarted(out.PaymentID)
	return w.awaitShopper(ctx, out.RedirectURL)
}

// apmCallback handles the APM provider's callback for an order. A callback
// for a payment the order does not wait for changes nothing. Otherwise the
// order asks the provider for the payment and records the provider's status:
// succeeded (paid), cancelled (A0007) or still pending (keep waiting, the
// APM window still runs).
func (w *orderWorkflow) apmCallback(ctx workflow.Context, r APMResult) error {
	id := r.PaymentID
	awaited := func() bool { return w.st.AwaitsAPM(id) }
	return w.confirmCallback(ctx, callback{
		what: "APM", idKey: "payment_id", id: id, awaited: awaited,
		takeWord: func(ctx workflow.Context) error { return w.apmSettle(ctx, id, order.CallbackAPMStatus(r.Status)) },
		ask: func(ctx workflow.Context) (func(workflow.Context) error, bool) {
			var p activities.APMOutcome
			in := activities.APMStatusInput{Connector: w.connectorName(), PaymentID: id}
			if !w.askProvider(ctx, a.GetAPMPayment, in, &p, awaited) {
				return nil, false
			}
			return func(ctx workflow.Context) error { return w.apmSettle(ctx, id, p.Status) }, true
		},
	})
}

// apmSettle records the provider's status of the order's APM payment; a
// payment still pending leaves the order waiting.
func (w *orderWorkflow) apmSettle(ctx workflow.Context, paymentID string, providerStatus connector.APMStatus) error {
	next, step := w.st.APMAnswered(providerStatus, w.in.Amount)
	if step.Next != order.FinishPayment {
		workflow.GetLogger(ctx).Info("APM payment not settled yet: the order waits",
			"payment_id", paymentID, "provider_status", providerStatus)
		return nil
	}
	w.st = next
	out := activities.FinishOrderInput{PaymentStatus: step.Status, ConnectorRef: paymentID}
	if step.Status == status.Paid {
		out.CapturedAmount = w.st.Captured
	}
	res, err := w.finish(ctx, out, step.Code, false)
	if err != nil {
		return err
	}
	w.st.Result = &res
	return w.notify(ctx, NotifyPayment, res.Code(), nil)
}

// shopperLapsed ends an order whose shopper did not finish in time.
func (w *orderWorkflow) shopperLapsed(ctx workflow.Context) error {
	if (w.st.APM.Awaiting || w.st.ThreeDS.Awaiting) && w.version(ctx, changeShopperCallOff, 1) != workflow.DefaultVersion {
		paid, err := w.callOffAtLapse(ctx)
		if err != nil {
			return err
		}
		if paid {
			return nil
		}
	} else if w.st.APM.Awaiting {
		// The provider may have settled without reaching us: ask it once.
		var out activities.APMOutcome
		err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, acquirerOpOptions), a.GetAPMPayment,
			activities.APMStatusInput{Connector: w.connectorName(), PaymentID: w.st.APM.PaymentID}).Get(ctx, &out)
		if err == nil && out.Status == connector.APMSucceeded {
			return w.apmSettle(ctx, w.st.APM.PaymentID, out.Status)
		}
	}
	next, step := w.st.ShopperLapsed()
	w.st = next
	res, err := w.finish(ctx, activities.FinishOrderInput{PaymentStatus: step.Status}, step.Code, true)
	if err != nil {
		return err
	}
	w.st.Result = &res
	return w.notify(ctx, NotifyPayment, res.Code(), nil)
}

// callOffAtLapse calls off, at the window's end, what the shopper could
// still complete: the APM payment at its provider, which would otherwise
// take a later payment the order no longer awaits, and a 3-D Secure
// authentication that holds something (Stripe's PaymentIntent, authorised
// once the shopper passes). It reports paid when the provider says the
// shopper paid first, or the ACS that the shopper passed the challenge
// (the order is then settled: paid, or charged). A call-off the
// provider does not answer is sent again after each of lateLooks, the order
// pending meanwhile, with the APM payment's status read beside it; one it
// refuses (the payment is over, or cannot be called off) or that stays
// unanswered for that hour is left, and the status asked once, as before.
// Its error is only the workflow's cancellation or the settlement's.
func (w *orderWorkflow) callOffAtLapse(ctx workflow.Context) (bool, error) {
	actx := workflow.WithLocalActivityOptions(ctx, acquirerOpOptions)
	if w.st.ThreeDS.Awaiting {
		// A shopper who passed the challenge and closed the browser before
		// coming back sent no callback: the ACS is asked first, and a card
		// it authenticated is charged, as the callback would have had it.
		var au activities.ThreeDSOutcome
		err := workflow.ExecuteLocalActivity(actx, a.Get3DSAuthentication,
			activities.ThreeDSStatusInput{Connector: w.connectorName(), AuthenticationID: w.st.ThreeDS.AuthenticationID}).Get(ctx, &au)
		if err == nil && au.Status == connector.Authenticated {
			return true, w.threeDSSettle(ctx, au)
		}
		callOff := func() bool {
			err := workflow.ExecuteLocalActivity(actx, a.CancelAuthentication,
				activities.ThreeDSStatusInput{Connector: w.connectorName(), AuthenticationID: w.st.ThreeDS.AuthenticationID}).Get(ctx, nil)
			if err != nil && !acquirerRefused(err) {
				workflow.GetLogger(ctx).Warn("3-D Secure authentication not called off: asked again later", "error", err)
				return false
			}
			return true
		}
		if !callOff() {
			answered, err := onLateLooks(ctx, func() (bool, bool) { return callOff(), false })
			if err != nil {
				return false, err
			}
			if !answered {
				workflow.GetLogger(ctx).Error("3-D Secure authentication never called off: the order fails, the acquirer's hold lapses on its own")
			}
		}
		return false, nil
	}
	in := activities.APMStatusInput{Connector: w.connectorName(), PaymentID: w.st.APM.PaymentID}
	var out activities.APMOutcome
	ask := func() bool {
		var seen activities.APMOutcome
		if err := workflow.ExecuteLocalActivity(actx, a.GetAPMPayment, in).Get(ctx, &seen); err != nil {
			return false
		}
		out = seen
		return true
	}
	callOff := func() (done bool) {
		err := workflow.ExecuteLocalActivity(actx, a.CancelAPMPayment, in).Get(ctx, &out)
		switch {
		case errorType(err) == activities.ErrTypeCannotCancel || acquirerRefused(err):
			// Nothing to call off, or no way to: the status decides.
			out = activities.APMOutcome{}
			ask()
			return true
		case err != nil:
			workflow.GetLogger(ctx).Warn("APM payment not called off: asked again later", "payment_id", in.PaymentID, "error", err)
			return false
		}
		return out.Status != connector.APMPending
	}
	if !callOff() {
		answered, err := onLateLooks(ctx, func() (bool, bool) {
			if callOff() {
				return true, false
			}
			// A payment the shopper completed meanwhile is settled,
			// whatever the call-off's fate.
			return ask() && out.Status == connector.APMSucceeded, false
		})
		if err != nil {
			return false, err
		}
		if !answered {
			workflow.GetLogger(ctx).Error("APM payment never called off: the order expires as the provider last had it", "payment_id", in.PaymentID)
			out = activities.APMOutcome{}
			ask()
		}
	}
	if out.Status == connector.APMSucceeded {
		return true, w.apmSettle(ctx, w.st.APM.PaymentID, out.Status)
	}
	return false, nil
}

// registerShopperHandlers installs the signals and updates of the shopper's side.
func (w *orderWorkflow) registerShopperHandlers(ctx workflow.Context) error {
	// From shape 2 a first run listens only once it sends the shopper to
	// 3-D Secure or an APM (checkAndCharge); a callback sent before then
	// waits in its channel.
	if !w.lean() || w.in.Resume != nil {
		w.listenToShopper()
	}
	err := workflow.SetUpdateHandlerWithOptions(ctx, UpdatePay, w.payFromPage, workflow.UpdateHandlerOptions{
		Validator: func(ctx workflow.Context, req PayRequest) error {
			// A shopper who chose an APM pays there: a card now would be
			// judged on the verdict the APM's check kept, and start the
			// APM again.
			if w.in.Kind != KindCheckout || w.st.Status != status.Pending || w.st.Card.Token != "" || w.in.APM != nil {
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
	err = workflow.SetUpdateHandlerWithOptions(ctx, UpdatePayAPM, w.payAPMFromPage, workflow.UpdateHandlerOptions{
		Validator: func(ctx workflow.Context, req PayAPMRequest) error { return w.validatePayAPM(req) },
	})
	if err != nil {
		return err
	}
	return workflow.SetUpdateHandlerWithOptions(ctx, UpdateShopperCancel, w.shopperCancel, workflow.UpdateHandlerOptions{
		Validator: func(ctx workflow.Context, _ struct{}) error {
			if w.st.Status != status.Pending || w.st.ThreeDS.Awaiting {
				return refuse(codes.InvalidState, "the order is not waiting for the shopper")
			}
			return nil
		},
	})
}

// listenToShopper starts, once, the coroutine that takes the 3-D Secure and
// APM callbacks.
func (w *orderWorkflow) listenToShopper() {
	if w.listening {
		return
	}
	w.listening = true
	ctx := w.root
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
			// Count the callback as in flight, so the order cannot end
			// while the provider is asked, nor between its final status
			// and the notification of it.
			w.inFlight++
			var err error
			if r3.AuthenticationID != "" {
				err = w.threeDSCallback(ctx, r3)
			} else if ra.PaymentID != "" {
				err = w.apmCallback(ctx, ra)
			}
			w.inFlight--
			if err != nil {
				workflow.GetLogger(ctx).Error("shopper result", "error", err)
			}
		}
	})
}

// payFromPage charges the card the shopper gave on the payment page. It
// answers once the payment is final or waits for a 3-D Secure challenge.
func (w *orderWorkflow) payFromPage(ctx workflow.Context, req PayRequest) (PaymentResult, error) {
	if err := w.lockLoaded(ctx); err != nil {
		return PaymentResult{}, err
	}
	defer w.lock.Unlock()
	if w.st.Status != status.Pending || w.st.Card.Token != "" {
		return PaymentResult{}, refuse(codes.InvalidState, "the order is not waiting for a card")
	}
	if w.in.APM != nil && w.version(ctx, changePayAfterAPMChosen, 1) != workflow.DefaultVersion {
		// The shopper chose an APM (in another tab) while this card waited
		// for the lock: the order pays there, as its validator says.
		return PaymentResult{}, refuse(codes.InvalidState, "the order is not waiting for a card")
	}
	if err := w.accepted(ctx); err != nil {
		return PaymentResult{}, err
	}
	w.st.Card = req.Card
	if err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, storeOptions), a.AttachCard,
		activities.AttachCardInput{TransactionID: w.in.TransactionID, CardMasked: w.st.Card.Masked, CardBrand: w.st.Card.Brand,
			CardToken: w.st.Card.Token, CardFingerprint: w.st.Card.Fingerprint}).Get(ctx, nil); err != nil {
		return PaymentResult{}, err
	}
	res, err := w.checkAndCharge(ctx, nil)
	if err != nil {
		return PaymentResult{}, err
	}
	w.st.Result = &res
	if w.st.Status != status.Pending && w.st.Status != status.HeldForReview {
		if err := w.notify(ctx, NotifyPayment, res.Code(), nil); err != nil {
			return PaymentResult{}, err
		}
	}
	return res, nil
}

// validatePayAPM admits an APM for a checkout order still waiting for the
// shopper's choice: no card given, no APM started, and no card to keep (a
// subscription or token_flag needs a card).
func (w *orderWorkflow) validatePayAPM(req PayAPMRequest) error {
	switch {
	case w.in.Kind != KindCheckout || w.st.Status != status.Pending || w.st.Card.Token != "" || w.in.APM != nil:
		return refuse(codes.InvalidState, "the order is not waiting for the shopper's choice")
	case w.keepsCard():
		return refuse(codes.InvalidState, "the order keeps a card and takes cards only")
	case req.APM.Method == "":
		return refuse(codes.MissingField, "payment_method")
	}
	return nil
}

// payAPMFromPage starts the order's payment with the APM the shopper chose
// on the payment page, as a direct APM order does: the risk rules, then
// the payment at the provider, where the shopper is sent next.
func (w *orderWorkflow) payAPMFromPage(ctx workflow.Context, req PayAPMRequest) (PaymentResult, error) {
	if err := w.lockLoaded(ctx); err != nil {
		return PaymentResult{}, err
	}
	defer w.lock.Unlock()
	if err := w.validatePayAPM(req); err != nil {
		return PaymentResult{}, err
	}
	if err := w.accepted(ctx); err != nil {
		return PaymentResult{}, err
	}
	method := req.APM
	w.in.APM = &method
	if err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, storeOptions), a.AttachPaymentMethod,
		activities.AttachPaymentMethodInput{TransactionID: w.in.TransactionID, Method: method.Method}).Get(ctx, nil); err != nil {
		return PaymentResult{}, err
	}
	res, err := w.checkAndCharge(ctx, nil)
	if err != nil {
		return PaymentResult{}, err
	}
	w.st.Result = &res
	if w.st.Status != status.Pending && w.st.Status != status.HeldForReview {
		if err := w.notify(ctx, NotifyPayment, res.Code(), nil); err != nil {
			return PaymentResult{}, err
		}
	}
	return res, nil
}

// shopperCancel ends a checkout the shopper left.
func (w *orderWorkflow) shopperCancel(ctx workflow.Context, _ struct{}) (PaymentResult, error) {
	if err := w.lockLoaded(ctx); err != nil {
		return PaymentResult{}, err
	}
	defer w.lock.Unlock()
	if w.st.Status != status.Pending {
		return PaymentResult{}, temporal.NewApplicationError("the order is not waiting for the shopper", ErrTypeEntryRefused, codes.InvalidState.ID)
	}
	callOff := w.version(ctx, changeShopperCallOff, 1) != workflow.DefaultVersion
	if callOff && w.st.ThreeDS.Awaiting {
		// A pay that sent the shopper to the challenge ran while this
		// cancel waited for the lock: the challenge's answer decides.
		return PaymentResult{}, temporal.NewApplicationError("the shopper is at the 3-D Secure challenge", ErrTypeEntryRefused, codes.InvalidState.ID)
	}
	if err := w.accepted(ctx); err != nil {
		return PaymentResult{}, err
	}
	if callOff && w.st.APM.Awaiting {
		// The shopper left the page for the provider, and cancels from
		// another tab: the payment is called off there first, or the
		// provider would still take it.
		paid, refusal, err := w.callOffAPM(ctx)
		switch {
		case err != nil:
			return PaymentResult{}, err
		case paid:
			return *w.st.Result, nil
		case refusal != nil:
			return PaymentResult{}, temporal.NewApplicationError(refusal.Message, ErrTypeEntryRefused, refusal.ID)
		}
	}
	next, step := w.st.ShopperLeft()
	w.st = next
	res, err := w.finish(ctx, activities.FinishOrderInput{PaymentStatus: step.Status}, step.Code, w.st.Card.Token != "")
	if err != nil {
		return PaymentResult{}, err
	}
	w.st.Result = &res
	if err := w.notify(ctx, NotifyPayment, res.Code(), nil); err != nil {
		return PaymentResult{}, err
	}
	return res, nil
}

// callOffAPM calls the order's APM payment off at its provider, for the
// shopper's cancel. paid: the shopper paid first, and the order is settled
// paid; refusal: the provider cannot call it off or did not answer, and the
// order waits on for the shopper or its window.
func (w *orderWorkflow) callOffAPM(ctx workflow.Context) (bool, *codes.Code, error) {
	var out activities.APMOutcome
	err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, acquirerOpOptions), a.CancelAPMPayment,
		activities.APMStatusInput{Connector: w.connectorName(), PaymentID: w.st.APM.PaymentID}).Get(ctx, &out)
	switch {
	case errorType(err) == activities.ErrTypeCannotCancel || err == nil && out.Status == connector.APMPending:
		c := codes.PendingNotCancellable
		return false, &c, nil
	case err != nil:
		workflow.GetLogger(ctx).Warn("APM payment not called off", "payment_id", w.st.APM.PaymentID, "error", err)
		c := codes.ConnectorError.With("the provider did not answer the cancel")
		return false, &c, nil
	case out.Status == connector.APMSucceeded:
		if err := w.apmSettle(ctx, w.st.APM.PaymentID, out.Status); err != nil {
			return false, nil, err
		}
		return true, nil, nil
	}
	return false, nil, nil
}

// browserOf is the shopper's browser and device as the payment order gives
// them (interface, Payment order: os, browser, browser_lang, time_zone,
// resolution, color_depth, user_agent, challenge_window_size, shopper_ip):
// they exist for the 3-D Secure authentication.
func browserOf(d order.Details) connector.Browser {
	return connector.Browser{
		Language: d.BrowserLang, UserAgent: d.UserAgent, TimeZone: d.TimeZone.String(), ScreenResolution: d.Resolution,
		ColorDepth: d.ColorDepth.String(), ChallengeWindowSize: d.ChallengeWindowSize.String(), IP: d.ShopperIP,
		OS: d.OS, Name: d.Browser,
	}
}
