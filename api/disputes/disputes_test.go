package disputes

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/api/apidoc"
	"github.com/paygate/paygate/api/apitest"
	"github.com/paygate/paygate/api/flows"
	"github.com/paygate/paygate/internal/domain/signing"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

const (
	merchantID = apitest.MerchantID
	accountID  = apitest.AccountID
	signKey    = apitest.SignKey
	disputeID  = "sim-acquirer:dp_1"
)

// records holds one dispute of the test account and keeps the evidence.
type records struct {
	d        models.Dispute
	evidence []*models.DisputeEvidence
}

func (r *records) ListDisputes(context.Context, string, string, int) ([]models.Dispute, error) {
	return []models.Dispute{r.d}, nil
}

func (r *records) FindDispute(_ context.Context, m, a, id string) (*models.Dispute, error) {
	if m != merchantID || a != accountID || id != disputeID {
		return nil, models.ErrDisputeNotFound
	}
	d := r.d
	return &d, nil
}

func (r *records) AddDisputeEvidence(_ context.Context, e *models.DisputeEvidence) (bool, error) {
	for _, kept := range r.evidence {
		if kept.ID == e.ID {
			return false, nil
		}
	}
	r.evidence = append(r.evidence, e)
	return true, nil
}

func (r *records) RemoveDisputeEvidence(_ context.Context, _ string, ids []string) error {
	r.evidence = slices.DeleteFunc(r.evidence, func(e *models.DisputeEvidence) bool { return slices.Contains(ids, e.ID) })
	return nil
}

// answers is the dispute's workflow under test.
type answers struct {
	r       *records
	updates []string
	refuse  error
	moved   string // the dispute's status at the acquirer after a refusal, if it moved
}

func (a *answers) Answer(_ context.Context, _, _, update string) (workflows.DisputeState, error) {
	if a.refuse != nil {
		if a.moved != "" {
			a.r.d.Status = a.moved
		}
		return workflows.DisputeState{}, a.refuse
	}
	a.updates = append(a.updates, update)
	a.r.d.Status = "under_review"
	if update == workflows.UpdateAcceptDispute {
		a.r.d.Status = "accepted"
	}
	return workflows.DisputeState{}, nil
}

