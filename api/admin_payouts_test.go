package api

import (
	"context"
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
			srv := &Server{
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
				Admin:  &Admin{Token: testAdminToken, Redeliver: &fakeRedeliverer{}, PayoutReruns: fake},
			}
			req := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			rec := httptest.NewRecorder()
			srv.Handler().ServeHTTP(rec, req)
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
