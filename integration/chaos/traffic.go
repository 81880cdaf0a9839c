package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/domain/signing"
)

// The cards of the traffic, in turn: most are approved; the others are the
// simulator's retryable, timeout, slow, declined and disputed cards.
var trafficCards = append(slices.Clone(undisputedCards), "4000000000000259")

// undisputedCards are the traffic's cards without the dispute card, for
// plans about something else (scaling out), whose open disputes would only
// keep the stack busy.
var undisputedCards = []string{
	"4242424242424242", "5555555555554444", "4242424242424242", "4000000000000119",
	"4242424242424242", "4000000000000341", "4000000000000267", "4242424242424242",
	"4000000000000002", "5555555555554444",
}

// Payment is one direct card payment the traffic sent and what it was told.
type Payment struct {
	OrderNo string
	Manual  bool
	// Routed: the payment went to the account routed over both acquirers.
	Routed   bool
	Card     string
	Amount   int64
	Attempts int
	// Status is the answer's order_status; "" when no answer came.
	Status        string
	ResultInfo    string
	TransactionID string
}

// Operation is a capture or refund the traffic sent and what it was told.
type Operation struct {
	Kind          string // "capture" or "refund"
	TransactionID string
	OrderNo       string
	Amount        int64
	OrderAmount   int64
	Answered      bool
	Success       bool
	Info          string
}

// PayoutReq is one payout the traffic sent and what it was told.
type PayoutReq struct {
	RequestID string
	Amount    int64
	IBAN      string
	Attempts  int
	// Status is the answer's status ("" when none came).
	Status string
}

// The rail simulator's test beneficiaries: paid, and always refused.
const (
	ibanCompletes   = "DE89370400440532013000"
	ibanAlwaysFails = "DE32370400449900000001"
)

// Traffic sends signed requests at a steady rate and records every answer.
type Traffic struct {
	s     *Stack
	hc    *http.Client
	seq   atomic.Int64
	run   string
	cards []string
	// allRouted sends every payment to the routed account (Plan.AllRouted).
	allRouted bool

	mu         sync.Mutex
	payments   []*Payment
	operations []*Operation
	payouts    []*PayoutReq
}

// NewTraffic returns traffic for the stack.
func NewTraffic(s *Stack) *Traffic {
	return &Traffic{s: s, cards: trafficCards, run: strconv.FormatInt(time.Now().Unix()%100000, 36),
		hc: &http.Client{Timeout: 75 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
}

// Run starts a payment every 1/rate seconds for d, then waits for every
// payment and its follow-up operations to be answered or given up.
func (tr *Traffic) Run(ctx context.Context, rate float64, d time.Duration) {
	var wg sync.WaitGroup
	tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
	defer tick.Stop()
	end := time.After(d)
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-end:
			break loop
		case <-tick.C:
			i := int(tr.seq.Add(1))
			wg.Add(1)
			go func() {
				defer wg.Done()
				tr.scenario(ctx, i)
			}()
		}
	}
	wg.Wait()
}

// scenario pays an order and, for some, captures or refunds it; every
// fifth also sends a payout.
func (tr *Traffic) scenario(ctx context.Context, i int) {
	if i%5 == 2 {
		iban := ibanCompletes
		if i%50 == 7 {
			iban = ibanAlwaysFails
		}
		tr.payout(ctx, &PayoutReq{RequestID: requestID(tr.run, i), Amount: int64(1000 + i%20*100), IBAN: iban})
	}
	p := &Payment{
		OrderNo: fmt.Sprintf("CH-%s-%06d", tr.run, i), Manual: i%7 == 3, Routed: i%7 != 3 && i%4 == 1,
		Card: tr.cards[i%len(tr.cards)], Amount: int64(1000 + i%50*10),
	}
	if tr.allRouted {
		p.Manual, p.Routed = false, true
	}
	tr.mu.Lock()
	tr.payments = append(tr.payments, p)
	tr.mu.Unlock()
	creds := tr.s.Auto
	switch {
	case p.Manual:
		creds = tr.s.Manual
	case p.Routed:
		creds = tr.s.Routed
	}
	tr.authorise(ctx, creds, p)
	tr.mu.Lock()
	paid, txID := p.Status == "1", p.TransactionID
	tr.mu.Unlock()
	// A routed payment is paid only: its captures and refunds would go to
	// whichever acquirer charged it, which the refund checks do not read.
	if !paid || p.Routed {
		return
	}
	switch {
	case p.Manual:
		tr.batch(ctx, creds, &Operation{Kind: "capture", TransactionID: txID, OrderNo: p.OrderNo, Amount: p.Amount, OrderAmount: p.Amount})
	case i%3 == 0:
		tr.batch(ctx, creds, &Operation{Kind: "refund", TransactionID: txID, OrderNo: p.OrderNo, Amount: 100, OrderAmount: p.Amount})
	}
}