func served(r *records, a *answers) http.Handler {
	gate := apitest.Gate(apitest.Accounts{}, nil)
	gate.Capabilities = []api.Capability{New(gate, r, a)}
	return gate.Handler()
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TestDispute follows issue 30: "signed endpoints to list and fetch
// disputes, to submit evidence (text fields and files, size- and
// type-checked, stored encrypted, never in workflow history) and to
// accept a dispute". Each refusal has its exact code.
func TestDispute(t *testing.T) {
	due := time.Date(2027, 3, 8, 9, 0, 0, 0, time.UTC)
	open := models.Dispute{ID: disputeID, Connector: "sim-acquirer", ConnectorRef: "dp_1", MerchantID: merchantID,
		AccountID: accountID, TransactionID: "1379868670095785984", OrderNo: "ORD-1", Currency: "USD", Amount: 5000, Fee: 1500,
		Stage: "chargeback", Status: "needs_response", EvidenceDue: &due, Reason: "fraudulent"}
	reviewed := open
	reviewed.Status = "under_review"
	text := `[{"name":"receipt","text":"delivered on 2 March, signed for"}]`
	png := `[{"name":"proof.png","content_type":"image/png","content_base64":"` +
		base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n0000IHDR")) + `"}]`
	lie := `[{"name":"contract.pdf","content_type":"application/pdf","content_base64":"` +
		base64.StdEncoding.EncodeToString([]byte("plain words, no PDF")) + `"}]`
	// A written statement as merchants write them (paragraphs, 5,000 and
	// 20,000 characters) and a real-sized file: the body's text check
	// once refused every string over 2 KiB and every line break.
	statement := func(s string) string {
		b, _ := json.Marshal([]map[string]string{{"name": "statement", "text": s}})
		return string(b)
	}
	letter := statement("Shipped on 2 March by courier.\nSigned for by the shopper on 4 March.\n\tTracking: 1Z999.")
	long := statement(strings.Repeat("é", 5000))
	longest := statement(strings.Repeat("a", 20000))
	over := statement(strings.Repeat("a", 20001))
	pdf := `[{"name":"delivery.pdf","content_type":"application/pdf","content_base64":"` +
		base64.StdEncoding.EncodeToString(append([]byte("%PDF-1.4\n"), make([]byte, 100<<10)...)) + `"}]`
	biggest := `[{"name":"delivery.pdf","content_type":"application/pdf","content_base64":"` +
		base64.StdEncoding.EncodeToString(append([]byte("%PDF-1.4\n"), make([]byte, 512<<10-9)...)) + `"}]`
	pdfOf := func(name string) string {
		return `{"name":"` + name + `","content_type":"application/pdf","content_base64":"` +
			base64.StdEncoding.EncodeToString([]byte("%PDF-1.4\n"+name)) + `"}`
	}
	kinds := "[" + pdfOf("Receipt.pdf") + "," + pdfOf("shipping-documentation.pdf") + "," + pdfOf("photo.pdf") + "]"
	twoReceipts := "[" + pdfOf("receipt.pdf") + "," + pdfOf("RECEIPT.PDF") + "]"
	twoOthers := "[" + pdfOf("a.pdf") + "," + pdfOf("b.pdf") + "]"
	// A text file goes as text: it takes no kind from a file.
	textThenPDF := `[{"name":"receipt.txt","content_type":"text/plain","content_base64":"` +
		base64.StdEncoding.EncodeToString([]byte("paid 50.00 on 2 March")) + `"},` + pdfOf("receipt.pdf") + "]"
	tests := []struct {
		name, action, id, evidence, sum string
		d                               models.Dispute
		refuse                          error
		want, status                    string
		updates, stored                 int
	}{
		{"list", "list", "", "", "", open, nil, "0000:Success", "needs_response", 0, 0},
		{"query", "query", disputeID, "", "", open, nil, "0000:Success", "needs_response", 0, 0},
		{"text evidence", "evidence", disputeID, text, digest(text), open, nil, "0000:Success", "under_review", 1, 1},
		{"a PNG", "evidence", disputeID, png, digest(png), open, nil, "0000:Success", "under_review", 1, 1},
		{"a letter of three lines", "evidence", disputeID, letter, digest(letter), open, nil, "0000:Success", "under_review", 1, 1},
		{"a statement of 5,000 accented letters", "evidence", disputeID, long, digest(long), open, nil, "0000:Success", "under_review", 1, 1},
		{"a statement of 20,000 characters", "evidence", disputeID, longest, digest(longest), open, nil, "0000:Success", "under_review", 1, 1},
		{"a statement of 20,001 characters", "evidence", disputeID, over, digest(over), open, nil,
			"I0008:Invalid field value: evidence[0].text must be UTF-8 of at most 20000 characters", "", 0, 0},
		{"a PDF of 100 KiB", "evidence", disputeID, pdf, digest(pdf), open, nil, "0000:Success", "under_review", 1, 1},
		{"a PDF of 512 KiB", "evidence", disputeID, biggest, digest(biggest), open, nil, "0000:Success", "under_review", 1, 1},
		{"a file of each kind, and one of no kind", "evidence", disputeID, kinds, digest(kinds), open, nil, "0000:Success", "under_review", 1, 3},
		{"a receipt as text beside a receipt as PDF", "evidence", disputeID, textThenPDF, digest(textThenPDF), open, nil, "0000:Success", "under_review", 1, 2},
		{"two receipts", "evidence", disputeID, twoReceipts, digest(twoReceipts), open, nil,
			"I0008:Invalid field value: evidence[1] is a second file of kind receipt; name each file after its kind (receipt, customer_communication, customer_signature, shipping_documentation, service_documentation, refund_policy, cancellation_policy, duplicate_charge_documentation), one file of any other name", "", 0, 0},
		{"two files of no kind", "evidence", disputeID, twoOthers, digest(twoOthers), open, nil,
			"I0008:Invalid field value: evidence[1] is a second file of kind uncategorized_file; name each file after its kind (receipt, customer_communication, customer_signature, shipping_documentation, service_documentation, refund_policy, cancellation_policy, duplicate_charge_documentation), one file of any other name", "", 0, 0},
		{"accept", "accept", disputeID, "", "", open, nil, "0000:Success", "accepted", 1, 0},
		{"missing action", "", disputeID, "", "", open, nil, "I0001:Missing required field: action", "", 0, 0},
		{"unknown action", "win", disputeID, "", "", open, nil, "I0008:Invalid field value: action must be list, query, evidence or accept", "", 0, 0},
		{"query without an id", "query", "", "", "", open, nil, "I0001:Missing required field: dispute_id", "", 0, 0},
		{"another account's dispute", "query", "sim-acquirer:dp_2", "", "", open, nil, "I0036:Dispute not found", "", 0, 0},
		{"evidence without its digest", "evidence", disputeID, text, "", open, nil,
			"I0008:Invalid field value: evidence_sha256 must be the hex SHA-256 of the evidence as sent", "", 0, 0},
		{"a PDF that is not one", "evidence", disputeID, lie, digest(lie), open, nil,
			"I0008:Invalid field value: evidence[0].content_type must be application/pdf, image/png, image/jpeg or text/plain, and the content that type", "", 0, 0},
		{"evidence under review", "evidence", disputeID, text, digest(text), reviewed, nil,
			"I0037:The dispute does not wait for an answer: it is under_review", "", 0, 0},
		{"the workflow refuses: past its deadline", "accept", disputeID, "", "", open, flows.ErrDisputeNotAnswerable,
			"I0037:The dispute does not wait for an answer", "", 0, 0},
		{"the workflow refuses evidence: its pieces are not kept", "evidence", disputeID, png, digest(png), open, flows.ErrDisputeNotAnswerable,
			"I0037:The dispute does not wait for an answer", "", 0, 0},
		{"the acquirer refuses the evidence: the dispute still waits", "evidence", disputeID, kinds, digest(kinds), open, flows.ErrAnswerRefused,
			"I0040:The acquirer refused the evidence", "", 0, 0},
		{"the acquirer refuses: the dispute moved there", "evidence", disputeID, png, digest(png), open, flows.ErrAnswerRefused,
			"I0037:The dispute does not wait for an answer", "", 0, 0},
		{"the acquirer refuses the acceptance", "accept", disputeID, "", "", open, flows.ErrAnswerRefused,
			"I0037:The dispute does not wait for an answer", "", 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &records{d: tc.d}
			a := &answers{r: r, refuse: tc.refuse}
			if tc.name == "the acquirer refuses: the dispute moved there" {
				a.moved = "won"
			}
			body := map[string]any{"merchant_id": merchantID, "account_id": accountID, "dispute_id": tc.id, "action": tc.action,
				"evidence_sha256": tc.sum,
				"encryption_data": signing.Sign(signKey, merchantID, accountID, tc.id, tc.action, tc.sum)}
			if tc.evidence != "" {
				body["evidence"] = rawJSON(tc.evidence)
			}
			var out struct {
				Disputes []struct {
					DisputeID, Status, Amount, Fee, EvidenceDueBy string `json:",omitempty"`
				} `json:"disputes"`
				ResultInfo     string `json:"result_info"`
				EncryptionData string `json:"encryption_data"`
			}
			apitest.PostJSON(t, served(r, a), "/v1/dispute", body, "", &out)
			if out.ResultInfo != tc.want || len(a.updates) != tc.updates || len(r.evidence) != tc.stored {
				t.Fatalf("result_info %q, %d updates, %d pieces stored; want %q, %d, %d", out.ResultInfo, len(a.updates),
					len(r.evidence), tc.want, tc.updates, tc.stored)
			}
			if tc.want != "0000:Success" {
				return
			}
			if len(out.Disputes) != 1 || out.Disputes[0].Status != tc.status {
				t.Fatalf("disputes %+v, want one %s", out.Disputes, tc.status)
			}
			if want := signing.SignUpper(signKey, merchantID, accountID, disputeID, tc.status, "0000:Success"); out.EncryptionData != want {
				t.Errorf("signature %s, want %s", out.EncryptionData, want)
			}
		})
	}
}

