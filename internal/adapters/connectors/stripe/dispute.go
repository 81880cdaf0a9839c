package stripe

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	stripego "github.com/stripe/stripe-go/v82"
	"github.com/stripe/stripe-go/v82/webhook"

	"github.com/paygate/paygate/internal/domain/connector"
	"github.com/paygate/paygate/internal/domain/dispute"
)

// Stripe's disputes map onto ours: its warning_* statuses are an inquiry
// (a retrieval request that has taken no money yet), the others a
// chargeback; needs_response and warning_needs_response wait for evidence,
// under_review and warning_under_review are being decided, won and lost
// are final, and warning_closed is an inquiry the issuer dropped. The
// dispute names our order through its PaymentIntent's metadata.

// disputeOf maps a Stripe dispute (its PaymentIntent expanded).
func disputeOf(d *stripego.Dispute) connector.Dispute {
	out := connector.Dispute{ID: d.ID, Amount: fromStripe(d.Amount, d.Currency), Currency: strings.ToUpper(string(d.Currency)),
		Reason: string(d.Reason), Stage: "chargeback"}
	if d.PaymentIntent != nil {
		out.ChargeID, out.Reference = d.PaymentIntent.ID, d.PaymentIntent.Metadata[metaReference]
	}
	status := string(d.Status)
	if rest, ok := strings.CutPrefix(status, "warning_"); ok {
		out.Stage, status = "inquiry", rest
	}
	out.Status = status
	if d.EvidenceDetails != nil && d.EvidenceDetails.DueBy > 0 {
		out.EvidenceDue = time.Unix(d.EvidenceDetails.DueBy, 0).UTC()
	}
	out.Fee, out.FeeKnown = disputeFee(d)
	return out
}

// disputeFee is Stripe's fee for a dispute, from the balance transactions
// that took its money back, in minor units of the dispute's currency: a
// fee in another currency (the Stripe account's) is converted at the rate
// of the transaction that carries it, the amount it took for the
// dispute's, rounded half up. A dispute that took no money (an inquiry)
// reports no fee.
func disputeFee(d *stripego.Dispute) (int64, bool) {
	var fee int64
	known := false
	for _, bt := range d.BalanceTransactions {
		if bt == nil || bt.Amount >= 0 {
			continue
		}
		known = true
		scale := scaleOf(d.Currency)
		if strings.EqualFold(string(bt.Currency), string(d.Currency)) {
			fee += roundDiv(bt.Fee, scale)
			continue
		}
		// fee × dispute amount / |amount taken|, in our units, rounded
		// once, half away from zero.
		taken := -bt.Amount
		fee += roundDiv(bt.Fee*d.Amount, taken*scale)
	}
	return fee, known
}

// GetDispute reads a dispute, its PaymentIntent expanded for our reference.
func (c *Client) GetDispute(ctx context.Context, id string) (connector.Dispute, error) {
	what := "get dispute " + id
	if id == "" {
		return connector.Dispute{}, fmt.Errorf("%s: %w: empty id", what, connector.ErrRejected)
	}
	params := &stripego.DisputeRetrieveParams{}
	params.AddExpand("payment_intent")
	d, err := c.api.V1Disputes.Retrieve(ctx, id, params)
	if err != nil {
		return connector.Dispute{}, errorOf(ctx, what, err)
	}
	return disputeOf(d), nil
}