// authorise sends the payment until it gets an answer that is not a
// temporary error, as a merchant would: the same order_no each time, for
// up to three minutes.
func (tr *Traffic) authorise(ctx context.Context, creds merchant.Credentials, p *Payment) {
	f := url.Values{}
	vals := [][2]string{
		{"merchant_id", creds.MerchantID}, {"account_id", creds.AccountID}, {"order_no", p.OrderNo},
		{"currency", "USD"}, {"amount", money(p.Amount)}, {"first_name", "Ada"}, {"last_name", "Lovelace"},
		{"card", p.Card}, {"expiration_year", "2031"}, {"expiration_month", "12"}, {"security_code", "739"},
		{"shopper_email", "chaos@example.com"},
	}
	signed := make([]string, len(vals))
	for j, kv := range vals {
		f.Set(kv[0], kv[1])
		signed[j] = kv[1]
	}
	f.Set("encryption_data", signing.Sign(creds.SignKey, signed...))
	f.Set("notify_url", tr.s.NotifyURL())
	f.Set("shopper_ip", "203.0.113.9")
	body := f.Encode()
	tr.sendUntilAnswered(ctx, "/v1/authorise", "application/x-www-form-urlencoded", body, &p.Attempts, func(b []byte) bool {
		var r struct {
			OrderStatus   string `xml:"order_status"`
			ResultInfo    string `xml:"result_info"`
			TransactionID string `xml:"transaction_id"`
		}
		if xml.Unmarshal(b, &r) != nil || strings.HasPrefix(r.ResultInfo, "S0001") {
			return false
		}
		p.Status, p.ResultInfo, p.TransactionID = r.OrderStatus, r.ResultInfo, r.TransactionID
		return true
	})
}

// sendUntilAnswered posts body to path, again every second for up to three
// minutes, until an HTTP 200 answer that answered takes (it records it,
// with tr.mu held); attempts counts the sends.
func (tr *Traffic) sendUntilAnswered(ctx context.Context, path, contentType, body string, attempts *int, answered func([]byte) bool) {
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		tr.mu.Lock()
		*attempts++
		tr.mu.Unlock()
		status, b, err := tr.post(ctx, path, contentType, body)
		if err == nil && status == http.StatusOK {
			tr.mu.Lock()
			ok := answered(b)
			tr.mu.Unlock()
			if ok {
				return
			}
		}
		pause(ctx, time.Second)
	}
}

