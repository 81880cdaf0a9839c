package admin

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/paygate/paygate/models"
)

// fakeEraser records the erasures asked for; an email at down.example
// fails as a database that is down would.
type fakeEraser struct {
	asked []models.ErasureRequest
}

func (f *fakeEraser) Erase(_ context.Context, req models.ErasureRequest) (models.PersonalDataErasure, error) {
	f.asked = append(f.asked, req)
	if strings.HasSuffix(req.Email, "@down.example") {
		return models.PersonalDataErasure{}, errors.New("connection refused")
	}
	return models.PersonalDataErasure{ID: 4, Orders: 2, Payouts: 1, StoredCards: 1, VaultCards: 3, Open: 1}, nil
}

// TestAdminEraseShopper: POST /admin/shoppers/erase needs the admin token,
// who asks and whose data; it passes the request on with the asker recorded
// and answers the counts; a store that fails is 503, never 500.
func TestAdminEraseShopper(t *testing.T) {
	bearer := "Bearer " + testAdminToken
	cases := []struct {
		name, auth, body string
		wantHTTP         int
		wantBody         string
		want             *models.ErasureRequest
	}{
		{name: "no token", body: `{"email":"ada@example.com","by":"ops"}`, wantHTTP: 401},
		{name: "wrong token", auth: "Bearer nope", body: `{"email":"ada@example.com","by":"ops"}`, wantHTTP: 401},
		{name: "nobody named", auth: bearer, body: `{"by":"ops"}`, wantHTTP: 400, wantBody: "name an email or a transaction_id"},
		{name: "no asker", auth: bearer, body: `{"email":"ada@example.com"}`, wantHTTP: 400, wantBody: "by: name who asks"},
		{name: "not an email", auth: bearer, body: `{"email":"Ada <ada@example.com>","by":"ops"}`, wantHTTP: 400, wantBody: "email: want an address"},
		{name: "not a transaction id", auth: bearer, body: `{"transaction_id":"12a","by":"ops"}`, wantHTTP: 400, wantBody: "transaction_id: want"},
		{name: "unknown field", auth: bearer, body: `{"mail":"ada@example.com","by":"ops"}`, wantHTTP: 400, wantBody: "unknown field"},
		{name: "trailing data", auth: bearer, body: `{"email":"ada@example.com","by":"ops"} {}`, wantHTTP: 400, wantBody: "trailing data"},
		{name: "by email", auth: bearer, body: `{"email":" ada@example.com ","merchant_id":"M1","by":"dpo@merchant","reason":"ticket 12"}`,
			wantHTTP: 200, wantBody: `{"erasure_id":4,"orders":2,"payouts":1,"stored_cards":1,"vault_cards":3,"open":1}`,
			want: &models.ErasureRequest{MerchantID: "M1", Email: "ada@example.com", RequestedBy: "admin-api:dpo@merchant", Reason: "ticket 12"}},
		{name: "by transaction id", auth: bearer, body: `{"transaction_id":"1000000000000000001","by":"ops"}`, wantHTTP: 200,
			want: &models.ErasureRequest{TransactionID: "1000000000000000001", RequestedBy: "admin-api:ops"}},
		{name: "store down", auth: bearer, body: `{"email":"ada@down.example","by":"ops"}`, wantHTTP: 503, wantBody: "erasure unavailable",
			want: &models.ErasureRequest{Email: "ada@down.example", RequestedBy: "admin-api:ops"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake := &fakeEraser{}
			srv := &API{Token: testAdminToken, Redeliver: &fakeRedeliverer{}, Erasures: fake, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
			req := httptest.NewRequest("POST", "/admin/shoppers/erase", strings.NewReader(tc.body))
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			rec := httptest.NewRecorder()
			routed(srv).ServeHTTP(rec, req)
			if rec.Code != tc.wantHTTP || !strings.Contains(rec.Body.String(), tc.wantBody) {
				t.Fatalf("answer %d %s, want %d with %q", rec.Code, rec.Body.String(), tc.wantHTTP, tc.wantBody)
			}
			switch {
			case tc.want == nil && len(fake.asked) > 0:
				t.Errorf("erased %+v, want nothing asked", fake.asked)
			case tc.want != nil && (len(fake.asked) != 1 || fake.asked[0] != *tc.want):
				t.Errorf("asked %+v, want %+v", fake.asked, *tc.want)
			}
		})
	}
}
