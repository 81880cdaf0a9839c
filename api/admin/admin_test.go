package admin

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/paygate/paygate/internal/adapters/redeliver"
	"github.com/paygate/paygate/internal/domain/notify"
	"github.com/paygate/paygate/models"
)

const testAdminToken = "admin-token-for-tests-0123456789"

// fakeRedeliverer records what it was asked to resend.
type fakeRedeliverer struct {
	res      redeliver.Result
	err      error
	calls    int
	sel      models.NotificationSelection
	schedule notify.Schedule
}

func (f *fakeRedeliverer) Start(_ context.Context, sel models.NotificationSelection, schedule notify.Schedule) (redeliver.Result, error) {
	f.calls++
	f.sel, f.schedule = sel, schedule
	return f.res, f.err
}

func TestAdminResend(t *testing.T) {
	schedule := notify.Schedule{Initial: 2 * time.Second, Max: time.Minute, Horizon: 10 * time.Minute}
	started := redeliver.Result{WorkflowID: "redeliver/ABC", NotifyIDs: []string{"1379868670095785984-n01", "1379868670095785984-n02"}}
	bearer := "Bearer " + testAdminToken
	cases := []struct {
		name     string
		token    string // the configured token; "" turns the API off
		auth     string
		body     string
		res      redeliver.Result
		err      error
		wantHTTP int
		wantBody string
		wantSel  *models.NotificationSelection // nil: the starter is not called
	}{
		{name: "off without a token", auth: bearer, body: `{"notify_ids":["a"]}`, wantHTTP: 404, wantBody: "404 page not found"},
		{name: "missing token", token: testAdminToken, body: `{"notify_ids":["a"]}`, wantHTTP: 401, wantBody: `{"error":"unauthorised"}`},
		{name: "wrong token", token: testAdminToken, auth: "Bearer admin-token-for-tests-0123456780", body: `{"notify_ids":["a"]}`, wantHTTP: 401, wantBody: `{"error":"unauthorised"}`},
		{name: "token prefix", token: testAdminToken, auth: "Bearer admin", body: `{"notify_ids":["a"]}`, wantHTTP: 401, wantBody: `{"error":"unauthorised"}`},
		{name: "not a bearer", token: testAdminToken, auth: "Basic " + testAdminToken, body: `{"notify_ids":["a"]}`, wantHTTP: 401, wantBody: `{"error":"unauthorised"}`},
		{name: "bad JSON", token: testAdminToken, auth: bearer, body: `{"notify_ids":`, wantHTTP: 400, wantBody: `{"error":"bad request body: unexpected EOF"}`},
		{name: "unknown field", token: testAdminToken, auth: bearer, body: `{"order":"ORD-1"}`, wantHTTP: 400, wantBody: `{"error":"bad request body: json: unknown field \"order\""}`},
		{name: "empty selection", token: testAdminToken, auth: bearer, body: `{"merchant_id":"10086","account_id":"10086001","order_nos":[" "]}`,
			wantHTTP: 400, wantBody: `{"error":"select order_nos, notify_ids, or a from/to time range"}`},
		{name: "order_nos without account", token: testAdminToken, auth: bearer, body: `{"merchant_id":"10086","order_nos":["ORD-1"]}`,
			wantHTTP: 400, wantBody: `{"error":"order_nos need account_id"}`},
		{name: "bad time", token: testAdminToken, auth: bearer, body: `{"from":"20260615000000"}`, wantHTTP: 400, wantBody: `{"error":"from: want an RFC 3339 time"}`},
		{name: "range the wrong way round", token: testAdminToken, auth: bearer, body: `{"from":"2026-06-15T00:00:00Z","to":"2026-06-14T00:00:00Z"}`,
			wantHTTP: 400, wantBody: `{"error":"from must be before to"}`},
		{
			name: "nothing to resend", token: testAdminToken, auth: bearer, err: redeliver.ErrNothingToResend,
			body: `{"notify_ids":["nope-n01"]}`, wantHTTP: 404, wantBody: `{"error":"nothing to resend"}`,
			wantSel: &models.NotificationSelection{NotifyIDs: []string{"nope-n01"}},
		},
		{
			name: "temporal down", token: testAdminToken, auth: bearer, err: errors.New("dial temporal: refused"),
			body: `{"notify_ids":["a-n01"]}`, wantHTTP: 503, wantBody: `{"error":"redelivery unavailable, try again"}`,
			wantSel: &models.NotificationSelection{NotifyIDs: []string{"a-n01"}},
		},
		{
			name: "started by order", token: testAdminToken, auth: bearer, res: started,
			body:     `{"merchant_id":"10086","account_id":"10086001","order_nos":["ORD-1"," ORD-2 "]}`,
			wantHTTP: 202, wantBody: `{"workflow_id":"redeliver/ABC","notify_ids":["1379868670095785984-n01","1379868670095785984-n02"]}`,
			wantSel: &models.NotificationSelection{MerchantID: "10086", AccountID: "10086001", OrderNos: []string{"ORD-1", "ORD-2"}},
		},
		{
			name: "started by time range", token: testAdminToken, auth: bearer, res: started,
			body:     `{"account_id":"10086001","from":"2026-06-14T00:00:00Z","to":"2026-06-15T02:00:00+02:00"}`,
			wantHTTP: 202, wantBody: `{"workflow_id":"redeliver/ABC","notify_ids":["1379868670095785984-n01","1379868670095785984-n02"]}`,
			wantSel: &models.NotificationSelection{AccountID: "10086001",
				From: time.Date(2026, 6, 14, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 6, 15, 0, 0, 0, 0, time.UTC)},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake := &fakeRedeliverer{res: tc.res, err: tc.err}
			srv := &API{Token: tc.token, Redeliver: fake, Schedule: schedule, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
			req := httptest.NewRequest(http.MethodPost, "/admin/notifications/resend", strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			rec := httptest.NewRecorder()
			routed(srv).ServeHTTP(rec, req)
			if rec.Code != tc.wantHTTP || strings.TrimSpace(rec.Body.String()) != tc.wantBody {
				t.Fatalf("answer %d %s, want %d %s", rec.Code, rec.Body.String(), tc.wantHTTP, tc.wantBody)
			}
			if tc.wantSel == nil {
				if fake.calls != 0 {
					t.Fatalf("redelivery started %d times, want none", fake.calls)
				}
				return
			}
			if fake.calls != 1 {
				t.Fatalf("redelivery started %d times, want 1", fake.calls)
			}
			if !fake.sel.From.Equal(tc.wantSel.From) || !fake.sel.To.Equal(tc.wantSel.To) {
				t.Errorf("range [%s, %s), want [%s, %s)", fake.sel.From, fake.sel.To, tc.wantSel.From, tc.wantSel.To)
			}
			got, want := fake.sel, *tc.wantSel
			got.From, got.To, want.From, want.To = time.Time{}, time.Time{}, time.Time{}, time.Time{}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("selection %+v, want %+v", got, want)
			}
			if fake.schedule != schedule {
				t.Errorf("schedule %+v, want %+v", fake.schedule, schedule)
			}
		})
	}
}

// routed is the admin API on a router of its own, under /admin as the
// gateway puts it.
func routed(a *API) http.Handler {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	a.Routes(r.Group("/admin"))
	return r
}
