package integration

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/paygate/client"
	"github.com/paygate/paygate/internal/adapters/ledger"
	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/testmode"
	"github.com/paygate/paygate/models"
)

// clientAccount makes a test account for the Go client's tests, with its
// own ids, the signing scheme given, loopback allowed to query, and
// topUp minor units of USD to pay out.
func clientAccount(ctx context.Context, capture, scheme string, topUp int64) (client.Credentials, error) {
	id := "cl" + randomHex(4)
	creds, err := env.gw.Accounts.Create(ctx, merchant.NewAccount{Mode: testmode.Test, MerchantID: id, AccountID: id + "01",
		CaptureMode: capture, SigningScheme: scheme, AllowedQueryIPs: []string{"127.0.0.1"}, Currencies: []string{"USD", "EUR"},
		Risk: quietRisk})
	if err != nil {
		return client.Credentials{}, err
	}
	if topUp > 0 {
		if _, err := ledger.New(env.gw.DB).TopUp(ctx, ledger.TopUp{Reference: "topup/" + id, MerchantID: creds.MerchantID,
			AccountID: creds.AccountID, Currency: "USD", Amount: topUp}); err != nil {
			return client.Credentials{}, err
		}
	}
	return client.Credentials{MerchantID: creds.MerchantID, AccountID: creds.AccountID, SignKey: creds.SignKey}, nil
}

// inbox is a merchant's notify_url made with the client's handler: it
// keeps the notifications that passed verification, once per notify_id.
type inbox struct {
	mu    sync.Mutex
	seen  map[string]bool
	got   []*client.Notification
	added chan struct{}
}

func newInbox(t testing.TB, c *client.Client) (*inbox, string) {
	in := &inbox{seen: map[string]bool{}, added: make(chan struct{}, 100)}
	srv := httptest.NewServer(c.NotificationHandler(func(_ context.Context, n *client.Notification) error {
		in.mu.Lock()
		defer in.mu.Unlock()
		if !in.seen[n.NotifyID] {
			in.seen[n.NotifyID] = true
			in.got = append(in.got, n)
			in.added <- struct{}{}
		}
		return nil
	}, func(err error) { t.Errorf("a notification of the gateway was refused: %v", err) }))
	t.Cleanup(srv.Close)
	return in, srv.URL
}

// await waits for a notification of type typ about ref (an order number
// or a payout's request_id).
func (in *inbox) await(ctx context.Context, typ, ref string) (*client.Notification, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		in.mu.Lock()
		i := slices.IndexFunc(in.got, func(n *client.Notification) bool {
			return n.NotifyType == typ && (n.OrderNo == ref || n.RequestID == ref)
		})
		var n *client.Notification
		if i >= 0 {
			n = in.got[i]
		}
		in.mu.Unlock()
		if n != nil {
			return n, nil
		}
		select {
		case <-in.added:
		case <-ctx.Done():
			return nil, fmt.Errorf("no %s notification for %s: %w", typ, ref, ctx.Err())
		}
	}
}

