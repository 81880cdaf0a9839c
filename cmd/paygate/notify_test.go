package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/models"
)

func TestParseResendFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    resendOptions
		wantErr string // a substring of the error; "" for none
	}{
		{
			name: "by order",
			args: []string{"-merchant-id", "10086", "-account-id", "10086001", "-order", "ORD-1, ORD-2,"},
			want: resendOptions{Selection: models.NotificationSelection{MerchantID: "10086", AccountID: "10086001", OrderNos: []string{"ORD-1", "ORD-2"}}},
		},
		{
			name: "by notify id, waiting",
			args: []string{"-id", "1379868670095785984-n01,1379868670095785984-n02", "-wait"},
			want: resendOptions{Wait: true, Selection: models.NotificationSelection{NotifyIDs: []string{"1379868670095785984-n01", "1379868670095785984-n02"}}},
		},
		{
			name: "by RFC 3339 range",
			args: []string{"-account-id", "10086001", "-from", "2026-06-14T00:00:00Z", "-to", "2026-06-15T00:00:00Z"},
			want: resendOptions{Selection: models.NotificationSelection{AccountID: "10086001",
				From: time.Date(2026, 6, 14, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 6, 15, 0, 0, 0, 0, time.UTC)}},
		},
		{
			name: "by 14-digit range",
			args: []string{"-from", "20260614000000", "-to", "20260615123000"},
			want: resendOptions{Selection: models.NotificationSelection{
				From: time.Date(2026, 6, 14, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 6, 15, 12, 30, 0, 0, time.UTC)}},
		},
		{
			name: "from alone",
			args: []string{"-merchant-id", "10086", "-from", "20260614000000"},
			want: resendOptions{Selection: models.NotificationSelection{MerchantID: "10086", From: time.Date(2026, 6, 14, 0, 0, 0, 0, time.UTC)}},
		},
		{name: "no selection", args: nil, wantErr: "one of -order, -id, -from/-to is required"},
		{name: "account alone", args: []string{"-merchant-id", "10086", "-account-id", "10086001"}, wantErr: "one of -order, -id, -from/-to is required"},
		{name: "blank order list", args: []string{"-account-id", "10086001", "-order", " , "}, wantErr: "one of -order, -id, -from/-to is required"},
		{name: "order without account", args: []string{"-merchant-id", "10086", "-order", "ORD-1"}, wantErr: "-order requires -account-id"},
		{name: "bad from", args: []string{"-from", "2026-06-14"}, wantErr: `-from: "2026-06-14" is neither RFC 3339 nor yyyyMMddHHmmss`},
		{name: "bad to", args: []string{"-to", "202606150000"}, wantErr: `-to: "202606150000" is neither RFC 3339 nor yyyyMMddHHmmss`},
		{name: "range the wrong way round", args: []string{"-from", "20260615000000", "-to", "20260614000000"}, wantErr: "-from must be before -to"},
		{name: "empty range", args: []string{"-from", "20260615000000", "-to", "2026-06-15T00:00:00Z"}, wantErr: "-from must be before -to"},
		{name: "stray argument", args: []string{"-id", "a-n01", "extra"}, wantErr: `unexpected argument "extra"`},
		{name: "unknown flag", args: []string{"-orders", "ORD-1"}, wantErr: "flag provided but not defined: -orders"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseResendFlags(tc.args, io.Discard)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !got.Selection.From.Equal(tc.want.Selection.From) || !got.Selection.To.Equal(tc.want.Selection.To) {
				t.Errorf("range [%s, %s), want [%s, %s)", got.Selection.From, got.Selection.To, tc.want.Selection.From, tc.want.Selection.To)
			}
			got.Selection.From, got.Selection.To = time.Time{}, time.Time{}
			tc.want.Selection.From, tc.want.Selection.To = time.Time{}, time.Time{}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("options %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestNotifyCommandUsage covers the refusals made before anything is opened.
func TestNotifyCommandUsage(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"no subcommand", []string{"notify"}, "usage: paygate notify resend [flags]"},
		{"unknown subcommand", []string{"notify", "send"}, "usage: paygate notify resend [flags]"},
		{"resend without selection", []string{"notify", "resend", "-account-id", "10086001"}, "one of -order, -id, -from/-to is required"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := run(tc.args, &out)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
			}
			if out.Len() != 0 {
				t.Errorf("printed %q, want nothing", out.String())
			}
		})
	}
	if err := runNotify(context.Background(), nil, io.Discard, nil); !errors.Is(err, errNotifyUsage) {
		t.Errorf("runNotify() = %v, want errNotifyUsage", err)
	}
}
