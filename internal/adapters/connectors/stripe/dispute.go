package stripe

import (
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
)

// Stripe's disputes map onto ours: its warning_* statuses are an inquiry
// (a retrieval request that has taken no money yet), the others a
// chargeback; needs_response and warning_needs_response wait for evidence,
// under_review and warning_under_review are being decided, won and lost
// are final, and warning_closed is an inquiry the issuer dropped. The
// dispute names our order through its PaymentIntent's metadata.

// disputeOf maps a Stripe dispute (its PaymentIntent expanded).
func disputeOf(d *stripego.Dispute) connector.Dispute {
	out := connector.Dispute{ID: d.ID, Amount: d.Amount, Currency: strings.ToUpper(string(d.Currency)),
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
	return out
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

// SubmitDisputeEvidence submits the merchant's evidence as the dispute's
// uncategorized text.
func (c *Client) SubmitDisputeEvidence(ctx context.Context, id, text string) (connector.Dispute, error) {
	what := "dispute evidence " + id
	if id == "" {
		return connector.Dispute{}, fmt.Errorf("%s: %w: empty id", what, connector.ErrRejected)
	}
	params := &stripego.DisputeUpdateParams{Evidence: &stripego.DisputeUpdateEvidenceParams{UncategorizedText: stripego.String(text)},
		Submit: stripego.Bool(true)}
	params.AddExpand("payment_intent")
	// The same evidence sent again (a retried activity) is one submission.
	sum := sha256.Sum256([]byte(text))
	params.SetIdempotencyKey("dispute-evidence:" + id + ":" + hex.EncodeToString(sum[:8]))
	d, err := c.api.V1Disputes.Update(ctx, id, params)
	if err != nil {
		return connector.Dispute{}, errorOf(ctx, what, err)
	}
	return disputeOf(d), nil
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