// TestClientFlow drives a payment, its capture, a partial refund, the
// order query and a payout through the Go client, in each signing scheme,
// and takes the notifications through the client's verifying handler.
func TestClientFlow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		account string
		scheme  client.Scheme
		payout  string // the payout's amount as written: the answer's signature covers it as written
	}{
		{"strong signatures on a strong account", merchant.SigningStrong, client.Strong, "200.00"},
		{"encryption_data on a compatible account", merchant.SigningCompatible, client.Compatible, "200"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			creds, err := clientAccount(ctx, models.CaptureManual, tt.account, 100_000)
			if err != nil {
				t.Fatal(err)
			}
			c := client.New(env.api.URL, creds, client.WithScheme(tt.scheme))
			box, notifyURL := newInbox(t, c)
			orderNo := newOrderNo(t)

			paid, err := c.Authorise(ctx, client.Payment{Order: client.Order{OrderNo: orderNo, Currency: "USD", Amount: "25.00",
				FirstName: "Ada", LastName: "Lovelace", ShopperEmail: "ada@example.com", NotifyURL: notifyURL},
				Card: "4242424242424242", ExpirationMonth: "12", ExpirationYear: "2031", SecurityCode: "123"})
			if err != nil {
				t.Fatal(err)
			}
			if paid.OrderStatus != client.OrderSucceeded || paid.ResultInfo != "0000:Success" || paid.Amount != "25.00" ||
				paid.Card != "424242******4242" || paid.EncryptionData == "" {
				t.Fatalf("payment %+v", paid)
			}
			tx := paid.TransactionID

			captured, err := c.Capture(ctx, []client.CaptureEntry{{TransactionID: tx, OrderNo: orderNo, Currency: "USD", Amount: "25.00"}},
				client.WithIdempotencyKey("capture-"+tx))
			if err != nil {
				t.Fatal(err)
			}
			if len(captured.Orders) != 1 || captured.Orders[0].CaptureStatus != "1" || captured.Orders[0].ErrorMessage != "" {
				t.Fatalf("capture %+v", captured)
			}
			// The same call again (a retry after a lost answer) is the first answer, not a second capture.
			again, err := c.Capture(ctx, []client.CaptureEntry{{TransactionID: tx, OrderNo: orderNo, Currency: "USD", Amount: "25.00"}},
				client.WithIdempotencyKey("capture-"+tx))
			if err != nil || again.Orders[0].CaptureStatus != "1" {
				t.Fatalf("capture sent again: %+v, %v", again, err)
			}

			refunded, err := c.Refund(ctx, []client.RefundEntry{{TransactionID: tx, OrderNo: orderNo, Currency: "USD", Amount: "25.00",
				RefundAmount: "10.00", RefundReason: "one item back"}})
			if err != nil {
				t.Fatal(err)
			}
			if r := refunded.Orders; len(r) != 1 || r[0].RefundStatus != "1" || r[0].RefundReferenceID != tx+"-01" || r[0].RefundAmount != "10.00" {
				t.Fatalf("refund %+v", refunded)
			}

			var orders []client.QueriedOrder
			for o, err := range c.Orders(ctx, client.OrdersQuery{Trades: tx}) {
				if err != nil {
					t.Fatal(err)
				}
				orders = append(orders, o)
			}
			if len(orders) != 1 || orders[0].PaymentStatus != client.PaymentPartiallyRefunded || orders[0].OrderNo != orderNo {
				t.Fatalf("orders %+v", orders)
			}
			refunds, err := c.QueryRefunds(ctx, client.RefundsQuery{Trades: tx})
			if err != nil || len(refunds.Refunds) != 1 || refunds.Refunds[0].RefundAmount != "10.00" {
				t.Fatalf("refunds %+v, %v", refunds, err)
			}

			requestID := newRequestID()
			payout, err := c.Payout(ctx, client.Payout{RequestID: requestID, PaymentAmount: tt.payout, PaymentCurrency: "USD",
				PaymentMethod: "SWIFT", FeePaidBy: "PAYER", SwiftChargeOption: "SHARED", FundSource: "DepositAccount",
				Reference: "invoice 42", NotifyURL: notifyURL,
				Beneficiary: client.Beneficiary{EntityType: "COMPANY", CompanyName: "Muller GmbH",
					Address: &client.Address{City: "Berlin", CountryCode: "DE"},
					BankDetails: &client.BankDetails{AccountName: "Muller GmbH", BankCountryCode: "DE", IBAN: ibanCompletes,
						SwiftCode: "COBADEFFXXX", AccountCurrency: "USD"}},
				Payer: &client.Payer{EntityType: "COMPANY", CompanyName: "Demo Ltd", Address: &client.PayerAddress{CountryCode: "US"}}})
			if err != nil {
				t.Fatal(err)
			}
			if payout.RequestID != requestID || payout.PaymentAmount != tt.payout || payout.TransactionID == "" {
				t.Fatalf("payout %+v", payout)
			}

			// Every event arrives, verified by the client's handler.
			for _, want := range []struct{ typ, ref, check string }{
				{"payment", orderNo, "1"}, {"capture", orderNo, "1"}, {"refund", orderNo, "1"}, {"payout", requestID, client.PayoutCompleted},
			} {
				n, err := box.await(ctx, want.typ, want.ref)
				if err != nil {
					t.Fatal(err)
				}
				got := n.OrderStatus
				if want.typ == "refund" {
					got = n.RefundStatus
				}
				if want.typ == "payout" {
					got = n.Status
				}
				if got != want.check {
					t.Errorf("%s notification: %q, want %q (%v)", want.typ, got, want.check, n.Fields)
				}
			}
			done, err := c.PayoutQuery(ctx, requestID)
			if err != nil || done.Status != client.PayoutCompleted || done.FeeCurrency != "USD" {
				t.Fatalf("payout query %+v, %v", done, err)
			}
		})
	}
}

