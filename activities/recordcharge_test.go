package activities

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/paygate/paygate/internal/adapters/connectors"
	"github.com/paygate/paygate/internal/adapters/connectors/simacquirer"
	"github.com/paygate/paygate/internal/adapters/vault"
	"github.com/paygate/paygate/internal/dev/simulator"
	"github.com/paygate/paygate/internal/dev/testdb"
	"github.com/paygate/paygate/internal/domain/capture"
	"github.com/paygate/paygate/internal/domain/keyring"
	"github.com/paygate/paygate/internal/domain/order"
	"github.com/paygate/paygate/internal/domain/risk"
	"github.com/paygate/paygate/models"
)

// TestAttemptOf: how RecordAndCharge hands the workflow its charge attempt.
// An answer is an outcome; an error Authorise's retry policy never retries
// keeps its type and message, so the workflow takes it as it would from
// Authorise; any other error asks the workflow to try again.
func TestAttemptOf(t *testing.T) {
	approved := ChargeOutcome{Connector: "sim-acquirer", ChargeID: "ch_1", Approved: true, AuthCode: "A1", CapturedAmount: 1234}
	declined := ChargeOutcome{Connector: "sim-acquirer", ChargeID: "ch_2", DeclineCode: "insufficient_funds"}
	tests := []struct {
		name    string
		outcome ChargeOutcome
		err     error
		want    ChargeAttempt
	}{
		{"approved", approved, nil, ChargeAttempt{Outcome: &approved}},
		{"declined", declined, nil, ChargeAttempt{Outcome: &declined}},
		{"acquirer timeout", ChargeOutcome{}, temporal.NewNonRetryableApplicationError("acquirer did not answer in time", ErrTypeAcquirerTimeout, errors.New("deadline")),
			ChargeAttempt{ErrType: ErrTypeAcquirerTimeout, ErrMessage: "acquirer did not answer in time"}},
		{"acquirer refused", ChargeOutcome{}, temporal.NewNonRetryableApplicationError("acquirer refused the request", ErrTypeAcquirerRejected, nil),
			ChargeAttempt{ErrType: ErrTypeAcquirerRejected, ErrMessage: "acquirer refused the request"}},
		{"card not in the vault", ChargeOutcome{}, temporal.NewNonRetryableApplicationError("card token not in the vault", ErrTypeCardUnavailable, nil),
			ChargeAttempt{ErrType: ErrTypeCardUnavailable, ErrMessage: "card token not in the vault"}},
		{"stored card deleted", ChargeOutcome{}, temporal.NewNonRetryableApplicationError("stored card deleted", ErrTypeCardDeleted, nil),
			ChargeAttempt{ErrType: ErrTypeCardDeleted, ErrMessage: "stored card deleted"}},
		{"acquirer down", ChargeOutcome{}, fmt.Errorf("wrapped: %w", temporal.NewNonRetryableApplicationError("acquirer unavailable", ErrTypeAcquirerDown, nil)),
			ChargeAttempt{ErrType: ErrTypeAcquirerDown, ErrMessage: "acquirer unavailable"}},
		{"a lost connection is tried again", ChargeOutcome{}, errors.New("authorise 1: connection reset by peer"),
			ChargeAttempt{Retry: true, ErrMessage: "authorise 1: connection reset by peer"}},
		{"a retryable application error is tried again", ChargeOutcome{}, temporal.NewApplicationError("busy", "Busy"),
			ChargeAttempt{Retry: true, ErrMessage: "busy (type: Busy, retryable: true)"}},
	}
	a := &Activities{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := a.attemptOf(AuthoriseInput{Reference: "1"}, tc.outcome, tc.err)
			if !reflect.DeepEqual(*got, tc.want) {
				t.Errorf("attempt = %+v, want %+v", *got, tc.want)
			}
		})
	}
}

