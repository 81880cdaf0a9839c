package stripe

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"testing"
	"time"

	stripego "github.com/stripe/stripe-go/v82"
	"github.com/stripe/stripe-go/v82/webhook"

	"github.com/paygate/paygate/internal/domain/connector"
)

// TestDisputeOf follows issue 30: "The Stripe connector maps Stripe's
// dispute events and objects the same way". Stripe's warning_* statuses
// are an inquiry; the others a chargeback; our reference comes from the
// PaymentIntent's metadata.
func TestDisputeOf(t *testing.T) {
	pi := &stripego.PaymentIntent{ID: "pi_1", Metadata: map[string]string{metaReference: "1379868670095785984"}}
	due := time.Date(2027, 3, 8, 23, 59, 59, 0, time.UTC)
	tests := []struct {
		status       stripego.DisputeStatus
		stage, state string
	}{
		{stripego.DisputeStatusNeedsResponse, "chargeback", "needs_response"},
		{stripego.DisputeStatusUnderReview, "chargeback", "under_review"},
		{stripego.DisputeStatusWon, "chargeback", "won"},
		{stripego.DisputeStatusLost, "chargeback", "lost"},
		{stripego.DisputeStatusWarningNeedsResponse, "inquiry", "needs_response"},
		{stripego.DisputeStatusWarningUnderReview, "inquiry", "under_review"},
		{stripego.DisputeStatusWarningClosed, "inquiry", "closed"},
	}
	for _, tc := range tests {
		t.Run(string(tc.status), func(t *testing.T) {
			got := disputeOf(&stripego.Dispute{ID: "dp_1", Amount: 5000, Currency: "usd", Reason: "fraudulent", Status: tc.status,
				PaymentIntent: pi, EvidenceDetails: &stripego.DisputeEvidenceDetails{DueBy: due.Unix()}})
			want := connector.Dispute{ID: "dp_1", ChargeID: "pi_1", Reference: "1379868670095785984", Amount: 5000, Currency: "USD",
				Reason: "fraudulent", Stage: tc.stage, Status: tc.state, EvidenceDue: due}
			if got != want {
				t.Errorf("disputeOf = %+v, want %+v", got, want)
			}
		})
	}
}

// TestReadDisputeWebhook: a charge.dispute.* event, signed, names the
// dispute; any other event is not a dispute's.
func TestReadDisputeWebhook(t *testing.T) {
	const secret = "whsec_test_paygate"
	c, err := New(Config{SecretKey: "sk_test_x", WebhookSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	event := func(typ, object string) []byte {
		return []byte(`{"id":"evt_1","object":"event","type":"` + typ + `","api_version":"2024-06-20","data":{"object":` + object + `}}`)
	}
	signed := func(body []byte, key string) http.Header {
		sp := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: key, Timestamp: time.Now()})
		return http.Header{"Stripe-Signature": {sp.Header}}
	}
	dispute := `{"id":"dp_1","object":"dispute","status":"needs_response"}`
	tests := []struct {
		name string
		body []byte
		key  string
		want connector.DisputeCallback
		err  error
	}{
		{"a dispute opened", event("charge.dispute.created", dispute), secret, connector.DisputeCallback{DisputeID: "dp_1"}, nil},
		{"a dispute closed", event("charge.dispute.closed", dispute), secret, connector.DisputeCallback{DisputeID: "dp_1"}, nil},
		{"signed with another secret", event("charge.dispute.created", dispute), "whsec_other", connector.DisputeCallback{}, connector.ErrCallbackUnsigned},
		{"a PaymentIntent's event", event("payment_intent.succeeded", `{"id":"pi_1","object":"payment_intent"}`), secret,
			connector.DisputeCallback{}, connector.ErrCallbackIrrelevant},
		{"a dispute event without one", event("charge.dispute.updated", `{"object":"charge"}`), secret,
			connector.DisputeCallback{}, connector.ErrCallbackMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := c.ReadDisputeWebhook(tc.body, signed(tc.body, tc.key))
			if got != tc.want || !errors.Is(err, tc.err) {
				t.Errorf("ReadDisputeWebhook = %+v, %v; want %+v, %v", got, err, tc.want, tc.err)
			}
		})
	}
}

