package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/paygate/paygate/internal/adapters/payoutrerun"
	"github.com/paygate/paygate/models"
)

// fakeReruns records what the admin API asked of the re-run service.
type fakeReruns struct {
	planned []models.PayoutSelection
	runs    []payoutrerun.Request
	shown   []int64
}

func (f *fakeReruns) Plan(_ context.Context, sel models.PayoutSelection) ([]payoutrerun.Item, error) {
	f.planned = append(f.planned, sel)
	return []payoutrerun.Item{{PayoutID: "payout/M1/r1", Reason: payoutrerun.ReasonNotFound}}, nil
}

func (f *fakeReruns) Resume(context.Context, int64) (*models.PayoutRerun, []payoutrerun.Item, error) {
	return &models.PayoutRerun{ID: 7}, nil, nil
}

func (f *fakeReruns) Run(_ context.Context, req payoutrerun.Request, items []payoutrerun.Item, _ payoutrerun.Progress) (payoutrerun.Result, error) {
	f.runs = append(f.runs, req)
	return payoutrerun.Result{Rerun: models.PayoutRerun{ID: 1, DryRun: req.DryRun, Total: len(items), Skipped: len(items)}}, nil
}

func (f *fakeReruns) List(context.Context, int) ([]models.PayoutRerun, error) {
	return []models.PayoutRerun{{ID: 1, RequestedBy: "alice"}}, nil
}

// Show knows batch 7 (one started payout) and fails for batch 9 as a
// database that is down would.
func (f *fakeReruns) Show(_ context.Context, id int64) (payoutrerun.Result, error) {
	f.shown = append(f.shown, id)
	switch id {
	case 7:
		return payoutrerun.Result{
			Rerun: models.PayoutRerun{ID: 7, RequestedBy: "alice", Source: "cli", Status: models.RerunFinished, Total: 1, Started: 1},
			Items: []models.PayoutRerunItem{{RerunID: 7, PayoutID: "payout/M1/r1", MerchantID: "M1", PaymentCurrency: "EUR",
				PaymentAmount: 12345, FailureType: "RAIL_UNAVAILABLE", Outcome: models.ItemStarted, Run: 2, RunID: "run-1"}},
		}, nil
	case 9:
		return payoutrerun.Result{}, errors.New("connection refused")
	}
	return payoutrerun.Result{}, fmt.Errorf("%w: %d", models.ErrRerunNotFound, id)
}

func TestAdminPayoutRerun(t *testing.T) {
	bearer := "Bearer " + testAdminToken
	cases := []struct {
		name, method, path, auth, body string
		wantHTTP                       int
		wantRun                        bool
	}{
		{name: "no token", method: "POST", path: "/admin/payouts/rerun", body: `{"ids":["r1"]}`, wantHTTP: 401},
		{name: "empty selection", method: "POST", path: "/admin/payouts/rerun", auth: bearer, body: `{}`, wantHTTP: 400},
		{name: "ids and filter", method: "POST", path: "/admin/payouts/rerun", auth: bearer, body: `{"ids":["r1"],"merchant_id":"M1"}`, wantHTTP: 400},
		{name: "bad time", method: "POST", path: "/admin/payouts/rerun", auth: bearer, body: `{"from":"yesterday"}`, wantHTTP: 400},
		{name: "from after to", method: "POST", path: "/admin/payouts/rerun", auth: bearer,
			body: `{"from":"2026-11-02T00:00:00Z","to":"2026-11-01T00:00:00Z"}`, wantHTTP: 400},
		{name: "unknown failure type", method: "POST", path: "/admin/payouts/rerun", auth: bearer, body: `{"failure_type":"OOPS"}`, wantHTTP: 400},
		{name: "unknown field", method: "POST", path: "/admin/payouts/rerun", auth: bearer, body: `{"idz":["r1"]}`, wantHTTP: 400},
		{name: "resume with a selection", method: "POST", path: "/admin/payouts/rerun", auth: bearer, body: `{"resume":3,"ids":["r1"]}`, wantHTTP: 400},
		{name: "dry-run by ids", method: "POST", path: "/admin/payouts/rerun", auth: bearer, body: `{"ids":["r1"],"dry_run":true}`, wantHTTP: 200, wantRun: true},
		{name: "by filter", method: "POST", path: "/admin/payouts/rerun", auth: bearer,
			body: `{"merchant_id":"M1","failure_type":"RAIL_UNAVAILABLE","from":"2026-11-01T00:00:00Z"}`, wantHTTP: 200, wantRun: true},
		{name: "list", method: "GET", path: "/admin/payouts/reruns?limit=5", auth: bearer, wantHTTP: 200},
		{name: "list bad limit", method: "GET", path: "/admin/payouts/reruns?limit=x", auth: bearer, wantHTTP: 400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake := &fakeReruns{}
			srv := &API{Token: testAdminToken, Redeliver: &fakeRedeliverer{}, PayoutReruns: fake, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
			req := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			rec := httptest.NewRecorder()
			routed(srv).ServeHTTP(rec, req)
			if rec.Code != tc.wantHTTP {
				t.Fatalf("answer %d %s, want %d", rec.Code, rec.Body.String(), tc.wantHTTP)
			}
			if (len(fake.runs) == 1) != tc.wantRun {
				t.Fatalf("runs = %+v, want run=%t", fake.runs, tc.wantRun)
			}
			if tc.wantRun && (fake.runs[0].By != "admin-api" || fake.runs[0].Source != "api") {
				t.Errorf("run = %+v, want by admin-api from api", fake.runs[0])
			}
		})
	}
}