// cardVault is a vault of one card for the activities' tests. DropCVV
// answers dropErr and keeps the tokens it was asked for.
type cardVault struct {
	mu      sync.Mutex
	cards   map[string]vault.Card
	opens   int
	dropErr error
	drops   []string
}

func (v *cardVault) Detokenize(_ context.Context, token string) (vault.Card, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.opens++
	c, ok := v.cards[token]
	if !ok {
		return vault.Card{}, vault.ErrUnknownToken
	}
	return c, nil
}

func (v *cardVault) DropCVV(_ context.Context, token string) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.drops = append(v.drops, token)
	return v.dropErr
}

func (v *cardVault) Delete(context.Context, string) error { return nil }

// recordInput is a new card order of account A1 with its risk check.
func recordInput(txID, orderNo, cardFP string, settings risk.Settings) RecordOrderInput {
	return RecordOrderInput{TransactionID: txID, WorkflowID: "order/M1/A1/" + orderNo, MerchantID: "M1", AccountID: "A1",
		OrderNo: orderNo, Currency: "USD", Amount: 1234, CaptureMode: capture.Auto, CardToken: "tok-" + orderNo,
		CardFingerprint: cardFP, RequestFingerprint: "req-" + orderNo, Details: order.Details{MerchantID: "M1", AccountID: "A1", OrderNo: orderNo},
		Risk: &RiskInput{TransactionID: txID, MerchantID: "M1", AccountID: "A1", Amount: 1234, Currency: "USD",
			CardFingerprint: cardFP, Settings: &settings}}
}

// TestRecordOrderKeepsItsFirstVerdict runs the real RecordOrder and
// CheckRisk on Postgres. The check writes its verdict on the order's row,
// and a check run again for the order (the payment's workflow task run
// again after a worker died mid-charge) answers that verdict though the
// facts moved in between (the card blocked): judged again, the order would
// be stopped after its card was charged. A new order of the card is judged
// on the facts as they now are; an order the release before finished keeps
// the verdict its outcome wrote.
func TestRecordOrderKeepsItsFirstVerdict(t *testing.T) {
	db := testdb.Open(t, "paygate_firstverdict_")
	a := &Activities{Records: models.Records{DB: db}}
	first, err := a.RecordOrder(t.Context(), recordInput("1000000000000000001", "KEEP-1", "card-fp-1", risk.Settings{}))
	if err != nil {
		t.Fatal(err)
	}
	if first.Risk == nil || first.Risk.Action != risk.Accept {
		t.Fatalf("first verdict = %+v, want accept", first.Risk)
	}
	// An order a worker of the release before recorded and finished: its
	// outcome's write set the verdict's action, score and reasons, not
	// the rule. Its check run again by a new worker (the old worker
	// stopped before the task completed) keeps that verdict.
	old := recordInput("1000000000000000003", "KEEP-3", "card-fp-1", risk.Settings{})
	if _, err := a.Records.InsertOrder(t.Context(), &models.Order{TransactionID: old.TransactionID, WorkflowID: old.WorkflowID,
		MerchantID: "M1", AccountID: "A1", OrderNo: old.OrderNo, Currency: "USD", Amount: 1234, CaptureMode: capture.Auto,
		CardFingerprint: "card-fp-1", RequestFingerprint: old.RequestFingerprint, Details: old.Details, StateVersion: 1,
		RiskAction: risk.Accept, RiskReasons: []models.RiskReason{{Name: risk.RuleBlockedCard, Status: risk.Accept}}}); err != nil {
		t.Fatal(err)
	}
	if err := db.Create(&models.BlockedCard{Fingerprint: "card-fp-1", Reason: "test"}).Error; err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name       string
		in         RecordOrderInput
		wantAction string
		wantRule   string
	}{
		{"the order's check run again keeps the verdict it was charged on", recordInput("1000000000000000001", "KEEP-1", "card-fp-1", risk.Settings{}), risk.Accept, ""},
		{"a new order of the card is judged now", recordInput("1000000000000000002", "KEEP-2", "card-fp-1", risk.Settings{}), risk.Reject, risk.RuleBlockedCard},
		{"an order finished by the release before keeps its outcome's verdict", old, risk.Accept, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := a.RecordOrder(t.Context(), tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got.ExistingTransactionID != "" || got.Risk == nil || got.Risk.Action != tc.wantAction || got.Risk.Rule != tc.wantRule {
				t.Fatalf("result = %+v (risk %+v), want %s by %q", got, got.Risk, tc.wantAction, tc.wantRule)
			}
			var row models.Order
			if err := db.Where("transaction_id = ?", tc.in.TransactionID).Take(&row).Error; err != nil {
				t.Fatal(err)
			}
			// The release before's row keeps what its outcome wrote, and
			// no rule.
			wantRule := &got.Risk.Rule
			if tc.in.TransactionID == old.TransactionID {
				wantRule = nil
			}
			if row.RiskAction != got.Risk.Action || row.RiskScore != got.Risk.Score || !reflect.DeepEqual(row.RiskRule, wantRule) ||
				!slices.Equal(row.RiskReasons, keptVerdict(*got.Risk).Reasons) {
				t.Errorf("row holds %s/%d/%v %+v, want the verdict answered %+v", row.RiskAction, row.RiskScore, row.RiskRule, row.RiskReasons, *got.Risk)
			}
		})
	}
	// A check of an order not recorded writes nothing and answers its own.
	loose, err := a.CheckRisk(t.Context(), *recordInput("1000000000000000009", "KEEP-9", "card-fp-1", risk.Settings{}).Risk)
	if err != nil || loose.Action != risk.Reject || loose.Rule != risk.RuleBlockedCard {
		t.Errorf("check of an order not recorded = %+v, %v, want reject by %s", loose, err, risk.RuleBlockedCard)
	}
	again, err := a.RecordOrder(t.Context(), recordInput("1000000000000000001", "KEEP-1", "card-fp-1", risk.Settings{}))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again.Risk, first.Risk) {
		t.Errorf("verdict run again = %+v, want the first %+v", *again.Risk, *first.Risk)
	}
}