// TestClientRefusals: what the gateway refuses comes back as a
// *client.Error with the code, its help link, and no retry.
func TestClientRefusals(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	strongForMoney, err := clientAccount(ctx, models.CaptureManual, merchant.SigningStrongForMoney, 0)
	if err != nil {
		t.Fatal(err)
	}
	wrongKey := strongForMoney
	wrongKey.SignKey = "not-the-key"
	tests := []struct {
		name  string
		creds client.Credentials
		opts  []client.Option
		call  func(context.Context, *client.Client) error
		code  string
	}{
		{"a wrong key", wrongKey, nil, func(ctx context.Context, c *client.Client) error {
			_, err := c.QueryOrders(ctx, client.OrdersQuery{Orders: "x"})
			return err
		}, "I0013"},
		{"encryption_data where money moves on a strong-for-money account", strongForMoney,
			[]client.Option{client.WithScheme(client.Compatible)}, func(ctx context.Context, c *client.Client) error {
				_, err := c.Capture(ctx, []client.CaptureEntry{{TransactionID: "1234567890123456789"}})
				return err
			}, "I0013"},
		{"a card number that fails Luhn", strongForMoney, nil, func(ctx context.Context, c *client.Client) error {
			_, err := c.Authorise(ctx, client.Payment{Order: client.Order{OrderNo: "LUHN-" + randomHex(4), Currency: "USD",
				Amount: "1.00", FirstName: "A", LastName: "B", ShopperEmail: "a@example.com"},
				Card: "4242424242424241", ExpirationMonth: "12", ExpirationYear: "2031", SecurityCode: "123"})
			return err
		}, "I0005"},
		{"an unknown payout", strongForMoney, nil, func(ctx context.Context, c *client.Client) error {
			_, err := c.PayoutQuery(ctx, newRequestID())
			return err
		}, "I0023"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call(ctx, client.New(env.api.URL, tt.creds, tt.opts...))
			var perr *client.Error
			if !errors.As(err, &perr) || perr.Code != tt.code {
				t.Fatalf("error %v, want %s", err, tt.code)
			}
			if perr.Help == "" || perr.Temporary() {
				t.Errorf("refusal %+v: want a help link and not temporary", perr)
			}
		})
	}
}

// loseAnswers delivers each request but loses the first n answers, as a
// connection that drops after the gateway acted would.
type loseAnswers struct {
	n    atomic.Int32
	sent atomic.Int32
}

func (l *loseAnswers) RoundTrip(r *http.Request) (*http.Response, error) {
	l.sent.Add(1)
	res, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if l.n.Add(-1) >= 0 {
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return nil, errors.New("connection reset by peer (answer lost)")
	}
	return res, nil
}

