package api_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/api/methods"
	"github.com/paygate/paygate/api/operations"
	"github.com/paygate/paygate/api/payments"
	"github.com/paygate/paygate/api/payouts"
	"github.com/paygate/paygate/api/queries"
	"github.com/paygate/paygate/api/subscriptions"
)

// Every test server of package api serves the capability packages too.
func init() {
	api.SetTestCapabilities(func(s *api.Server, d api.TestDoubles) []api.Capability {
		pay := &payments.Handler{Gate: s, Orders: d.Orders.(payments.Orders), Vault: d.Vault.(payments.CardVault)}
		return []api.Capability{pay, operations.New(s, d.Ops.(operations.OrderOps)), payouts.New(s, nil), subscriptions.New(s, nil), methods.New(s), queries.New(s)}
	})
}

// TestRecordedCorpusAnswersAlike: every request of the corpus is answered
// byte for byte as recorded (status, content type and body), so that moving
// the API's code around changes nothing a merchant sees. An intended change
// of an answer is recorded again with -update-corpus and shows in the diff.
// It lives outside package api so that the servers serve the capability
// packages too, as the gateway does (see init).
func TestRecordedCorpusAnswersAlike(t *testing.T) {
	got := api.RecordCorpus(t)
	if *api.UpdateCorpus {
		if err := os.WriteFile(api.CorpusFile, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(api.CorpusFile)
	if err != nil {
		t.Fatalf("read the recorded corpus: %v (record it with -update-corpus)", err)
	}
	if bytes.Equal(got, want) {
		return
	}
	wantCases, gotCases := strings.Split(string(want), "\n=== "), strings.Split(string(got), "\n=== ")
	for i := range max(len(wantCases), len(gotCases)) {
		var w, g string
		if i < len(wantCases) {
			w = wantCases[i]
		}
		if i < len(gotCases) {
			g = gotCases[i]
		}
		if w != g {
			t.Errorf("answer differs from the recording:\n--- recorded\n%s\n--- now\n%s", w, g)
		}
	}
}
