package stripe

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/dispute"
	"github.com/paygate/paygate/internal/domain/refund"
)

// stripeMock runs Stripe's own mock server (make test installs it and
// names it in PAYGATE_STRIPE_MOCK) on a Unix socket of the test's, so no
// port is picked. It checks every request against Stripe's published API:
// a parameter Stripe does not know, or a value of the wrong type, is a 400.
// It keeps no state and never declines, so it proves the wire only.
func stripeMock(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("PAYGATE_STRIPE_MOCK")
	if bin == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("PAYGATE_STRIPE_MOCK is not set: make test installs stripe-mock and sets it")
		}
		t.Skip("stripe-mock not installed: run make test (it installs it and sets PAYGATE_STRIPE_MOCK)")
	}
	sock := filepath.Join(t.TempDir(), "stripe.sock")
	cmd := exec.Command(bin, "-http-unix", sock)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatalf("start stripe-mock: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	// It says when it listens; what it prints after (every request) is
	// drained so that it never blocks on a full pipe.
	ready := make(chan bool, 1)
	go func() {
		lines := bufio.NewScanner(out)
		for lines.Scan() {
			if strings.Contains(lines.Text(), "Listening for HTTP on Unix socket") {
				ready <- true
				break
			}
		}
		close(ready)
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatal("stripe-mock ended before it listened")
		}
	case <-time.After(60 * time.Second):
		t.Fatal("stripe-mock did not listen within 60 s")
	}
	return sock
}

// sent is one request as the connector sent it.
type sent struct {
	method, path, key string
	form              url.Values
	body              []byte
}

// recorder keeps every request on its way to the socket.
type recorder struct {
	mu   sync.Mutex
	sent []sent
	next http.RoundTripper
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	form, _ := url.ParseQuery(string(body))
	if req.Method == http.MethodGet {
		form = req.URL.Query()
	}
	r.mu.Lock()
	r.sent = append(r.sent, sent{req.Method, req.URL.Path, req.Header.Get("Idempotency-Key"), form, body})
	r.mu.Unlock()
	return r.next.RoundTrip(req)
}

func (r *recorder) take() []sent {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.sent
	r.sent = nil
	return out
}

