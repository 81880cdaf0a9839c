package integration

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/app"
	"github.com/paygate/paygate/internal/adapters/ledger"
	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/dev/simulator"
	"github.com/paygate/paygate/internal/domain/signing"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

// simDispute asks the simulated acquirer, as its test rig, for path with
// body and returns the dispute it answers.
func simDispute(t *testing.T, path string, body any) simulator.Dispute {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, env.simHTTP.URL+path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+app.DefaultProviderSecret)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var d simulator.Dispute
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&d) != nil {
		t.Fatalf("%s: HTTP %d", path, resp.StatusCode)
	}
	return d
}

// waitDispute waits until the dispute's record has status.
func waitDispute(t *testing.T, creds merchant.Credentials, id, status string) *models.Dispute {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		d, err := models.FindDispute(context.Background(), env.gw.DB, creds.MerchantID, creds.AccountID, id)
		if err == nil && d.Status == status {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("dispute %s is %+v (%v) after 30 s, want %s", id, d, err, status)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestDisputeEndToEnd follows issue 30 on the real stack: the simulated
// acquirer raises a dispute of a paid order and tells the gateway by a
// signed callback, which starts the dispute's workflow; it asks the
// acquirer, holds the amount and the 15.00 fee (beyond the deposit, as
// the merchant's debt), and on the acquirer's decision releases the hold
// (won) or makes it final (lost). The ledger tells the truth throughout.
func TestDisputeEndToEnd(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, outcome string
		want          map[string]int64
		// The refund of 1.00 asked once the dispute is decided: its
		// entry's status and message, and the acquirer's refunds after.
		refundStatus, refundMessage string
		refunds                     int
		refunded                    int64
	}{
		{"won", "won", map[string]int64{models.LedgerDisputeHold: 0, models.LedgerDebt: 0, models.LedgerDeposit: 0},
			"1", "0000:Success", 1, 100},
		{"lost", "lost", map[string]int64{models.LedgerDisputeHold: 0, models.LedgerDebt: -2734, models.LedgerDeposit: 0,
			models.LedgerFeeIncome: 1500, models.LedgerDisputeClearing: 1234},
			"0", "I0038:Refund not allowed while the payment is disputed: chargeback lost", 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			creds := subscriptionAccount(t)
			_, paid := authorise(t, signCard(cardOrder(creds, newOrderNo(t), "4242424242424242"), creds.SignKey))
			if paid.ResultInfo != "0000:Success" {
				t.Fatalf("payment: %+v", paid)
			}
			raised := simDispute(t, "/_sim/disputes", map[string]any{"reference": paid.TransactionID, "stage": "chargeback",
				"reason": "fraudulent", "callback_url": env.api.URL + "/v1/disputes/callback"})
			id := "sim-acquirer:" + raised.DisputeID
			d := waitDispute(t, creds, id, "needs_response")
			if !d.Held || d.Amount != 1234 || d.Fee != 1500 || d.Stage != "chargeback" || d.OrderNo == "" || d.EvidenceDue == nil {
				t.Fatalf("dispute record %+v", d)
			}
			if d.WorkflowID != workflows.DisputeWorkflowID("sim-acquirer", raised.DisputeID) {
				t.Errorf("workflow %s", d.WorkflowID)
			}
			held := ledgerOf(t, creds)
			if held[models.LedgerDisputeHold] != 2734 || held[models.LedgerDebt] != -2734 {
				t.Errorf("held: %v", held)
			}
			// A refund now would pay the cardholder twice: refused, and
			// nothing reaches the acquirer.
			refundDisputed(t, creds, paid.TransactionID, paid.OrderNo, "while disputed", "0", "I0038:Refund not allowed while the payment is disputed: chargeback needs_response")
			simDispute(t, "/_sim/disputes/"+raised.DisputeID+"/decide", map[string]any{"outcome": tc.outcome})
			waitDispute(t, creds, id, tc.outcome)
			waitLedger(t, creds, tc.want)
			refundDisputed(t, creds, paid.TransactionID, paid.OrderNo, "once decided", tc.refundStatus, tc.refundMessage)
			if n, sum := refundsOf(paid.TransactionID); n != tc.refunds || sum != tc.refunded {
				t.Errorf("the acquirer has %d refunds summing %d, want %d summing %d", n, sum, tc.refunds, tc.refunded)
			}
		})
	}
}