// TestClientRetryAfterALostAnswer: when the answer of a payment or of a
// payout is lost, the client sends the request again under the same
// Idempotency-Key and gets the first answer: one charge, one transfer.
func TestClientRetryAfterALostAnswer(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	creds, err := clientAccount(ctx, models.CaptureAuto, merchant.SigningStrong, 100_000)
	if err != nil {
		t.Fatal(err)
	}
	lossy := &loseAnswers{}
	c := client.New(env.api.URL, creds, client.WithHTTPClient(&http.Client{Transport: lossy}),
		client.WithRetry(client.Retry{Attempts: 4, Backoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond}))

	lossy.n.Store(2)
	orderNo := newOrderNo(t)
	paid, err := c.Authorise(ctx, client.Payment{Order: client.Order{OrderNo: orderNo, Currency: "USD", Amount: "30.00",
		FirstName: "Ada", LastName: "Lovelace", ShopperEmail: "ada@example.com"},
		Card: "4242424242424242", ExpirationMonth: "12", ExpirationYear: "2031", SecurityCode: "123"})
	if err != nil {
		t.Fatal(err)
	}
	if paid.OrderStatus != client.OrderSucceeded || lossy.sent.Load() != 3 {
		t.Fatalf("payment %s after %d sends", paid.ResultInfo, lossy.sent.Load())
	}
	charges := 0
	for _, ch := range env.sim.Charges() {
		if ch.Reference == paid.TransactionID {
			charges++
		}
	}
	if charges != 1 {
		t.Errorf("%d charges at the acquirer, want 1", charges)
	}

	lossy.n.Store(1)
	lossy.sent.Store(0)
	requestID := newRequestID()
	payout, err := c.Payout(ctx, client.Payout{RequestID: requestID, PaymentAmount: "75.00", PaymentCurrency: "USD",
		PaymentMethod: "SWIFT", FeePaidBy: "PAYER", SwiftChargeOption: "SHARED", FundSource: "DepositAccount",
		Beneficiary: client.Beneficiary{EntityType: "COMPANY", CompanyName: "Muller GmbH",
			Address: &client.Address{City: "Berlin", CountryCode: "DE"},
			BankDetails: &client.BankDetails{AccountName: "Muller GmbH", BankCountryCode: "DE", IBAN: ibanCompletes,
				SwiftCode: "COBADEFFXXX", AccountCurrency: "USD"}},
		Payer: &client.Payer{EntityType: "COMPANY", CompanyName: "Demo Ltd", Address: &client.PayerAddress{CountryCode: "US"}}})
	if err != nil || lossy.sent.Load() != 2 {
		t.Fatalf("payout %+v, %v after %d sends", payout, err, lossy.sent.Load())
	}
	var paysMinor int64
	for {
		p, err := c.PayoutQuery(ctx, requestID)
		if err != nil {
			t.Fatal(err)
		}
		if p.Status == client.PayoutCompleted {
			pays, err := money.Parse(p.AmountPayerPays.String(), "USD")
			if err != nil {
				t.Fatal(err)
			}
			paysMinor = pays.Minor
			break
		}
		if p.Status == client.PayoutFailed {
			t.Fatalf("payout failed: %+v", p)
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(20 * time.Millisecond): // the rail settles on its own time; ask again
		}
	}
	if k, ok := railKey(t, merchant.Credentials{MerchantID: creds.MerchantID, AccountID: creds.AccountID}, requestID); !ok || k.Attempts != 1 || k.Completed != 1 {
		t.Errorf("rail saw %+v (found %v), want one transfer", k, ok)
	}
	if b := balance(t, merchant.Credentials{MerchantID: creds.MerchantID, AccountID: creds.AccountID}); b.Reserved != 0 ||
		paysMinor <= 7_500 || b.Available != 100_000-paysMinor {
		t.Errorf("balance %+v after paying %d once", b, paysMinor)
	}
}
