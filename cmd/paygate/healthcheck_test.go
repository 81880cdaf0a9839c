package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestHealthcheck(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			w.WriteHeader(http.StatusOK)
		case "/slow":
			time.Sleep(healthcheckTimeout + time.Second)
		default:
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	tests := []struct {
		name    string
		args    []string
		wantErr bool
	}{
		{"healthy", []string{srv.URL + "/ok"}, false},
		{"not ready", []string{srv.URL + "/down"}, true},
		{"hung", []string{srv.URL + "/slow"}, true},
		{"nothing listening", []string{"http://127.0.0.1:1/healthz"}, true},
		{"no URL", nil, true},
		{"not a URL", []string{"::"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := runHealthcheck(context.Background(), tc.args)
			if (err != nil) != tc.wantErr {
				t.Errorf("err = %v, want error %v", err, tc.wantErr)
			}
		})
	}
}