// refundDisputed asks a refund of 1.00 of the paid order tx for reason
// and checks its entry's status and message. Each call gives its own
// reason: the same signed request again is answered as the first time.
func refundDisputed(t *testing.T, creds merchant.Credentials, tx, orderNo, reason, status, message string) {
	t.Helper()
	_, r := batch(t, creds, "/v1/refund", "refund_orders", []batchEntry{
		with(ref(tx, orderNo, "12.34"), "refund_amount", "1.00", "refund_reason", reason),
	})
	if r.ReturnStatus != "1" || len(r.Entries) != 1 {
		t.Fatalf("refund: %s %q", r.ReturnStatus, r.ReturnMessage)
	}
	if e := r.Entries[0]; e["refund_status"] != status || e["refund_message"] != message {
		t.Errorf("refund entry %v, want status %s and %q", e, status, message)
	}
}

// ledgerOf is the account's USD ledger balances by kind.
func ledgerOf(t *testing.T, creds merchant.Credentials) map[string]int64 {
	t.Helper()
	var rows []models.LedgerAccount
	if err := env.gw.DB.Where("merchant_id = ? AND account_id = ? AND currency = 'USD'", creds.MerchantID, creds.AccountID).
		Find(&rows).Error; err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, r := range rows {
		out[r.Kind] = r.Balance
	}
	return out
}