// evidenceDigest is the part of an evidence submission's idempotency key
// its text makes.
func evidenceDigest(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:8])
}

// hostsOf is a transport that records the host and path of each request and
// answers none of them.
type hostsOf struct{ seen []string }

func (h *hostsOf) RoundTrip(req *http.Request) (*http.Response, error) {
	h.seen = append(h.seen, req.URL.Host+req.URL.Path)
	return nil, errors.New("no network in this test")
}

// TestEvidenceFilesGoToStripesFileHost: Stripe takes uploads on
// files.stripe.com, not on the API's host; a client pointed at another
// address (stripe-mock) sends both there.
func TestEvidenceFilesGoToStripesFileHost(t *testing.T) {
	ev := connector.Evidence{Text: "delivered", Files: []connector.EvidenceFile{
		{Kind: "receipt", Name: "receipt.pdf", ContentType: "application/pdf", Content: []byte("%PDF-1.4")}}}
	tests := []struct{ name, baseURL, want string }{
		{"Stripe", "", "files.stripe.com/v1/files"},
		{"stripe-mock", "http://127.0.0.1:12111", "127.0.0.1:12111/v1/files"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := &hostsOf{}
			c, err := New(Config{SecretKey: "sk_test_paygate", BaseURL: tc.baseURL, Transport: h})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.SubmitDisputeEvidence(t.Context(), "dp_1", ev); err == nil {
				t.Fatal("an answer with no network went through")
			}
			if len(h.seen) != 1 || h.seen[0] != tc.want {
				t.Errorf("requests %v, want one to %s", h.seen, tc.want)
			}
		})
	}
}

// TestDisputeFee: Stripe's fee for a dispute is read from the balance
// transaction that took its money back, converted to the dispute's
// currency at that transaction's rate when the Stripe account settles in
// another; an inquiry, which took nothing, reports none.
func TestDisputeFee(t *testing.T) {
	withdrawal := func(currency string, amount, fee int64) *stripego.BalanceTransaction {
		return &stripego.BalanceTransaction{Amount: amount, Currency: stripego.Currency(currency), Fee: fee}
	}
	tests := []struct {
		name     string
		currency string
		amount   int64
		bts      []*stripego.BalanceTransaction
		want     int64
		known    bool
	}{
		{"an inquiry took nothing", "usd", 5000, nil, 0, false},
		{"a chargeback in the account's currency", "usd", 5000, []*stripego.BalanceTransaction{withdrawal("usd", -5000, 1500)}, 1500, true},
		{"a yen chargeback on a dollar account: 15.00 USD at 1,000 JPY for 6.70 USD", "jpy", 1000,
			[]*stripego.BalanceTransaction{withdrawal("usd", -670, 1500)}, 2239, true},
		{"a euro chargeback on a dollar account, half up", "eur", 1000, []*stripego.BalanceTransaction{withdrawal("usd", -1080, 1500)}, 1389, true},
		// Stripe's dispute of 5,000 ISK says 500000 (hundredths): the fee
		// comes back in whole krónur.
		{"a króna chargeback on a króna account", "isk", 500000, []*stripego.BalanceTransaction{withdrawal("isk", -500000, 200000)}, 2000, true},
		{"a króna chargeback on a dollar account: 15.00 USD at 5,000 ISK for 36.00 USD", "isk", 500000,
			[]*stripego.BalanceTransaction{withdrawal("usd", -3600, 1500)}, 2083, true},
		{"won: the reinstatement adds no fee", "usd", 5000,
			[]*stripego.BalanceTransaction{withdrawal("usd", -5000, 1500), withdrawal("usd", 5000, 0)}, 1500, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fee, known := disputeFee(&stripego.Dispute{Amount: tc.amount, Currency: stripego.Currency(tc.currency), BalanceTransactions: tc.bts})
			if fee != tc.want || known != tc.known {
				t.Errorf("disputeFee = %d, %v; want %d, %v", fee, known, tc.want, tc.known)
			}
		})
	}
}