type rawJSON = json.RawMessage

// TestDocumentedActionsAreServed: every action the API's description
// offers, and its example, is one the endpoint serves (the description
// once offered "show" and "submit", which it refused).
func TestDocumentedActionsAreServed(t *testing.T) {
	due := time.Date(2027, 3, 8, 9, 0, 0, 0, time.UTC)
	open := models.Dispute{ID: disputeID, Connector: "sim-acquirer", ConnectorRef: "dp_1", MerchantID: merchantID,
		AccountID: accountID, Currency: "USD", Amount: 5000, Fee: 1500, Stage: "chargeback", Status: "needs_response", EvidenceDue: &due}
	ops := (&Handler{}).Operations()
	props := ops[0].RawRequest.Schema["properties"].(apidoc.Schema)
	evidence := `[{"name":"delivery","text":"Delivered on 2026-11-20, signed for by the shopper."}]`
	for _, action := range props["action"].(apidoc.Schema)["enum"].([]any) {
		t.Run(fmt.Sprint(action), func(t *testing.T) {
			r := &records{d: open}
			id := disputeID
			if action == "list" {
				id = ""
			}
			body := map[string]any{"merchant_id": merchantID, "account_id": accountID, "dispute_id": id, "action": action}
			sum := ""
			if action == "evidence" {
				sum = digest(evidence)
				body["evidence"], body["evidence_sha256"] = rawJSON(evidence), sum
			}
			body["encryption_data"] = signing.Sign(signKey, merchantID, accountID, id, fmt.Sprint(action), sum)
			var out struct {
				ResultInfo string `json:"result_info"`
			}
			apitest.PostJSON(t, served(r, &answers{r: r}), "/v1/dispute", body, "", &out)
			if out.ResultInfo != "0000:Success" {
				t.Errorf("documented action %q: %s", action, out.ResultInfo)
			}
		})
	}
	example, _ := ops[0].Example.(map[string]any)
	if a := example["action"]; !slices.Contains(props["action"].(apidoc.Schema)["enum"].([]any), a) {
		t.Errorf("the example's action %v is not among the documented ones", a)
	}
}