// waitLedger waits until the account's balances are want, then checks the
// whole ledger's invariants for the account.
func waitLedger(t *testing.T, creds merchant.Credentials, want map[string]int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := ledgerOf(t, creds)
		ok := true
		for k, v := range want {
			ok = ok && got[k] == v
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ledger %v, want %v", got, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
	v, err := ledger.New(env.gw.DB).Check(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range v {
		if x.AccountID == creds.AccountID {
			t.Errorf("ledger check: %+v", x)
		}
	}
}

// TestDisputeEvidenceWins: the merchant answers a dispute with evidence
// (a text and a receipt file) through its signed endpoint; the acquirer
// gets the text and the file's bytes, decides on them (the simulator's
// winning words) and the hold is released. The evidence is kept sealed in
// the record and never appears in the dispute's workflow history.
func TestDisputeEvidenceWins(t *testing.T) {
	t.Parallel()
	creds := subscriptionAccount(t)
	_, paid := authorise(t, signCard(cardOrder(creds, newOrderNo(t), "4242424242424242"), creds.SignKey))
	raised := simDispute(t, "/_sim/disputes", map[string]any{"reference": paid.TransactionID, "reason": "product_not_received",
		"callback_url": env.api.URL + "/v1/disputes/callback"})
	id := "sim-acquirer:" + raised.DisputeID
	waitDispute(t, creds, id, "needs_response")

	secret := "tracking 1Z999AA10123456784 " + simulator.WinningEvidence
	// A scanned receipt of 400 KiB: a real file's size.
	receipt := append([]byte("%PDF-1.4\nreceipt 1Z999AA10123456784, signed for\n"), make([]byte, 400<<10)...)
	evidence := `[{"name":"tracking","text":"` + secret + `"},{"name":"Receipt.pdf","content_type":"application/pdf","content_base64":"` +
		base64.StdEncoding.EncodeToString(receipt) + `"}]`
	sum := sha256.Sum256([]byte(evidence))
	digest := hex.EncodeToString(sum[:])
	body := `{"merchant_id":"` + creds.MerchantID + `","account_id":"` + creds.AccountID + `","dispute_id":"` + id +
		`","action":"evidence","evidence":` + evidence + `,"evidence_sha256":"` + digest + `","encryption_data":"` +
		signing.Sign(creds.SignKey, creds.MerchantID, creds.AccountID, id, "evidence", digest) + `"}`
	_, b := post(t, "/v1/dispute", "application/json", body)
	var answer struct {
		Disputes []struct {
			Status string `json:"status"`
		} `json:"disputes"`
		ResultInfo string `json:"result_info"`
	}
	if err := json.Unmarshal(b, &answer); err != nil || answer.ResultInfo != "0000:Success" || len(answer.Disputes) != 1 {
		t.Fatalf("evidence answered %s", b)
	}
	// The answer usually shows the dispute won already; a fresh clone's run
	// once showed it still needs_response (the record read before the
	// workflow wrote the outcome: an open question, see the closing note),
	// so the outcome is awaited.
	if answer.Disputes[0].Status != "won" {
		t.Logf("evidence answered %s before the outcome was recorded", answer.Disputes[0].Status)
		waitDispute(t, creds, id, "won")
	}
	waitLedger(t, creds, map[string]int64{models.LedgerDisputeHold: 0, models.LedgerDebt: 0})

	// The acquirer got the receipt's bytes, as a receipt.
	resp, err := http.Get(env.simHTTP.URL + "/v1/disputes/" + raised.DisputeID)
	if err != nil {
		t.Fatal(err)
	}
	var atAcquirer simulator.Dispute
	err = json.NewDecoder(resp.Body).Decode(&atAcquirer)
	resp.Body.Close()
	receiptSum := sha256.Sum256(receipt)
	if err != nil || len(atAcquirer.EvidenceFiles) != 1 || atAcquirer.EvidenceFiles[0] != (simulator.EvidenceFileSeen{Kind: "receipt",
		Name: "Receipt.pdf", Size: len(receipt), SHA256: hex.EncodeToString(receiptSum[:])}) {
		t.Errorf("the acquirer's evidence files %+v (%v), want the receipt", atAcquirer.EvidenceFiles, err)
	}

	var rows []struct{ Sealed []byte }
	if err := env.gw.DB.Raw("SELECT sealed FROM dispute_evidences WHERE dispute_id = ?", id).Scan(&rows).Error; err != nil || len(rows) != 2 {
		t.Fatalf("evidence rows %d (%v), want 2", len(rows), err)
	}
	for _, r := range rows {
		if bytes.Contains(r.Sealed, []byte("1Z999AA10123456784")) {
			t.Error("the evidence is stored in clear")
		}
	}
	stored, err := models.DisputeEvidenceOf(context.Background(), env.gw.DB, id)
	texts := map[string]string{}
	for _, e := range stored {
		texts[e.Name] = string(e.Content)
	}
	if err != nil || len(stored) != 2 || texts["tracking"] != secret || texts["Receipt.pdf"] != string(receipt) {
		t.Errorf("evidence opened: %+v (%v)", stored, err)
	}
	wid := workflows.DisputeWorkflowID("sim-acquirer", raised.DisputeID)
	all := decryptedPayloads(t, wid)
	if !strings.Contains(all, raised.DisputeID) {
		t.Fatalf("the history's payloads do not name the dispute: decoding broken")
	}
	if strings.Contains(all, "1Z999AA10123456784") {
		t.Error("the evidence is in the workflow history")
	}
}

// simDisputeAfter is how long after its capture the simulator disputes a
// payment with the dispute test card.
const simDisputeAfter = 200 * time.Millisecond

// TestDisputeTestCard: "test cards disputed a configurable time after
// capture": a payment with 4000000000000259 is disputed by the simulated
// acquirer on its own, and its dispute workflow holds the money.
func TestDisputeTestCard(t *testing.T) {
	t.Parallel()
	creds := subscriptionAccount(t)
	_, paid := authorise(t, signCard(cardOrder(creds, newOrderNo(t), "4000000000000259"), creds.SignKey))
	if paid.ResultInfo != "0000:Success" {
		t.Fatalf("payment: %+v", paid)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var ds []models.Dispute
		if err := env.gw.DB.Where("transaction_id = ?", paid.TransactionID).Find(&ds).Error; err != nil {
			t.Fatal(err)
		}
		if len(ds) == 1 && ds[0].Held && ds[0].Status == "needs_response" && ds[0].Reason == "fraudulent" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("disputes of the test card's payment: %+v", ds)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestDisputeDeadlineAcrossWorkerRestart follows issue 30's "never misses a
// deadline across worker and server restarts": the worker is stopped while
// a dispute waits for evidence, its deadline passes with no worker, and the
// worker started afterwards loses the dispute on the durable timer and
// makes the hold final.
func TestDisputeDeadlineAcrossWorkerRestart(t *testing.T) {
	creds := subscriptionAccount(t)
	_, paid := authorise(t, signCard(cardOrder(creds, newOrderNo(t), "4242424242424242"), creds.SignKey))
	raised := simDispute(t, "/_sim/disputes", map[string]any{"reference": paid.TransactionID, "evidence_window_seconds": 4,
		"callback_url": env.api.URL + "/v1/disputes/callback"})
	id := "sim-acquirer:" + raised.DisputeID
	d := waitDispute(t, creds, id, "needs_response")

	env.worker.Stop()
	// The deadline passes while no worker runs.
	for time.Now().Before(d.EvidenceDue.Add(time.Second)) {
		time.Sleep(100 * time.Millisecond)
	}
	w, err := env.gw.NewWorker()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	env.worker = w
	waitDispute(t, creds, id, "lost")
	waitLedger(t, creds, map[string]int64{models.LedgerDisputeHold: 0, models.LedgerFeeIncome: 1500, models.LedgerDisputeClearing: 1234})
}