// payout sends a payout until it is answered, as a merchant would: the
// same request_id each time, which the gateway pays once.
func (tr *Traffic) payout(ctx context.Context, po *PayoutReq) {
	tr.mu.Lock()
	tr.payouts = append(tr.payouts, po)
	tr.mu.Unlock()
	c := tr.s.Payer
	amount := money(po.Amount)
	body, _ := json.Marshal(map[string]any{
		"merchant_id": c.MerchantID, "account_id": c.AccountID, "request_id": po.RequestID,
		"payment_currency": "USD", "payment_amount": amount,
		"payment_method": "SWIFT", "fee_paid_by": "PAYER", "swift_charge_option": "SHARED", "fund_source": "DepositAccount",
		"beneficiary": map[string]any{
			"entity_type": "COMPANY", "company_name": "Muller GmbH",
			"address": map[string]any{"city": "Berlin", "country_code": "DE"},
			"bank_details": map[string]any{"account_name": "Muller GmbH", "bank_country_code": "DE",
				"iban": po.IBAN, "swift_code": "COBADEFFXXX", "account_currency": "USD"},
		},
		"payer":           map[string]any{"entity_type": "COMPANY", "company_name": "Demo Ltd", "address": map[string]any{"country_code": "US"}},
		"reference":       "chaos",
		"notify_url":      tr.s.NotifyURL(),
		"encryption_data": signing.Sign(c.SignKey, c.MerchantID, c.AccountID, po.RequestID, "USD", amount),
	})
	tr.sendUntilAnswered(ctx, "/v1/payout", "application/json", string(body), &po.Attempts, func(b []byte) bool {
		var r struct {
			Status string `json:"status"`
		}
		if json.Unmarshal(b, &r) != nil || r.Status == "" {
			return false
		}
		po.Status = r.Status
		return true
	})
}

// requestID is a UUID made of the run and the payout's number.
func requestID(run string, i int) string {
	h := fmt.Sprintf("%012x%020x", []byte(run + "      ")[:6], i)
	return h[:8] + "-" + h[8:12] + "-4" + h[13:16] + "-8" + h[17:20] + "-" + h[20:32]
}

// Payouts copies what the traffic's payouts were told.
func (tr *Traffic) Payouts() []PayoutReq {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	out := make([]PayoutReq, len(tr.payouts))
	for i, p := range tr.payouts {
		out[i] = *p
	}
	return out
}

// batch sends one capture or refund entry once: neither carries an
// idempotency key, so a lost answer is not retried blindly; the checks
// compare the record with the acquirer instead.
func (tr *Traffic) batch(ctx context.Context, creds merchant.Credentials, op *Operation) {
	tr.mu.Lock()
	tr.operations = append(tr.operations, op)
	tr.mu.Unlock()
	path, array, statusField := "/v1/capture", "capture_orders", "capture_status"
	entry := map[string]string{"transaction_id": op.TransactionID, "order_no": op.OrderNo, "currency": "USD", "amount": money(op.Amount)}
	if op.Kind == "refund" {
		path, array, statusField = "/v1/refund", "refund_orders", "refund_status"
		entry["amount"] = money(op.OrderAmount)
		entry["refund_amount"] = money(op.Amount)
	}
	body, _ := json.Marshal(map[string]any{
		"merchant_id": creds.MerchantID, "account_id": creds.AccountID,
		"encryption_data": signing.Sign(creds.SignKey, creds.MerchantID, creds.AccountID, op.TransactionID),
		array:             []map[string]string{entry},
	})
	status, b, err := tr.post(ctx, path, "application/json", string(body))
	if err != nil || status != http.StatusOK {
		return
	}
	var r map[string]json.RawMessage
	var entries []map[string]any
	if json.Unmarshal(b, &r) != nil || json.Unmarshal(r[array], &entries) != nil || len(entries) != 1 {
		return
	}
	tr.mu.Lock()
	op.Answered = true
	op.Success = fmt.Sprint(entries[0][statusField]) == "1"
	op.Info = fmt.Sprint(entries[0]["result_info"])
	tr.mu.Unlock()
}

func (tr *Traffic) post(ctx context.Context, path, contentType, body string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, tr.s.APIURL()+path, bytes.NewReader([]byte(body)))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := tr.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// Payments and Operations copy what the traffic sent and was told.
func (tr *Traffic) Payments() []Payment {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	out := make([]Payment, len(tr.payments))
	for i, p := range tr.payments {
		out[i] = *p
	}
	return out
}

func (tr *Traffic) Operations() []Operation {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	out := make([]Operation, len(tr.operations))
	for i, o := range tr.operations {
		out[i] = *o
	}
	return out
}

// money renders minor units as the interface's decimal amount.
func money(minor int64) string { return fmt.Sprintf("%d.%02d", minor/100, minor%100) }