// SubmitDisputeEvidence submits the merchant's evidence: the texts as the
// dispute's uncategorized text, and each file uploaded to Stripe (purpose
// dispute_evidence) and named in the evidence field of its kind.
func (c *Client) SubmitDisputeEvidence(ctx context.Context, id string, ev connector.Evidence) (connector.Dispute, error) {
	what := "dispute evidence " + id
	if id == "" {
		return connector.Dispute{}, fmt.Errorf("%s: %w: empty id", what, connector.ErrRejected)
	}
	evidence := &stripego.DisputeUpdateEvidenceParams{UncategorizedText: stripego.String(ev.Text)}
	// The update's key covers the text and every file, so the same answer
	// sent again (a retried activity) is one submission.
	answer := sha256.New()
	answer.Write([]byte(ev.Text))
	for _, f := range ev.Files {
		field := evidenceField(evidence, f.Kind)
		if field == nil {
			return connector.Dispute{}, fmt.Errorf("%s: %w: no evidence field for a file of kind %q", what, connector.ErrRejected, f.Kind)
		}
		sum := sha256.Sum256(append([]byte(f.Kind+"\x00"+f.Name+"\x00"), f.Content...))
		params := &stripego.FileCreateParams{Purpose: stripego.String(string(stripego.FilePurposeDisputeEvidence)),
			FileReader: bytes.NewReader(f.Content), Filename: stripego.String(f.Name)}
		params.SetIdempotencyKey("dispute-file:" + id + ":" + hex.EncodeToString(sum[:12]))
		file, err := c.api.V1Files.Create(ctx, params)
		if err != nil {
			return connector.Dispute{}, errorOf(ctx, what+" file "+f.Kind, err)
		}
		*field = stripego.String(file.ID)
		answer.Write([]byte("\x00" + f.Kind + "\x00" + file.ID))
	}
	params := &stripego.DisputeUpdateParams{Evidence: evidence, Submit: stripego.Bool(true)}
	params.AddExpand("payment_intent")
	params.SetIdempotencyKey("dispute-evidence:" + id + ":" + hex.EncodeToString(answer.Sum(nil)[:8]))
	d, err := c.api.V1Disputes.Update(ctx, id, params)
	if err != nil {
		return connector.Dispute{}, errorOf(ctx, what, err)
	}
	return disputeOf(d), nil
}

// evidenceField is the field of Stripe's evidence that takes a file of
// kind (dispute.FileKinds), nil for a kind it has none for.
func evidenceField(e *stripego.DisputeUpdateEvidenceParams, kind string) **string {
	return map[string]**string{
		dispute.FileReceipt: &e.Receipt, dispute.FileCustomerCommunication: &e.CustomerCommunication,
		dispute.FileCustomerSignature: &e.CustomerSignature, dispute.FileShippingDocumentation: &e.ShippingDocumentation,
		dispute.FileServiceDocumentation: &e.ServiceDocumentation, dispute.FileRefundPolicy: &e.RefundPolicy,
		dispute.FileCancellationPolicy: &e.CancellationPolicy, dispute.FileDuplicateChargeDocumentation: &e.DuplicateChargeDocumentation,
		dispute.FileOther: &e.UncategorizedFile,
	}[kind]
}

// AcceptDispute closes the dispute: the merchant accepts it.
func (c *Client) AcceptDispute(ctx context.Context, id string) (connector.Dispute, error) {
	what := "accept dispute " + id
	if id == "" {
		return connector.Dispute{}, fmt.Errorf("%s: %w: empty id", what, connector.ErrRejected)
	}
	params := &stripego.DisputeCloseParams{}
	params.AddExpand("payment_intent")
	params.SetIdempotencyKey("dispute-accept:" + id)
	d, err := c.api.V1Disputes.Close(ctx, id, params)
	if err != nil {
		return connector.Dispute{}, errorOf(ctx, what, err)
	}
	return disputeOf(d), nil
}

// ReadDisputeWebhook reads a charge.dispute.* event Stripe posts to the
// webhook endpoint, checked as ReadWebhook checks events: it names the
// dispute only (Reference is empty: the dispute's own inquiry finds the
// order), and connector.ErrCallbackIrrelevant is every other event.
func (c *Client) ReadDisputeWebhook(body []byte, header http.Header) (connector.DisputeCallback, error) {
	if c.webhookSecret == "" {
		return connector.DisputeCallback{}, connector.ErrCallbackUnsigned
	}
	ev, err := webhook.ConstructEventWithOptions(body, header.Get("Stripe-Signature"), c.webhookSecret,
		webhook.ConstructEventOptions{IgnoreAPIVersionMismatch: true})
	if err != nil {
		return connector.DisputeCallback{}, connector.ErrCallbackUnsigned
	}
	if !strings.HasPrefix(string(ev.Type), "charge.dispute.") || ev.Data == nil {
		return connector.DisputeCallback{}, connector.ErrCallbackIrrelevant
	}
	var d struct {
		ID     string `json:"id"`
		Object string `json:"object"`
	}
	if err := json.Unmarshal(ev.Data.Raw, &d); err != nil || d.ID == "" || d.Object != "dispute" {
		return connector.DisputeCallback{}, connector.ErrCallbackMalformed
	}
	return connector.DisputeCallback{DisputeID: d.ID}, nil
}
