package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/proxy"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/paygate/paygate/internal/adapters/payloadcodec"
	"github.com/paygate/paygate/workflows"
)

// Shopper and beneficiary data the tests send, which no workflow history
// may hold in the clear: the card form's name, email and IP
// (helpers_test.go), the payout's beneficiary and payer (payout_test.go),
// and the address fields of TestHistoriesHoldNoShopperDataInTheClear. Short
// values such as the first name "Ada" are left out: three bytes turn up in
// a few megabytes of ciphertext by chance.
var clearTextNeedles = []string{
	"Lovelace", "ada@example.com", "203.0.113.7",
	"Muller GmbH", "Demo Ltd", "Berlin", ibanCompletes,
	historyStreet, historyCity, historyPostcode, historyPhone, historyDocument, historyEmail, historyLastName,
}

// The address of the order TestHistoriesHoldNoShopperDataInTheClear pays.
const (
	historyStreet   = "221B Baker Street"
	historyCity     = "Marylebone"
	historyPostcode = "NW1 6XE"
	historyPhone    = "+44 20 7946 0958"
	historyDocument = "PX-93417265"
	historyEmail    = "grace.hopper@example.org"
	historyLastName = "Hopperton"
)

// historySample is how many workflows of each type afterTheTests reads the
// raw history of, spread over every run of the suite's.
const historySample = 40

// rawHistory reads a workflow's history from the frontend's gRPC service
// itself, with no data converter or codec between: the bytes the Temporal
// server stores and anyone with access to it or its database sees.
func rawHistory(ctx context.Context, workflowID, runID string) (*historypb.History, error) {
	h := &historypb.History{}
	var token []byte
	for {
		resp, err := env.temporal.WorkflowService().GetWorkflowExecutionHistory(ctx, &workflowservice.GetWorkflowExecutionHistoryRequest{
			Namespace:     env.cfg.TemporalNamespace,
			Execution:     &commonpb.WorkflowExecution{WorkflowId: workflowID, RunId: runID},
			NextPageToken: token,
		})
		if err != nil {
			return nil, fmt.Errorf("history of %s: %w", workflowID, err)
		}
		h.Events = append(h.Events, resp.GetHistory().GetEvents()...)
		if token = resp.GetNextPageToken(); len(token) == 0 {
			return h, nil
		}
	}
}

// rawHistoryProblems lists what in a raw history is in the clear: a payload
// the codec did not encrypt (search attributes aside, which the server
// indexes and which hold ids only), a needle in any payload's bytes, or a
// needle anywhere else in the history (failure messages, ids, headers). It
// also returns how many payloads it saw and the key ids they name.
func rawHistoryProblems(ctx context.Context, workflowID string, h *historypb.History) (problems []string, payloads int, keyIDs map[string]int, err error) {
	keyIDs = map[string]int{}
	err = proxy.VisitPayloads(ctx, h, proxy.VisitPayloadsOptions{
		Visitor: func(_ *proxy.VisitPayloadsContext, ps []*commonpb.Payload) ([]*commonpb.Payload, error) {
			for _, p := range ps {
				if !payloadcodec.Encrypted(p) && traceContextOnly(p) {
					// The tracing header: ids only, checked for needles
					// with the rest of the history's text below.
					continue
				}
				payloads++
				if !payloadcodec.Encrypted(p) {
					problems = append(problems, fmt.Sprintf("history of %s holds a plain %q payload", workflowID, p.GetMetadata()["encoding"]))
				}
				keyIDs[string(p.GetMetadata()[payloadcodec.MetadataKeyID])]++
				for _, b := range append([][]byte{p.GetData()}, mapValues(p.GetMetadata())...) {
					for _, n := range clearTextNeedles {
						if bytes.Contains(b, []byte(n)) {
							problems = append(problems, fmt.Sprintf("history of %s: a payload holds %q", workflowID, n))
						}
					}
				}
			}
			return ps, nil
		},
		SkipSearchAttributes: true,
	})
	if err != nil {
		return nil, 0, nil, err
	}
	text, err := protojson.Marshal(h)
	if err != nil {
		return nil, 0, nil, err
	}
	for _, n := range clearTextNeedles {
		if bytes.Contains(text, []byte(n)) {
			problems = append(problems, fmt.Sprintf("history of %s holds %q", workflowID, n))
		}
	}
	return problems, payloads, keyIDs, nil
}

func mapValues(m map[string][]byte) [][]byte {
	out := make([][]byte, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// historyLeaks reads, after every test has run, the raw histories of a
// sample of the suite's order, payout, subscription and redelivery
// workflows, spread over all of them, and lists every shopper value in the
// clear (rawHistoryProblems).
func historyLeaks(ctx context.Context) ([]string, error) {
	var problems []string
	read := map[string]int{}
	for _, typ := range []string{workflows.OrderWorkflowType, workflows.PayoutWorkflowType, workflows.SubscriptionWorkflowType, workflows.RedeliverWorkflowType} {
		page, err := env.temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: env.cfg.TemporalNamespace, Query: fmt.Sprintf("WorkflowType = %q", typ), PageSize: 1000,
		})
		if err != nil {
			return nil, fmt.Errorf("list %s workflows: %w", typ, err)
		}
		all := page.GetExecutions()
		step := max(1, len(all)/historySample)
		for i := 0; i < len(all); i += step {
			e := all[i].GetExecution()
			h, err := rawHistory(ctx, e.GetWorkflowId(), e.GetRunId())
			if err != nil {
				return nil, err
			}
			p, _, _, err := rawHistoryProblems(ctx, e.GetWorkflowId(), h)
			if err != nil {
				return nil, err
			}
			problems = append(problems, p...)
			read[typ]++
		}
	}
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "integration: raw histories read without the codec: %v; shopper data in the clear: %d\n", read, len(problems))
	}
	return problems, nil
}

