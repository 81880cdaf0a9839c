package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/domain/notify"
	"github.com/paygate/paygate/internal/domain/signing"
)

func TestVerifyNotificationCommand(t *testing.T) {
	const key = "k3y-for-tests-0123456789abcdef"
	sent := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f := notify.Fields{
		"merchant_id": "10086", "account_id": "10086001", "transaction_id": "1379868670095785984",
		"order_no": "ORD-2026-0002", "currency": "USD", "amount": "12.34",
		"order_status": "1", "result_info": "0000:Success", "notify_type": "payment", "notify_id": "N1",
	}
	f["encryption_data"] = signing.SignPaymentResult(key, signing.PaymentResultFrom(f.Get))
	body := notify.Body(f)
	h := notify.Sign(key, "msg_N1", sent, body)
	changed := bytes.Replace(body, []byte("amount=12.34"), []byte("amount=12.35"), 1)

	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bodyPath := write("body", body)
	keyPath := write("merchant.json", []byte(`{"merchant_id":"10086","sign_key":"`+key+`"}`))
	headersPath := write("headers", []byte("POST /notify HTTP/1.1\r\nHost: shop.example\r\n"+
		"Webhook-Id: "+h.Get("webhook-id")+"\r\nwebhook-timestamp: "+h.Get("webhook-timestamp")+
		"\r\nwebhook-signature: v1,AAAA "+h.Get("webhook-signature")+"\r\n\r\n"+string(body)))

	hdr := []string{"-id", h.Get("webhook-id"), "-timestamp", h.Get("webhook-timestamp"), "-signature", h.Get("webhook-signature")}
	now := func(d time.Duration) []string { return []string{"-now", sent.Add(d).Format(time.RFC3339)} }
	args := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}

	tests := []struct {
		name    string
		args    []string
		stdin   []byte
		wantErr error // nil: prints "valid"
		errText string
	}{
		{"valid, body only, stdin", []string{"-key", key}, body, nil, ""},
		{"valid, body file, headers flags", args([]string{"-key", key, "-body", bodyPath}, hdr, now(time.Minute)), nil, nil, ""},
		{"valid, key file, headers file", args([]string{"-key-file", keyPath, "-body", "-", "-headers", headersPath}, now(0)), body, nil, ""},
		{"body changed, body only", []string{"-key", key}, changed, notify.ErrBadEncryptionData, "body:"},
		{"body changed, with headers", args([]string{"-key", key}, hdr, now(0)), changed, notify.ErrBadSignature, "webhook headers:"},
		{"trailing newline hinted", args([]string{"-key", key}, hdr, now(0)), append(append([]byte{}, body...), '\n'), notify.ErrBadSignature, "ends with a newline"},
		{"stale", args([]string{"-key", key}, hdr, now(5*time.Minute+time.Second)), body, notify.ErrStaleTimestamp, "webhook headers:"},
		{"from the future", args([]string{"-key", key}, hdr, now(-5*time.Minute-time.Second)), body, notify.ErrStaleTimestamp, ""},
		{"stale accepted with wider tolerance", args([]string{"-key", key, "-tolerance", "10m"}, hdr, now(6*time.Minute)), body, nil, ""},
		{"wrong key, with headers", args([]string{"-key", "another-key"}, hdr, now(0)), body, notify.ErrBadSignature, ""},
		{"wrong key, body only", []string{"-key", "another-key"}, body, notify.ErrBadEncryptionData, ""},
		{"no key", nil, body, nil, "a key is needed"},
		{"incomplete header flags", []string{"-key", key, "-id", "msg_N1"}, body, nil, "go together"},
		{"header flags and file", args([]string{"-key", key, "-headers", headersPath}, hdr), body, nil, "not both"},
		{"bad -now", []string{"-key", key, "-now", "yesterday"}, body, nil, "-now"},
		{"empty body", []string{"-key", key}, nil, nil, "empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := runVerifyNotification(tt.args, bytes.NewReader(tt.stdin), &out)
			if tt.wantErr == nil && tt.errText == "" {
				if err != nil {
					t.Fatalf("err = %v, want nil", err)
				}
				if out.String() != "valid\n" {
					t.Fatalf("stdout = %q, want %q", out.String(), "valid\n")
				}
				return
			}
			if err == nil {
				t.Fatalf("succeeded, printed %q", out.String())
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.errText) {
				t.Errorf("err = %q, want it to mention %q", err, tt.errText)
			}
			if out.Len() != 0 {
				t.Errorf("stdout = %q on failure", out.String())
			}
		})
	}
}

func TestParseHeaderLines(t *testing.T) {
	h, err := parseHeaderLines([]byte("HTTP/1.1 200 OK\nwebhook-id: a\nWebhook-Signature: v1,x\nwebhook-signature: v1,y\n\nbody: not a header\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Get("Webhook-Id"); got != "a" {
		t.Errorf("webhook-id = %q, want a", got)
	}
	if got := strings.Join(h.Values("webhook-signature"), "|"); got != "v1,x|v1,y" {
		t.Errorf("webhook-signature = %q, want v1,x|v1,y", got)
	}
	if h.Get("body") != "" {
		t.Error("lines after the blank line were read as headers")
	}
	if _, err := parseHeaderLines([]byte("webhook-id: a\nnot a header\n")); err == nil {
		t.Error("a line without a colon was accepted")
	}
}