// TestConcurrentOrdersOfOneCardSeeEachOther: each order is recorded before
// its velocity is counted, so of two orders of one card at the same moment
// at least one counts the other: with a card velocity of one order an
// hour, never both pass.
//
// Both ways of recording hold it: RecordOrder's statements one by one, and
// recordPiped's pipeline, where the insert commits before the count begins.
func TestConcurrentOrdersOfOneCardSeeEachOther(t *testing.T) {
	db := testdb.Open(t, "paygate_velocityrace_")
	a := &Activities{Records: models.Records{DB: db}, Vault: realVault(t, db)}
	record := map[string]func(RecordOrderInput) (RecordOrderResult, error){
		"one by one": func(in RecordOrderInput) (RecordOrderResult, error) { return a.RecordOrder(t.Context(), in) },
		"piped": func(in RecordOrderInput) (RecordOrderResult, error) {
			res, piped, err := a.recordPiped(t.Context(), RecordAndChargeInput{Record: in, Charge: AuthoriseInput{CardToken: in.CardToken}}, make(chan openedCard, 1))
			if !piped {
				return res, errors.New("not piped")
			}
			return res, err
		},
	}
	for _, way := range []string{"one by one", "piped"} {
		t.Run(way, func(t *testing.T) { testOrdersOfOneCardSeeEachOther(t, way, record[way]) })
	}
}

