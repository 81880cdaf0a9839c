package integration

// The forged-callback attack on the real stack: whoever knows the
// provider secret (here the default one, as an attacker would try it) can
// sign a 3-D Secure or APM callback, but a callback only wakes the order.
// The order asks the ACS or the APM provider and records what they say.

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"

	"github.com/paygate/paygate/app"
	"github.com/paygate/paygate/internal/adapters/connectors/simacquirer"
	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/dev/simulator"
	"github.com/paygate/paygate/workflows"
)

// queriedStatus is the order's payment_status as /v1/retrievalTrans shows it
// to the merchant.
func queriedStatus(t *testing.T, creds merchant.Credentials, orderNo string) string {
	t.Helper()
	status, r := query(t, creds, map[string]string{"orders": orderNo})
	if status != http.StatusOK || len(r.OrdersList) != 1 {
		t.Fatalf("retrievalTrans %s: HTTP %d, %d orders (%s)", orderNo, status, len(r.OrdersList), r.ReturnMessage)
	}
	return r.OrdersList[0].PaymentStatus
}

// waitQueriedStatus waits until retrievalTrans shows the order in want.
func waitQueriedStatus(t *testing.T, creds merchant.Credentials, orderNo, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := queriedStatus(t, creds, orderNo)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("order %s: payment_status %s, want %s", orderNo, got, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitInquiries waits until the order's workflow has completed n status
// inquiries (activities of type activityType) and has gone on from the last
// one, so that whatever it made of the answer is recorded.
func waitInquiries(t *testing.T, workflowID, activityType string, n int) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(20 * time.Second)
	for {
		scheduled := map[int64]bool{}
		done, handled := 0, false
		iter := env.temporal.GetWorkflowHistory(ctx, workflowID, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for iter.HasNext() {
			ev, err := iter.Next()
			if err != nil {
				t.Fatal(err)
			}
			switch ev.GetEventType() {
			case enums.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
				if ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() == activityType {
					scheduled[ev.GetEventId()] = true
				}
			case enums.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
				if scheduled[ev.GetActivityTaskCompletedEventAttributes().GetScheduledEventId()] {
					done++
					handled = false
				}
			case enums.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
				handled = true
			}
		}
		if done >= n && handled {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d %s inquiries completed and handled, want %d", workflowID, done, activityType, n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// signedAPMCallback posts an APM callback signed with the provider secret the
// gateway runs with (the default one, which an attacker knows).
func signedAPMCallback(t *testing.T, cb map[string]any) (int, string) {
	t.Helper()
	body, err := json.Marshal(cb)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, env.api.URL+"/v1/apm/callback", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Provider-Signature", simacquirer.SignProviderCallback(app.DefaultProviderSecret, body))
	resp, b := sendCallback(t, req)
	return resp.StatusCode, b
}

// sendCallback sends req and returns the answer and its body.
func sendCallback(t *testing.T, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := browser.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func TestForgedAPMCallbackDoesNotPay(t *testing.T) {
	t.Parallel()
	creds := apmAccount(t)
	orderNo := newOrderNo(t)
	a := authoriseAPM(t, signAPM(apmOrder(creds, orderNo, "PIX", "BRL", "BR"), creds.SignKey))
	if a.OrderStatus != "-1" || !strings.HasPrefix(a.IssuerURL, env.simHTTP.URL+"/apm/") {
		t.Fatalf("answer = %+v", a)
	}
	paymentID := a.IssuerURL[strings.LastIndex(a.IssuerURL, "/")+1:]
	wfID := workflows.OrderWorkflowID(creds.MerchantID, creds.AccountID, orderNo)

	// Correctly signed callbacks claiming an outcome the provider does not
	// hold: each is answered as a callback is, and only wakes the order.
	for i, claim := range []string{"succeeded", "cancelled"} {
		code, body := signedAPMCallback(t, map[string]any{"payment_id": paymentID, "reference": a.TransactionID,
			"status": claim, "amount": 10000, "currency": "BRL", "method": "PIX"})
		if code != http.StatusOK || !strings.Contains(body, `"ok":true`) {
			t.Fatalf("callback claiming %s: HTTP %d %s", claim, code, body)
		}
		waitInquiries(t, wfID, "GetAPMPayment", i+1)
		if got := queriedStatus(t, creds, orderNo); got != "1000" {
			t.Fatalf("after a callback claiming %s the provider never confirmed: payment_status %s, want 1000", claim, got)
		}
	}
	if p, ok := env.sim.APMPayment(paymentID); !ok || p.Status != "pending" {
		t.Fatalf("the provider's payment: %+v", p)
	}

	// A callback naming another order's payment, paid for real, changes
	// nothing either: the order asks for its own payment only.
	other := newOrderNo(t)
	b := authoriseAPM(t, signAPM(apmOrder(creds, other, "PIX", "BRL", "BR"), creds.SignKey))
	browse(t, http.MethodPost, b.IssuerURL+"/pay", url.Values{})
	waitQueriedStatus(t, creds, other, "3000")
	otherID := b.IssuerURL[strings.LastIndex(b.IssuerURL, "/")+1:]
	code, _ := signedAPMCallback(t, map[string]any{"payment_id": otherID, "reference": a.TransactionID, "status": "succeeded",
		"amount": 10000, "currency": "BRL", "method": "PIX"})
	if code != http.StatusOK {
		t.Fatalf("callback naming another payment: HTTP %d", code)
	}
	waitLog(t, `"msg":"APM callback not awaited"`, otherID)
	if got := queriedStatus(t, creds, orderNo); got != "1000" {
		t.Fatalf("a callback naming another payment moved the order to %s", got)
	}

	// The provider really settles: its own callback wakes the order, which
	// finds the payment succeeded.
	resp, _ := browse(t, http.MethodPost, a.IssuerURL+"/pay", url.Values{})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("provider pay: HTTP %d", resp.StatusCode)
	}
	waitQueriedStatus(t, creds, orderNo, "3000")
	o := findOrder(t, creds.AccountID, orderNo)
	if o.ResultCode != "0000" || o.CapturedAmount != 10000 {
		t.Errorf("record: %s captured %d", o.ResultCode, o.CapturedAmount)
	}
}

// waitLog waits for a log line of the gateway holding every one of parts.
func waitLog(t *testing.T, parts ...string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		for _, line := range strings.Split(env.logs.String(), "\n") {
			found := true
			for _, p := range parts {
				found = found && strings.Contains(line, p)
			}
			if found {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no log line holds %q", parts)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// threeDSOrder starts a direct payment with the challenge card and returns
// its answer and the authentication id of its ACS page.
func threeDSOrder(t *testing.T, creds merchant.Credentials, orderNo string) (respon, string) {
	t.Helper()
	f := cardOrder(creds, orderNo, "4000000000003220")
	f["open3d"] = "do3DS"
	_, r := authorise(t, signCard(f, creds.SignKey))
	if r.OrderStatus != "-1" || !strings.HasPrefix(r.IssuerURL, env.simHTTP.URL+"/acs/") {
		t.Fatalf("first answer: %s %s %s", r.OrderStatus, r.ResultInfo, r.IssuerURL)
	}
	return r, r.IssuerURL[strings.LastIndex(r.IssuerURL, "/")+1:]
}

// forgedThreeDS is a challenge result for authenticationID and reference,
// signed with the default provider secret.
func forgedThreeDS(authenticationID, status, cavv, reference string) url.Values {
	return url.Values{
		"authentication_id": {authenticationID}, "status": {status}, "eci": {"05"}, "cavv": {cavv},
		"reference": {reference},
		"signature": {simacquirer.SignThreeDSResult(app.DefaultProviderSecret, authenticationID, status, cavv, reference)},
	}
}

// postAsync posts a 3-D Secure callback from a shopper's browser without
// waiting: the gateway answers it only once the order is final (or after
// its own wait).
func postAsync(t *testing.T, fields url.Values) <-chan int {
	t.Helper()
	done := make(chan int, 1)
	go func() {
		req, err := http.NewRequest(http.MethodPost, env.api.URL+"/v1/3ds/callback", strings.NewReader(fields.Encode()))
		if err != nil {
			done <- 0
			return
		}
		req.Header.Set("Content-Type", formType)
		resp, err := browser.Do(req)
		if err != nil {
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	return done
}

// passChallenge answers the ACS page as the shopper and returns the ACS's
// signed result form.
func passChallenge(t *testing.T, acsURL, otp string) url.Values {
	t.Helper()
	_, page := browse(t, http.MethodPost, acsURL, url.Values{"otp": {otp}})
	fields := hiddenFields(page)
	if fields.Get("authentication_id") == "" {
		t.Fatalf("the ACS answer has no result form:\n%s", page)
	}
	return fields
}

func TestForgedThreeDSCallbackDoesNotAuthenticate(t *testing.T) {
	t.Parallel()
	creds := env.auto
	orderNo := newOrderNo(t)
	r, auID := threeDSOrder(t, creds, orderNo)
	wfID := workflows.OrderWorkflowID(creds.MerchantID, creds.AccountID, orderNo)

	// A signed result claiming success while the shopper has not answered
	// the challenge: the ACS still says challenge_required.
	forged := postAsync(t, forgedThreeDS(auID, "authenticated", "AAABBBCCCDDDEEEFFF0011223344=", r.TransactionID))
	waitInquiries(t, wfID, "Get3DSAuthentication", 1)
	if got := queriedStatus(t, creds, orderNo); got != "1000" {
		t.Fatalf("a forged 3-D Secure result moved the order to %s", got)
	}
	if n := chargesFor(r.TransactionID); n != 0 {
		t.Fatalf("charges after a forged result = %d, want 0", n)
	}

	// The shopper passes the challenge: the order asks the ACS again and
	// charges with the ACS's authentication.
	resp, _ := browse(t, http.MethodPost, env.api.URL+"/v1/3ds/callback", passChallenge(t, r.IssuerURL, "123456"))
	if resp.StatusCode != http.StatusOK {
		t.Errorf("real callback: HTTP %d", resp.StatusCode)
	}
	waitQueriedStatus(t, creds, orderNo, "3000")
	o := findOrder(t, creds.AccountID, orderNo)
	if o.ResultCode != "0000" || !o.Is3DS || o.ThreeDSResult != "challenge:authenticated" {
		t.Errorf("record: %s is3ds %v %q", o.ResultCode, o.Is3DS, o.ThreeDSResult)
	}
	if n := chargesFor(r.TransactionID); n != 1 {
		t.Errorf("charges = %d, want 1", n)
	}
	// The forged request's browser is sent on with the order's real result.
	select {
	case code := <-forged:
		if code != http.StatusOK {
			t.Errorf("forged callback answered HTTP %d once the order was final", code)
		}
	case <-time.After(40 * time.Second):
		t.Error("the forged callback was never answered")
	}
}

func TestReplayedThreeDSResultDoesNotAuthenticate(t *testing.T) {
	t.Parallel()
	creds := env.auto
	// Order A passes its challenge for real.
	noA := newOrderNo(t)
	rA, _ := threeDSOrder(t, creds, noA)
	resultA := passChallenge(t, rA.IssuerURL, "123456")
	resp, _ := browse(t, http.MethodPost, env.api.URL+"/v1/3ds/callback", resultA)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("order A callback: HTTP %d", resp.StatusCode)
	}
	waitQueriedStatus(t, creds, noA, "3000")

	// A's result replayed on order B, re-signed for B's reference: B waits
	// for another authentication and ignores it.
	noB := newOrderNo(t)
	rB, _ := threeDSOrder(t, creds, noB)
	replayed := forgedThreeDS(resultA.Get("authentication_id"), resultA.Get("status"), resultA.Get("cavv"), rB.TransactionID)
	answered := postAsync(t, replayed)
	waitLog(t, `"msg":"3-D Secure callback not awaited"`, resultA.Get("authentication_id"))
	if got := queriedStatus(t, creds, noB); got != "1000" {
		t.Fatalf("a replayed result moved order B to %s", got)
	}

	// A's result replayed on A, which is final, changes nothing.
	resp, _ = browse(t, http.MethodPost, env.api.URL+"/v1/3ds/callback", resultA)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("replay on A: HTTP %d", resp.StatusCode)
	}
	if got := queriedStatus(t, creds, noA); got != "3000" || chargesFor(rA.TransactionID) != 1 {
		t.Errorf("order A after a replay: %s, %d charges", got, chargesFor(rA.TransactionID))
	}

	// B's shopper fails the challenge: B ends as the ACS says.
	resp, _ = browse(t, http.MethodPost, env.api.URL+"/v1/3ds/callback", passChallenge(t, rB.IssuerURL, "000000"))
	if resp.StatusCode != http.StatusOK {
		t.Errorf("order B callback: HTTP %d", resp.StatusCode)
	}
	waitQueriedStatus(t, creds, noB, "6000")
	if o := findOrder(t, creds.AccountID, noB); o.ResultCode != "A0005" || o.ThreeDSResult != "challenge:failed" {
		t.Errorf("order B record: %s %q", o.ResultCode, o.ThreeDSResult)
	}
	if n := chargesFor(rB.TransactionID); n != 0 {
		t.Errorf("order B charges = %d, want 0", n)
	}
	select {
	case <-answered:
	case <-time.After(40 * time.Second):
		t.Error("the replayed callback was never answered")
	}
}

func TestCallbackBodiesAreBounded(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("a", 1<<20+1)
	tests := []struct {
		name, path, contentType, body string
	}{
		{"APM callback", "/v1/apm/callback", "application/json", `{"payment_id":"` + big + `"}`},
		{"3-D Secure callback", "/v1/3ds/callback", formType, "authentication_id=" + big},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _ := post(t, tc.path, tc.contentType, tc.body)
			if code != http.StatusRequestEntityTooLarge {
				t.Errorf("HTTP %d, want 413", code)
			}
		})
	}
}

// TestThreeDSCarriesTheBrowser follows the interface's Payment order: the
// shopper's browser and device fields (os, browser, browser_lang,
// time_zone, resolution, color_depth, user_agent, challenge_window_size,
// shopper_ip) reach the 3-D Secure authentication request the ACS weighs
// (issue 29), not only the record.
func TestThreeDSCarriesTheBrowser(t *testing.T) {
	t.Parallel()
	creds := env.auto
	f := cardOrder(creds, newOrderNo(t), "4000000000003220")
	f["open3d"] = "do3DS"
	for k, v := range map[string]string{"os": "iOS 18", "browser": "Safari", "browser_lang": "en-GB", "time_zone": "-60",
		"resolution": "1170x2532", "color_depth": "24", "user_agent": "Mozilla/5.0 (iPhone)", "challenge_window_size": "05"} {
		f[k] = v
	}
	_, r := authorise(t, signCard(f, creds.SignKey))
	if r.OrderStatus != "-1" {
		t.Fatalf("first answer: %s %s", r.OrderStatus, r.ResultInfo)
	}
	au, ok := env.sim.AuthenticationOf(r.TransactionID)
	want := simulator.Browser{Language: "en-GB", UserAgent: "Mozilla/5.0 (iPhone)", TimeZone: "-60", ScreenResolution: "1170x2532",
		ColorDepth: "24", ChallengeWindowSize: "05", IP: "203.0.113.7", OS: "iOS 18", Name: "Safari"}
	if !ok || au.Browser == nil || *au.Browser != want {
		t.Errorf("the ACS got %+v, want %+v", au.Browser, want)
	}
}

// TestCancelPendingOrders follows the interface's cancel as issue 29 reads
// it: "Cancel of an order still pending at the acquirer, as far as the
// connector allows". The merchant cancels an APM payment at the provider
// and a card payment at its 3-D Secure challenge; each ends 6000 A0009
// with nothing charged, and the shopper who comes back afterwards pays
// nothing.
func TestCancelPendingOrders(t *testing.T) {
	t.Parallel()
	apmCreds, cardCreds := apmAccount(t), env.auto
	tests := []struct {
		name  string
		creds merchant.Credentials
		start func(orderNo string) (txID, currency, amount string, shopperReturns func())
	}{
		{"PIX waiting at the provider", apmCreds, func(orderNo string) (string, string, string, func()) {
			a := authoriseAPM(t, signAPM(apmOrder(apmCreds, orderNo, "PIX", "BRL", "BR"), apmCreds.SignKey))
			if a.OrderStatus != "-1" {
				t.Fatalf("APM answer: %+v", a)
			}
			paymentID := a.IssuerURL[strings.LastIndex(a.IssuerURL, "/")+1:]
			return a.TransactionID, "BRL", "100.00", func() {
				browse(t, http.MethodPost, a.IssuerURL+"/pay", url.Values{})
				if p, _ := env.sim.APMPayment(paymentID); p.Status != "cancelled" {
					t.Errorf("the provider's payment after the shopper paid: %s, want cancelled", p.Status)
				}
			}
		}},
		{"card at its 3-D Secure challenge", cardCreds, func(orderNo string) (string, string, string, func()) {
			r, _ := threeDSOrder(t, cardCreds, orderNo)
			return r.TransactionID, "USD", "12.34", func() {
				browse(t, http.MethodPost, env.api.URL+"/v1/3ds/callback", passChallenge(t, r.IssuerURL, "123456"))
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			orderNo := newOrderNo(t)
			txID, currency, amount, shopperReturns := tc.start(orderNo)
			_, b := batch(t, tc.creds, "/v1/cancel", "cancel_orders", []batchEntry{
				{"transaction_id": txID, "order_no": orderNo, "currency": currency, "amount": amount}})
			if len(b.Entries) != 1 || b.Entries[0]["cancel_status"] != "1" {
				t.Fatalf("cancel answered %+v", b.Entries)
			}
			waitQueriedStatus(t, tc.creds, orderNo, "6000")
			if o := findOrder(t, tc.creds.AccountID, orderNo); o.ResultCode != "A0009" || o.CapturedAmount != 0 {
				t.Errorf("record: %s captured %d, want A0009 and nothing", o.ResultCode, o.CapturedAmount)
			}
			shopperReturns()
			if got := queriedStatus(t, tc.creds, orderNo); got != "6000" {
				t.Errorf("after the shopper came back: payment_status %s, want 6000", got)
			}
			for _, c := range env.sim.Charges() {
				if c.Reference == txID {
					t.Errorf("charged at the acquirer after the cancel: %+v", c)
				}
			}
		})
	}
}