// TestHistoriesHoldNoShopperDataInTheClear pays an order that carries a
// full billing and delivery address, sends a payout and starts and
// cancels a subscription, then reads each workflow's history raw, as the
// Temporal server stores it: every payload is encrypted under the
// keyring's active key and no shopper or beneficiary value shows. Decoded
// with the gateway's codec, the same histories hold those values, so the
// search is not looking in the wrong place.
func TestHistoriesHoldNoShopperDataInTheClear(t *testing.T) {
	ctx := context.Background()
	creds := env.auto
	orderNo := newOrderNo(t)
	f := cardOrder(creds, orderNo, "4242424242424242")
	f["shopper_email"] = historyEmail
	f["last_name"] = historyLastName
	for k, v := range map[string]string{
		"billing_address": historyStreet, "billing_city": historyCity, "billing_postal_code": historyPostcode,
		"shopper_phone": historyPhone, "document": historyDocument,
		"delivery_firstname": "Grace", "delivery_lastname": historyLastName, "delivery_address": historyStreet,
		"delivery_city": historyCity, "delivery_country": "GB",
	} {
		f[k] = v
	}
	if _, r := authorise(t, signCard(f, creds.SignKey)); r.ResultInfo != "0000:Success" {
		t.Fatalf("payment: %s", r.ResultInfo)
	}

	po := payoutAccount(t, 1_000_00)
	rid := newRequestID()
	if _, out := postPayout(t, "/v1/payout", payoutBody(po, rid, "10.00", ibanCompletes)); out["status"] != "COMPLETED" {
		t.Fatalf("payout: %v", out)
	}

	sub := subscriptionAccount(t)
	first := startSubscription(t, sub, "2")
	if ack := cancelSubscription(t, sub, first.RecurringID); ack.RecurringStatus != "0" {
		t.Fatalf("cancel: %+v", ack)
	}

	activeKey := env.gw.Keys.ActiveID()
	for _, tc := range []struct {
		name, id string
		decoded  []string // values the decoded history holds
	}{
		{"order", workflows.OrderWorkflowID(creds.MerchantID, creds.AccountID, orderNo),
			[]string{historyEmail, historyLastName, historyStreet, historyCity, historyPostcode, historyPhone, historyDocument, "203.0.113.7"}},
		{"payout", workflows.PayoutWorkflowID(po.MerchantID, rid), []string{"Muller GmbH", "Berlin", ibanCompletes, "Demo Ltd"}},
		{"subscription", workflows.SubscriptionWorkflowID(sub.MerchantID, first.RecurringID), []string{"Lovelace", "ada@example.com"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := rawHistory(ctx, tc.id, "")
			if err != nil {
				t.Fatal(err)
			}
			problems, payloads, keyIDs, err := rawHistoryProblems(ctx, tc.id, h)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range problems {
				t.Error(p)
			}
			if payloads < 3 || keyIDs[activeKey] != payloads {
				t.Errorf("%d payloads, key ids %v: want every payload sealed under %q", payloads, keyIDs, activeKey)
			}
			decoded := decryptedPayloads(t, tc.id)
			for _, v := range tc.decoded {
				if !strings.Contains(decoded, v) {
					t.Errorf("the decoded history lacks %q: the search for it in the raw one proves nothing", v)
				}
			}
		})
	}
}

// decryptedPayloads returns the bytes of every payload of a workflow's
// history, decrypted with the gateway's codec as its worker reads them.
func decryptedPayloads(t *testing.T, workflowID string) string {
	t.Helper()
	h, err := rawHistory(context.Background(), workflowID, "")
	if err != nil {
		t.Fatal(err)
	}
	return decryptHistory(t, workflowID, h)
}

// decryptHistory decrypts every payload of h in place with the gateway's
// codec and returns their bytes, one payload a line.
func decryptHistory(t *testing.T, workflowID string, h *historypb.History) string {
	t.Helper()
	c, err := payloadcodec.New(env.gw.Keys)
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	if err := proxy.VisitPayloads(context.Background(), h, proxy.VisitPayloadsOptions{
		Visitor: func(_ *proxy.VisitPayloadsContext, ps []*commonpb.Payload) ([]*commonpb.Payload, error) {
			out, err := c.Decode(ps)
			for _, p := range out {
				sb.Write(p.GetData())
				sb.WriteByte('\n')
			}
			return out, err
		},
		SkipSearchAttributes: true,
	}); err != nil {
		t.Fatalf("decrypt the history of %s: %v", workflowID, err)
	}
	return sb.String()
}

// traceContextOnly reports whether a plain payload is the tracing
// interceptor's header: the W3C trace context of the caller's span, ids
// only, which the SDK writes past the codec.
func traceContextOnly(p *commonpb.Payload) bool {
	var m map[string]string
	if json.Unmarshal(p.GetData(), &m) != nil || len(m) == 0 {
		return false
	}
	for k := range m {
		if k != "traceparent" && k != "tracestate" {
			return false
		}
	}
	return true
}