// TestAdminShowPayoutRerun: GET /admin/payouts/reruns/{id} answers the
// batch and its items; a bad id is 400 without a lookup, an unknown batch
// 404, a store that fails 503, and never 500.
func TestAdminShowPayoutRerun(t *testing.T) {
	bearer := "Bearer " + testAdminToken
	cases := []struct {
		name, path, auth string
		wantHTTP         int
		wantShown        []int64
	}{
		{name: "no token", path: "/admin/payouts/reruns/7", wantHTTP: 401},
		{name: "wrong token", path: "/admin/payouts/reruns/7", auth: "Bearer nope", wantHTTP: 401},
		{name: "found", path: "/admin/payouts/reruns/7", auth: bearer, wantHTTP: 200, wantShown: []int64{7}},
		{name: "not found", path: "/admin/payouts/reruns/8", auth: bearer, wantHTTP: 404, wantShown: []int64{8}},
		{name: "store down", path: "/admin/payouts/reruns/9", auth: bearer, wantHTTP: 503, wantShown: []int64{9}},
		{name: "not a number", path: "/admin/payouts/reruns/abc", auth: bearer, wantHTTP: 400},
		{name: "zero", path: "/admin/payouts/reruns/0", auth: bearer, wantHTTP: 400},
		{name: "negative", path: "/admin/payouts/reruns/-7", auth: bearer, wantHTTP: 400},
		{name: "overflow", path: "/admin/payouts/reruns/99999999999999999999", auth: bearer, wantHTTP: 400},
		{name: "fraction", path: "/admin/payouts/reruns/7.5", auth: bearer, wantHTTP: 400},
		{name: "padded", path: "/admin/payouts/reruns/%207", auth: bearer, wantHTTP: 400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake := &fakeReruns{}
			srv := &API{Token: testAdminToken, Redeliver: &fakeRedeliverer{}, PayoutReruns: fake, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
			req := httptest.NewRequest("GET", tc.path, nil)
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			rec := httptest.NewRecorder()
			routed(srv).ServeHTTP(rec, req)
			if rec.Code != tc.wantHTTP {
				t.Fatalf("answer %d %s, want %d", rec.Code, rec.Body.String(), tc.wantHTTP)
			}
			if fmt.Sprint(fake.shown) != fmt.Sprint(tc.wantShown) {
				t.Errorf("looked up %v, want %v", fake.shown, tc.wantShown)
			}
			if tc.wantHTTP != 200 {
				return
			}
			const want = `{"rerun":{"id":7,"requested_by":"alice","source":"cli","selection":{},"dry_run":false,` +
				`"status":"finished","total":1,"planned":0,"started":1,"skipped":0,"errors":0,"created_at":"0001-01-01T00:00:00Z"},` +
				`"items":[{"payout_id":"payout/M1/r1","merchant_id":"M1","payment_currency":"EUR","payment_amount":12345,` +
				`"failure_type":"RAIL_UNAVAILABLE","outcome":"started","run":2,"run_id":"run-1","updated_at":"0001-01-01T00:00:00Z"}]}`
			var got, exp any
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			_ = json.Unmarshal([]byte(want), &exp)
			if fmt.Sprint(got) != fmt.Sprint(exp) {
				t.Errorf("body:\n%s\nwant:\n%s", rec.Body.String(), want)
			}
		})
	}
}
