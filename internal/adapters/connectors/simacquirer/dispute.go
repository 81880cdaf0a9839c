package simacquirer

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/paygate/paygate/internal/domain/connector"
)

// simDispute is a dispute as the simulated acquirer answers it.
type simDispute struct {
	DisputeID   string    `json:"dispute_id"`
	ChargeID    string    `json:"charge_id"`
	Reference   string    `json:"reference"`
	Amount      int64     `json:"amount"`
	Currency    string    `json:"currency"`
	Reason      string    `json:"reason"`
	Stage       string    `json:"stage"`
	Status      string    `json:"status"`
	EvidenceDue time.Time `json:"evidence_due_by"`
	// Fee is the acquirer's chargeback fee, once it took the money back.
	Fee *int64 `json:"fee"`
}

func disputeOf(d simDispute) connector.Dispute {
	out := connector.Dispute{ID: d.DisputeID, ChargeID: d.ChargeID, Reference: d.Reference, Amount: d.Amount,
		Currency: d.Currency, Reason: d.Reason, Stage: d.Stage, Status: d.Status, EvidenceDue: d.EvidenceDue.UTC()}
	if d.Fee != nil {
		out.Fee, out.FeeKnown = *d.Fee, true
	}
	return out
}

// disputeCall runs one dispute request of the acquirer's API.
func (c *Connector) disputeCall(ctx context.Context, what, method, path string, in any) (connector.Dispute, error) {
	if c.client == nil {
		return connector.Dispute{}, fmt.Errorf("%s: %w: no client", what, ErrRejected)
	}
	var out simDispute
	if err := c.client.do(ctx, what, method, path, in, &out); err != nil {
		return connector.Dispute{}, err
	}
	return disputeOf(out), nil
}

// GetDispute asks the acquirer where a dispute stands.
func (c *Connector) GetDispute(ctx context.Context, id string) (connector.Dispute, error) {
	if id == "" {
		return connector.Dispute{}, fmt.Errorf("get dispute: %w: empty id", ErrRejected)
	}
	return c.disputeCall(ctx, "get dispute "+id, http.MethodGet, "/v1/disputes/"+url.PathEscape(id), nil)
}

// SubmitDisputeEvidence sends the merchant's evidence (its texts, and its
// files with their bytes) and returns the dispute as it then stands.
func (c *Connector) SubmitDisputeEvidence(ctx context.Context, id string, ev connector.Evidence) (connector.Dispute, error) {
	if id == "" {
		return connector.Dispute{}, fmt.Errorf("dispute evidence: %w: empty id", ErrRejected)
	}
	type file struct {
		Kind          string `json:"kind"`
		Name          string `json:"name"`
		ContentType   string `json:"content_type"`
		ContentBase64 string `json:"content_base64"`
	}
	files := make([]file, 0, len(ev.Files))
	for _, f := range ev.Files {
		files = append(files, file{Kind: f.Kind, Name: f.Name, ContentType: f.ContentType, ContentBase64: base64.StdEncoding.EncodeToString(f.Content)})
	}
	return c.disputeCall(ctx, "dispute evidence "+id, http.MethodPost, "/v1/disputes/"+url.PathEscape(id)+"/evidence",
		struct {
			Text  string `json:"text"`
			Files []file `json:"files"`
		}{ev.Text, files})
}

// AcceptDispute gives the dispute up at the acquirer.
func (c *Connector) AcceptDispute(ctx context.Context, id string) (connector.Dispute, error) {
	if id == "" {
		return connector.Dispute{}, fmt.Errorf("accept dispute: %w: empty id", ErrRejected)
	}
	return c.disputeCall(ctx, "accept dispute "+id, http.MethodPost, "/v1/disputes/"+url.PathEscape(id)+"/accept", struct{}{})
}

// ReadDisputeCallback reads the acquirer's dispute callback once body
// carries its signature (X-Provider-Signature). It proves only who sent it:
// the gateway asks the acquirer for the dispute.
func (c *Connector) ReadDisputeCallback(body []byte, header http.Header) (connector.DisputeCallback, error) {
	if c.secret == "" || !VerifyProviderSignature(c.secret, body, header.Get("X-Provider-Signature")) {
		return connector.DisputeCallback{}, connector.ErrCallbackUnsigned
	}
	var cb struct {
		DisputeID string `json:"dispute_id"`
		Reference string `json:"reference"`
	}
	if err := json.Unmarshal(body, &cb); err != nil || cb.DisputeID == "" || cb.Reference == "" {
		return connector.DisputeCallback{}, connector.ErrCallbackMalformed
	}
	return connector.DisputeCallback{DisputeID: cb.DisputeID, Reference: cb.Reference}, nil
}
