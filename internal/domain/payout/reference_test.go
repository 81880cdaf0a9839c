package payout

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

func TestParseRequestID(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    string
		wantErr bool
	}{
		{"v4", "3f2b8c1e-6a4d-4c1b-9e8f-2d7a5b6c9e01", "3f2b8c1e-6a4d-4c1b-9e8f-2d7a5b6c9e01", false},
		{"v7", "01890a5d-ac96-774b-bcce-b302099a8057", "01890a5d-ac96-774b-bcce-b302099a8057", false},
		{"upper case", "3F2B8C1E-6A4D-4C1B-9E8F-2D7A5B6C9E01", "3f2b8c1e-6a4d-4c1b-9e8f-2d7a5b6c9e01", false},
		{"padded", "\t3f2b8c1e-6a4d-4c1b-9e8f-2d7a5b6c9e01 ", "3f2b8c1e-6a4d-4c1b-9e8f-2d7a5b6c9e01", false},
		{"max UUID", "ffffffff-ffff-ffff-ffff-ffffffffffff", "ffffffff-ffff-ffff-ffff-ffffffffffff", false},
		{"nil UUID", "00000000-0000-0000-0000-000000000000", "", true},
		{"no hyphens", "3f2b8c1e6a4d4c1b9e8f2d7a5b6c9e01", "", true},
		{"hyphen moved", "3f2b8c1-e6a4d-4c1b-9e8f-2d7a5b6c9e01", "", true},
		{"braces", "{3f2b8c1e-6a4d-4c1b-9e8f-2d7a5b6c9e01}", "", true},
		{"urn", "urn:uuid:3f2b8c1e-6a4d-4c1b-9e8f-2d7a5b6c9e01", "", true},
		{"one short", "3f2b8c1e-6a4d-4c1b-9e8f-2d7a5b6c9e0", "", true},
		{"non-hex", "3f2b8c1e-6a4d-4c1b-9e8f-2d7a5b6c9ezz", "", true},
		{"full-width digit", "3f2b8c1e-6a4d-4c1b-9e8f-2d7a5b6c9e０", "", true},
		{"empty", "", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseRequestID(tc.in)
			if (err != nil) != tc.wantErr || (err != nil && !errors.Is(err, ErrRequestID)) {
				t.Fatalf("ParseRequestID(%q) error = %v, want error %t", tc.in, err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("ParseRequestID(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestNewShortReference(t *testing.T) {
	created := time.Date(2026, time.March, 14, 23, 30, 0, 0, time.FixedZone("UTC-5", -5*3600)) // 2026-03-15 04:30 UTC
	tests := []struct {
		name   string
		random []byte
		want   string
	}{
		// 0 → A, 25 → Z, 26 → 0, 35 → 9, 36 → A again (36 mod 36), 251 → 251 mod 36 = 35 → 9.
		{"alphabet edges", append([]byte{0, 25, 26, 35, 36, 251}, make([]byte, 10)...), "20260315-AZ09A9"},
		// 252..255 are skipped so that every character is equally likely.
		{"bytes from 252 skipped", append([]byte{252, 253, 254, 255, 1, 2, 3, 4, 5, 6}, make([]byte, 6)...), "20260315-BCDEFG"},
		{"skipping into a second read", append(bytes.Repeat([]byte{255}, 13), append([]byte{7, 8, 9}, append(bytes.Repeat([]byte{255}, 13), 10, 11, 12)...)...), "20260315-HIJKLM"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := NewShortReference(created, bytes.NewReader(tc.random))
			if err != nil {
				t.Fatalf("NewShortReference = %v", err)
			}
			if got != tc.want {
				t.Errorf("NewShortReference = %q, want %q", got, tc.want)
			}
			if !ValidShortReference(got) {
				t.Errorf("ValidShortReference(%q) = false", got)
			}
		})
	}
}

func TestNewShortReferenceReadErrors(t *testing.T) {
	created := time.Date(2026, time.March, 14, 0, 0, 0, 0, time.UTC)
	if _, err := NewShortReference(created, bytes.NewReader([]byte{1, 2, 3})); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("short reader: error = %v, want io.ErrUnexpectedEOF", err)
	}
	boom := errors.New("boom")
	if _, err := NewShortReference(created, iotest.ErrReader(boom)); !errors.Is(err, boom) {
		t.Errorf("failing reader: error = %v, want boom", err)
	}
	// Only bytes that are all skipped: the reader runs dry, it never loops.
	if _, err := NewShortReference(created, bytes.NewReader(bytes.Repeat([]byte{255}, 64))); !errors.Is(err, io.EOF) {
		t.Errorf("all-skipped reader: error = %v, want io.EOF", err)
	}
}

func TestValidShortReference(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"20260314-AB12CD", true},
		{"20260314-000000", true},
		{"20260314-ab12cd", false},
		{"20260230-AB12CD", false},
		{"2026031-AB12CDE", false},
		{"20260314AB12CD", false},
		{"20260314-AB12C", false},
		{"20260314-AB12CDE", false},
		{"20260314_AB12CD", false},
		{"20260314-AB 2CD", false},
		{"", false},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			if got := ValidShortReference(tc.in); got != tc.want {
				t.Errorf("ValidShortReference(%q) = %t, want %t", tc.in, got, tc.want)
			}
		})
	}
}

func TestFormatTimestamp(t *testing.T) {
	tests := []struct {
		name string
		t    time.Time
		want string
	}{
		{"UTC shows +00:00, never Z", time.Date(2026, time.March, 14, 9, 26, 53, 0, time.UTC), "2026-03-14T09:26:53+00:00"},
		{"another zone is shown in UTC", time.Date(2026, time.March, 14, 18, 26, 53, 0, time.FixedZone("JST", 9*3600)), "2026-03-14T09:26:53+00:00"},
		{"the date follows UTC", time.Date(2026, time.March, 13, 23, 0, 0, 0, time.FixedZone("UTC-5", -5*3600)), "2026-03-14T04:00:00+00:00"},
		{"fractions of a second are dropped", time.Date(2026, time.March, 14, 9, 26, 53, 999_999_999, time.UTC), "2026-03-14T09:26:53+00:00"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := FormatTimestamp(tc.t)
			if got != tc.want {
				t.Errorf("FormatTimestamp = %q, want %q", got, tc.want)
			}
			if back, err := time.Parse(time.RFC3339, got); err != nil || !back.Equal(tc.t.Truncate(time.Second)) {
				t.Errorf("time.Parse(RFC3339, %q) = %v, %v; want %v", got, back, err, tc.t.Truncate(time.Second))
			}
			if strings.HasSuffix(got, "Z") {
				t.Errorf("%q ends in Z, want a numeric offset", got)
			}
		})
	}
}