// mockClient is a client of a stripe-mock of its own, every request it
// sends kept by the recorder on its way.
func mockClient(t *testing.T) (*Client, *recorder) {
	t.Helper()
	sock := stripeMock(t)
	rec := &recorder{next: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
	c, err := New(Config{SecretKey: "sk_test_paygate", BaseURL: "http://stripe-mock", Transport: rec, CallbackSecret: "s"})
	if err != nil {
		t.Fatal(err)
	}
	return c, rec
}

// TestAgainstStripeMock sends every call of the connector to stripe-mock:
// each is a request Stripe's API takes (no 400), on the path and with the
// Idempotency-Key and fields we mean.
func TestAgainstStripeMock(t *testing.T) {
	c, rec := mockClient(t)
	ctx := t.Context()
	visa := connector.Card{Number: "4242424242424242", ExpiryMonth: "12", ExpiryYear: "2035", CVV: "123"}
	type want struct {
		method, path, key string
		fields            map[string]string
	}
	tests := []struct {
		name string
		call func() error
		want []want
	}{
		{"the merchant's own 3-D Secure, in installments", func() error {
			_, err := c.Charge(ctx, connector.ChargeRequest{IdempotencyKey: "order/2/charge/1", Reference: "1379868670095785985",
				Card: visa, Amount: 60000, Currency: "MXN", Capture: true, Installments: 3,
				ThreeDS: &connector.ThreeDSData{External: true, ECI: "05", CAVV: "AAABBEg0VhI0VniQEjRWAAAAAAA=",
					DSTransID: "f25084f0-5b16-4c0a-ae5d-b24808a95e4b"}})
			return err
		}, []want{
			{"POST", "/v1/payment_methods", "order/2/charge/1/pm", nil},
			{"POST", "/v1/payment_intents", "order/2/charge/1", map[string]string{
				"payment_method_options[card][three_d_secure][cryptogram]":                    "AAABBEg0VhI0VniQEjRWAAAAAAA=",
				"payment_method_options[card][three_d_secure][electronic_commerce_indicator]": "05",
				"payment_method_options[card][three_d_secure][transaction_id]":                "f25084f0-5b16-4c0a-ae5d-b24808a95e4b",
				"payment_method_options[card][three_d_secure][version]":                       "2.2.0",
				"payment_method_options[card][installments][enabled]":                         "true",
				"payment_method_options[card][installments][plan][count]":                     "3",
				"payment_method_options[card][installments][plan][interval]":                  "month",
				"payment_method_options[card][installments][plan][type]":                      "fixed_count",
			}},
		}},
		{"authorise", func() error {
			_, err := c.Charge(ctx, connector.ChargeRequest{IdempotencyKey: "order/1/charge/1", Reference: "1379868670095785984",
				Card: visa, Amount: 1234, Currency: "USD"})
			return err
		}, []want{
			{"POST", "/v1/payment_methods", "order/1/charge/1/pm", map[string]string{"type": "card", "card[number]": visa.Number,
				"card[exp_month]": "12", "card[exp_year]": "2035", "card[cvc]": "123"}},
			{"POST", "/v1/payment_intents", "order/1/charge/1", map[string]string{"amount": "1234", "currency": "usd",
				"capture_method": "manual", "confirm": "true", "metadata[paygate_key]": "order/1/charge/1",
				"metadata[paygate_reference]": "1379868670095785984", "error_on_requires_action": "true"}},
		}},
		{"sale of a stored card", func() error {
			stored := visa
			stored.CVV = ""
			_, err := c.Charge(ctx, connector.ChargeRequest{IdempotencyKey: "sub/1/charge/2", Reference: "1379868670095785985",
				Card: stored, Amount: 500, Currency: "EUR", Capture: true, StoredCredential: true})
			return err
		}, []want{
			{"POST", "/v1/payment_methods", "sub/1/charge/2/pm", map[string]string{"card[cvc]": ""}},
			{"POST", "/v1/payment_intents", "sub/1/charge/2", map[string]string{"currency": "eur", "capture_method": "automatic"}},
		}},
		{"inquiry", func() error {
			_, err := c.Inquire(ctx, "order/1/charge/1")
			return err
		}, []want{{"GET", "/v1/payment_intents/search", "", map[string]string{"query": "metadata['paygate_key']:'order/1/charge/1'"}}}},
		// An order number may hold a quote or a backslash: each is escaped
		// in the search's string, which refused the key before.
		{"inquiry of a key with a quote and a backslash", func() error {
			_, err := c.Inquire(ctx, `order:M:A:O'Neil\7:authorise`)
			return err
		}, []want{{"GET", "/v1/payment_intents/search", "", map[string]string{"query": `metadata['paygate_key']:'order:M:A:O\'Neil\\7:authorise'`}}}},
		{"a charge read by its id", func() error {
			_, err := c.LookCharge(ctx, "pi_1")
			return err
		}, []want{{"GET", "/v1/payment_intents/pi_1", "", nil}}},
		{"partial capture", func() error {
			_, err := c.Capture(ctx, connector.CaptureRequest{ChargeID: "pi_1", IdempotencyKey: "order/1/capture/1", Amount: 1000, Currency: "USD"})
			return err
		}, []want{{"POST", "/v1/payment_intents/pi_1/capture", "order/1/capture/1", map[string]string{"amount_to_capture": "1000"}}}},
		{"void", func() error {
			_, err := c.Void(ctx, connector.VoidRequest{ChargeID: "pi_1", IdempotencyKey: "order/1/void"})
			return err
		}, []want{{"POST", "/v1/payment_intents/pi_1/cancel", "order/1/void", nil}}},
		{"refund", func() error {
			r, err := c.Refund(ctx, connector.RefundRequest{ChargeID: "pi_1", IdempotencyKey: "order/1/refund/1", Amount: 300, Currency: "USD"})
			if err == nil && r.Status != refund.Succeeded {
				t.Errorf("refund status %s, want the mock's succeeded", r.Status)
			}
			return err
		}, []want{{"POST", "/v1/refunds", "order/1/refund/1", map[string]string{"payment_intent": "pi_1", "amount": "300"}}}},
		{"3-D Secure", func() error {
			_, err := c.Authenticate(ctx, connector.AuthenticationRequest{IdempotencyKey: "order/1/3ds", Reference: "1379868670095785984",
				Card: connector.Card{Number: visa.Number, ExpiryMonth: "12", ExpiryYear: "2035"}, Amount: 1234, Currency: "USD",
				ReturnURL: "https://pay.example/v1/3ds/callback"})
			return err
		}, []want{
			{"POST", "/v1/payment_methods", "order/1/3ds/pm", map[string]string{"card[cvc]": ""}},
			{"POST", "/v1/payment_intents", "order/1/3ds", map[string]string{"capture_method": "manual", "confirm": "true",
				"payment_method_options[card][request_three_d_secure]": "any",
				"return_url": "https://pay.example/v1/3ds/callback?connector=stripe&reference=1379868670095785984&signature=" + c.sign("1379868670095785984")}},
		}},
		{"3-D Secure called off", func() error {
			return c.CancelAuthentication(ctx, "pi_1")
		}, []want{{"POST", "/v1/payment_intents/pi_1/cancel", "cancel-authentication:pi_1", nil}}},
		{"a dispute", func() error {
			_, err := c.GetDispute(ctx, "dp_1")
			return err
		}, []want{{"GET", "/v1/disputes/dp_1", "", nil}}},
		{"a dispute's evidence", func() error {
			_, err := c.SubmitDisputeEvidence(ctx, "dp_1", connector.Evidence{Text: "tracking: delivered"})
			return err
		}, []want{{"POST", "/v1/disputes/dp_1", "dispute-evidence:dp_1:" + evidenceDigest("tracking: delivered"), map[string]string{"evidence[uncategorized_text]": "tracking: delivered",
			"submit": "true"}}}},
		{"a dispute accepted", func() error {
			_, err := c.AcceptDispute(ctx, "dp_1")
			return err
		}, []want{{"POST", "/v1/disputes/dp_1/close", "dispute-accept:dp_1", nil}}},
		{"3-D Secure state", func() error {
			_, err := c.GetAuthentication(ctx, "pi_1")
			return err
		}, []want{{"GET", "/v1/payment_intents/pi_1", "", nil}}},
		{"refund state", func() error {
			_, err := c.GetRefund(ctx, "re_1")
			return err
		}, []want{{"GET", "/v1/refunds/re_1", "", nil}}},
		{"settlement report", func() error {
			_, err := c.Settlement(ctx, time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC))
			return err
		}, []want{{"GET", "/v1/balance_transactions", "", map[string]string{"created[gte]": "1795392000",
			"created[lt]": "1795478400", "expand[0]": "data.source", "limit": "100"}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.call(); err != nil {
				t.Fatalf("stripe-mock refused the call: %v", err)
			}
			got := rec.take()
			if len(got) != len(tc.want) {
				t.Fatalf("sent %d requests, want %d: %+v", len(got), len(tc.want), got)
			}
			for i, w := range tc.want {
				g := got[i]
				if g.method != w.method || g.path != w.path || g.key != w.key {
					t.Errorf("request %d: %s %s key %q, want %s %s key %q", i, g.method, g.path, g.key, w.method, w.path, w.key)
				}
				for name, value := range w.fields {
					if g.form.Get(name) != value {
						t.Errorf("request %d: %s = %q, want %q", i, name, g.form.Get(name), value)
					}
				}
			}
		})
	}
}

// TestEvidenceFilesAgainstStripeMock: each file of an answer is uploaded,
// with its bytes, as dispute evidence, and the dispute's update names the
// uploaded file in the field of its kind beside the texts; the update's key
// covers the files, so another file is another submission.
func TestEvidenceFilesAgainstStripeMock(t *testing.T) {
	c, rec := mockClient(t)
	receipt := []byte("%PDF-1.4 receipt of order 1379868670095785984")
	photo := []byte("\x89PNG\r\n\x1a\n the parcel at the door")
	ev := connector.Evidence{Text: "tracking: delivered", Files: []connector.EvidenceFile{
		{Kind: dispute.FileReceipt, Name: "Receipt.pdf", ContentType: "application/pdf", Content: receipt},
		{Kind: dispute.FileOther, Name: "door.png", ContentType: "image/png", Content: photo},
	}}
	if _, err := c.SubmitDisputeEvidence(t.Context(), "dp_1", ev); err != nil {
		t.Fatalf("stripe-mock refused the answer: %v", err)
	}
	got := rec.take()
	if len(got) != 3 {
		t.Fatalf("sent %d requests, want two uploads and the update: %+v", len(got), got)
	}
	fileKey := func(kind, name string, content []byte) string {
		sum := sha256.Sum256(append([]byte(kind+"\x00"+name+"\x00"), content...))
		return "dispute-file:dp_1:" + hex.EncodeToString(sum[:12])
	}
	for i, f := range []struct {
		key     string
		name    string
		content []byte
	}{{fileKey(dispute.FileReceipt, "Receipt.pdf", receipt), "Receipt.pdf", receipt}, {fileKey(dispute.FileOther, "door.png", photo), "door.png", photo}} {
		g := got[i]
		if g.method != "POST" || g.path != "/v1/files" || g.key != f.key {
			t.Errorf("upload %d: %s %s key %q, want POST /v1/files key %q", i, g.method, g.path, g.key, f.key)
		}
		for _, part := range [][]byte{[]byte("dispute_evidence"), []byte(`filename="` + f.name + `"`), f.content} {
			if !bytes.Contains(g.body, part) {
				t.Errorf("upload %d does not carry %q", i, part)
			}
		}
	}
	update := got[2]
	fileID := update.form.Get("evidence[receipt]")
	if update.path != "/v1/disputes/dp_1" || !strings.HasPrefix(fileID, "file_") || update.form.Get("evidence[uncategorized_file]") == "" ||
		update.form.Get("evidence[uncategorized_text]") != "tracking: delivered" || update.form.Get("submit") != "true" {
		t.Errorf("update %s %v, want the receipt, the other file and the text", update.path, update.form)
	}
	if update.key == "dispute-evidence:dp_1:"+evidenceDigest("tracking: delivered") || !strings.HasPrefix(update.key, "dispute-evidence:dp_1:") {
		t.Errorf("update key %q: the files must count in it", update.key)
	}
}
