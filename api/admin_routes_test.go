package api

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/paygate/paygate/api/admin"
	"github.com/paygate/paygate/internal/adapters/redeliver"
	"github.com/paygate/paygate/internal/domain/notify"
	"github.com/paygate/paygate/models"
)

const adminToken = "admin-token-for-tests-0123456789"

// noRedeliveries starts nothing.
type noRedeliveries struct{}

func (noRedeliveries) Start(context.Context, models.NotificationSelection, notify.Schedule) (redeliver.Result, error) {
	return redeliver.Result{}, nil
}

// TestAdminNotUnderV1 checks the admin route lives only under /admin.
func TestAdminNotUnderV1(t *testing.T) {
	srv := &Server{
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Admin:  &admin.API{Token: adminToken, Redeliver: noRedeliveries{}},
	}
	for _, path := range []string{"/v1/admin/notifications/resend", "/v1/notifications/resend"} {
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(`{"notify_ids":["a"]}`))
		req.Header.Set("Authorization", "Bearer "+adminToken)
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, req)
		if rec.Code != http.StatusNotFound {
			t.Errorf("POST %s = %d, want 404", path, rec.Code)
		}
	}
	// A server without an Admin has the admin API off.
	srv.Admin = nil
	req := httptest.NewRequest(http.MethodPost, "/admin/notifications/resend", strings.NewReader(`{"notify_ids":["a"]}`))
	req.Header.Set("Authorization", "Bearer "+adminToken)
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusNotFound || rec.Body.String() != "404 page not found" {
		t.Errorf("without Admin: %d %q, want 404 \"404 page not found\"", rec.Code, rec.Body.String())
	}
}