func testOrdersOfOneCardSeeEachOther(t *testing.T, way string, record func(RecordOrderInput) (RecordOrderResult, error)) {
	settings := risk.Settings{Config: risk.Config{CardVelocity: risk.Velocity{Max: 1, Window: risk.Duration(time.Hour), Score: 100}}}
	for pair := range 20 {
		card := fmt.Sprintf("card-race-%s-%d", way, pair)
		var (
			wg    sync.WaitGroup
			start = make(chan struct{})
			got   [2]*risk.Result
			errs  [2]error
		)
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				res, err := record(recordInput(fmt.Sprintf("2%d000000000000%03d%02d", len(way)%10, pair, i), fmt.Sprintf("RACE-%s-%d-%d", way, pair, i), card, settings))
				got[i], errs[i] = res.Risk, err
			}()
		}
		close(start)
		wg.Wait()
		for i := range 2 {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
		}
		if got[0].Action == risk.Accept && got[1].Action == risk.Accept {
			t.Fatalf("pair %d: both orders of one card passed a velocity of one", pair)
		}
	}
}

// TestRecordAndCharge runs the real RecordAndCharge on Postgres against the
// acquirer simulator: a passed order is recorded and charged once, with
// the first verdict kept when the step runs again; a refused one is
// recorded and not charged; an order that cannot be recorded is neither.
//
// It runs with the real vault, whose statements go to Postgres in one
// pipeline with the order's (recordPiped), and with a fake one, which
// takes them one by one (RecordOrder).
func TestRecordAndCharge(t *testing.T) {
	for _, piped := range []bool{true, false} {
		t.Run(fmt.Sprintf("piped %t", piped), func(t *testing.T) { testRecordAndCharge(t, piped) })
	}
}

// realVault is a vault over db with a key of its own.
func realVault(t *testing.T, db *models.DB) *vault.Vault {
	t.Helper()
	keys, err := keyring.New("k1", map[string][]byte{"k1": make([]byte, 32)})
	if err != nil {
		t.Fatal(err)
	}
	return vault.New(db, keys, make([]byte, 32))
}

func testRecordAndCharge(t *testing.T, piped bool) {
	db := testdb.Open(t, "paygate_recordcharge_")
	sim := simulator.NewServer(simulator.Options{Logger: slog.New(slog.DiscardHandler)})
	ts := httptest.NewServer(sim.Handler())
	t.Cleanup(ts.Close)
	acq, err := simacquirer.New(simacquirer.Config{BaseURL: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	reg := connectors.New[Connector](simacquirer.Name)
	if err := reg.Register(acq.Name(), acq); err != nil {
		t.Fatal(err)
	}
	cards := &cardVault{cards: map[string]vault.Card{}}
	real := realVault(t, db)
	a := &Activities{Records: models.Records{DB: db}, Connectors: reg, Vault: cards}
	if piped {
		a.Vault = real
	}
	if err := db.Create(&models.BlockedCard{Fingerprint: "card-blocked", Reason: "test"}).Error; err != nil {
		t.Fatal(err)
	}
	input := func(txID, orderNo, pan, cardFP string) RecordAndChargeInput {
		rec := recordInput(txID, orderNo, cardFP, risk.Settings{})
		c := vault.Card{Number: pan, ExpiryMonth: "12", ExpiryYear: "2030", CVV: "123"}
		if piped {
			token, _, err := real.Tokenize(t.Context(), orderNo, c)
			if err != nil {
				t.Fatal(err)
			}
			rec.CardToken = token
		}
		cards.mu.Lock()
		cards.cards[rec.CardToken] = c
		cards.mu.Unlock()
		return RecordAndChargeInput{Record: rec, Charge: AuthoriseInput{Connector: simacquirer.Name, CardToken: rec.CardToken,
			IdempotencyKey: "order:M1:A1:" + orderNo + ":authorise", Reference: txID, Amount: 1234, Currency: "USD", Capture: true}}
	}
	charges := func(orderNo string) int {
		n := 0
		for _, c := range sim.Charges() {
			if c.IdempotencyKey == "order:M1:A1:"+orderNo+":authorise" {
				n++
			}
		}
		return n
	}

	tests := []struct {
		name        string
		in          RecordAndChargeInput
		times       int
		wantErr     bool
		wantAction  string
		wantCharged bool
		wantDecline string
	}{
		{"approved, charged once though the step ran twice", input("3000000000000000001", "RC-1", "4242424242424242", "card-ok-1"), 2, false, risk.Accept, true, ""},
		{"declined by the acquirer", input("3000000000000000002", "RC-2", "4000000000000002", "card-ok-2"), 1, false, risk.Accept, true, "do_not_honor"},
		{"refused by the risk check, not charged", input("3000000000000000003", "RC-3", "4242424242424242", "card-blocked"), 1, false, risk.Reject, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got RecordAndChargeResult
			for range tc.times {
				if got, err = a.RecordAndCharge(t.Context(), tc.in); err != nil {
					t.Fatal(err)
				}
			}
			if got.Record.Risk == nil || got.Record.Risk.Action != tc.wantAction {
				t.Fatalf("verdict = %+v, want %s", got.Record.Risk, tc.wantAction)
			}
			if !tc.wantCharged {
				if got.Charge != nil || charges(tc.in.Record.OrderNo) != 0 {
					t.Fatalf("charge = %+v, simulator charges %d, want none", got.Charge, charges(tc.in.Record.OrderNo))
				}
				return
			}
			if got.Charge == nil || got.Charge.Outcome == nil {
				t.Fatalf("charge = %+v, want an outcome", got.Charge)
			}
			if o := got.Charge.Outcome; o.Approved != (tc.wantDecline == "") || string(o.DeclineCode) != tc.wantDecline || o.Connector != simacquirer.Name {
				t.Errorf("outcome = %+v, want approved %t decline %q", o, tc.wantDecline == "", tc.wantDecline)
			}
			if n := charges(tc.in.Record.OrderNo); n != 1 {
				t.Errorf("simulator holds %d charges of the order, want 1", n)
			}
		})
	}
	t.Run("a later attempt of the activity records and leaves the charge to the workflow", func(t *testing.T) {
		in := input("3000000000000000004", "RC-4", "4242424242424242", "card-ok-4")
		got, err := a.recordAndCharge(t.Context(), in, false)
		if err != nil {
			t.Fatal(err)
		}
		if got.Record.Risk == nil || got.Record.Risk.Action != risk.Accept || !reflect.DeepEqual(got.Charge, &ChargeAttempt{Retry: true}) {
			t.Fatalf("result = %+v (risk %+v, charge %+v), want accept and try again", got, got.Record.Risk, got.Charge)
		}
		if n := charges("RC-4"); n != 0 {
			t.Errorf("simulator holds %d charges, want none", n)
		}
	})
	t.Run("a card not in the vault: recorded, and the charge ends without an acquirer", func(t *testing.T) {
		in := input("3000000000000000005", "RC-5", "4242424242424242", "card-ok-5")
		in.Record.CardToken, in.Charge.CardToken = "tok-not-in-the-vault", "tok-not-in-the-vault"
		got, err := a.RecordAndCharge(t.Context(), in)
		if err != nil {
			t.Fatal(err)
		}
		if got.Record.Risk == nil || got.Record.Risk.Action != risk.Accept || got.Charge == nil || got.Charge.ErrType != ErrTypeCardUnavailable {
			t.Fatalf("result = %+v (risk %+v, charge %+v), want accept and %s", got, got.Record.Risk, got.Charge, ErrTypeCardUnavailable)
		}
		if n := charges("RC-5"); n != 0 {
			t.Errorf("simulator holds %d charges, want none", n)
		}
	})
	t.Run("an order under another order's transaction id is neither recorded nor charged", func(t *testing.T) {
		in := input("3000000000000000001", "RC-9", "4242424242424242", "card-ok-9")
		_, err := a.RecordAndCharge(t.Context(), in)
		var appErr *temporal.ApplicationError
		if !errors.As(err, &appErr) || appErr.Type() != ErrTypeTransactionIDConflict {
			t.Fatalf("error = %v, want %s", err, ErrTypeTransactionIDConflict)
		}
		if n := charges("RC-9"); n != 0 {
			t.Errorf("simulator holds %d charges, want none", n)
		}
	})
}
