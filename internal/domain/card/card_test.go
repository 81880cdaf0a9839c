package card

import (
	"errors"
	"testing"
	"time"
)

// testCards are well-known Luhn-valid test card numbers and their brands.
var testCards = []struct {
	pan   string
	brand string
}{
	{"4242424242424242", "visa"},
	{"5555555555554444", "mastercard"},
	{"4000000000000002", "visa"},
	{"4000000000009995", "visa"},
	{"4000000000000069", "visa"},
	{"4000000000000127", "visa"},
	{"4000000000003220", "visa"},
	{"4000000000000119", "visa"},
	{"4000000000000341", "visa"},
	{"378282246310005", "amex"},
	{"371449635398431", "amex"},
	{"2223003122003222", "mastercard"},
	{"6011111111111117", "discover"},
	{"3530111333300000", "jcb"},
	{"36227206271667", "diners"},
	{"6200000000000005", "unionpay"},
}

func TestTestCards(t *testing.T) {
	for _, c := range testCards {
		t.Run(c.pan, func(t *testing.T) {
			if !Luhn(c.pan) {
				t.Error("Luhn = false, want true")
			}
			if err := ValidateNumber(c.pan); err != nil {
				t.Errorf("ValidateNumber = %v, want nil", err)
			}
			if got := Brand(c.pan); got != c.brand {
				t.Errorf("Brand = %q, want %q", got, c.brand)
			}
		})
	}
}

func TestLuhn(t *testing.T) {
	tests := []struct {
		name string
		pan  string
		want bool
	}{
		{"valid", "4242424242424242", true},
		{"single zero", "0", true},
		{"classic example", "79927398713", true},
		{"last digit changed", "4242424242424241", false},
		{"digits transposed", "4242424242424224", false},
		{"classic example off by one", "79927398710", false},
		{"empty", "", false},
		{"spaces", "4242 4242 4242 4242", false},
		{"dashes", "4242-4242-4242-4242", false},
		{"letters", "424242424242424a", false},
		{"non-ASCII digit", "424242424242424２", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Luhn(tt.pan); got != tt.want {
				t.Errorf("Luhn(%q) = %t, want %t", tt.pan, got, tt.want)
			}
		})
	}
}

func TestValidateNumber(t *testing.T) {
	tests := []struct {
		name    string
		pan     string
		wantErr error
	}{
		{"visa", "4242424242424242", nil},
		{"amex 15 digits", "378282246310005", nil},
		{"13 digits", "4222222222222", nil},
		{"19 digits", "6011000000000000001", nil},
		{"12 digits Luhn-valid", "424242424242", nil},
		{"11 digits Luhn-valid", "42424242428", ErrInvalidNumber},
		{"20 digits Luhn-valid", "42424242424242424242", ErrInvalidNumber},
		{"bad check digit", "4242424242424241", ErrInvalidNumber},
		{"bad check digit mastercard", "5555555555554445", ErrInvalidNumber},
		{"spaces", "4242 4242 4242 4242", ErrInvalidNumber},
		{"surrounding space", " 4242424242424242", ErrInvalidNumber},
		{"letters", "4242abcd42424242", ErrInvalidNumber},
		{"empty", "", ErrInvalidNumber},
		{"all zeros", "0000000000000000", ErrInvalidNumber},
		{"a test card with a leading zero", "04242424242424242", ErrInvalidNumber},
		{"a test card with three leading zeros", "0004242424242424242", ErrInvalidNumber},
		{"a live card with a leading zero", "04242424242424267", ErrInvalidNumber},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := ValidateNumber(tt.pan); !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Errorf("ValidateNumber(%q) = %v, want %v", tt.pan, err, tt.wantErr)
			}
		})
	}
}

func TestBrand(t *testing.T) {
	tests := []struct {
		name string
		pan  string
		want string
	}{
		{"visa", "4111111111111111", "visa"},
		{"mastercard 51", "5105105105105100", "mastercard"},
		{"mastercard 55", "5500000000000004", "mastercard"},
		{"mastercard 2221", "2221000000000009", "mastercard"},
		{"mastercard 2720", "2720990000000000", "mastercard"},
		{"below mastercard 2-series", "2220990000000000", "unknown"},
		{"above mastercard 2-series", "2721000000000000", "unknown"},
		{"amex 34", "340000000000009", "amex"},
		{"amex 37", "378282246310005", "amex"},
		{"discover 6011", "6011000990139424", "discover"},
		{"discover 644", "6445644564456445", "discover"},
		{"discover 649", "6490000000000000", "discover"},
		{"discover 65", "6500000000000002", "discover"},
		{"jcb 3528", "3528000000000007", "jcb"},
		{"jcb 3589", "3589000000000000", "jcb"},
		{"not jcb 3527", "3527000000000000", "unknown"},
		{"unionpay 62", "6212345678901232", "unionpay"},
		{"unionpay 81", "8100000000000000", "unionpay"},
		{"diners 300", "30000000000004", "diners"},
		{"diners 305", "30569309025904", "diners"},
		{"diners 3095", "30950000000000", "diners"},
		{"diners 36", "36227206271667", "diners"},
		{"diners 38", "38520000023237", "diners"},
		{"diners 39", "39000000000000", "diners"},
		{"not diners 306", "30600000000000", "unknown"},
		{"maestro 50", "5018000000000009", "maestro"},
		{"maestro 56", "5600000000000000", "maestro"},
		{"maestro 58", "5893000000000000", "maestro"},
		{"maestro 6304", "6304000000000000", "maestro"},
		{"maestro 639", "6390000000000000", "maestro"},
		{"maestro 67", "6759649826438453", "maestro"},
		{"unknown 1", "1000000000000000", "unknown"},
		{"unknown 9", "9000000000000000", "unknown"},
		{"prefix only", "4", "visa"},
		{"too short for prefix", "3", "unknown"},
		{"empty", "", "unknown"},
		{"spaces", "4242 4242 4242 4242", "unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Brand(tt.pan); got != tt.want {
				t.Errorf("Brand(%q) = %q, want %q", tt.pan, got, tt.want)
			}
		})
	}
}

func TestMask(t *testing.T) {
	tests := []struct {
		name string
		pan  string
		want string
	}{
		{"16 digits", "4242424242424242", "424242******4242"},
		{"15 digits", "378282246310005", "378282*****0005"},
		{"19 digits", "6011000000000000001", "601100*********0001"},
		{"11 digits", "12345678901", "123456*8901"},
		{"10 digits", "1234567890", "**********"},
		{"4 digits", "4242", "****"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Mask(tt.pan); got != tt.want {
				t.Errorf("Mask(%q) = %q, want %q", tt.pan, got, tt.want)
			}
		})
	}
}

func TestParseExpiry(t *testing.T) {
	tests := []struct {
		name      string
		month     string
		year      string
		wantMonth int
		wantYear  int
		wantErr   error
	}{
		{"single digit month", "1", "2031", 1, 2031, nil},
		{"padded month", "01", "2031", 1, 2031, nil},
		{"december", "12", "2031", 12, 2031, nil},
		{"two digit year", "12", "31", 12, 2031, nil},
		{"two digit year 00", "6", "00", 6, 2000, nil},
		{"month zero", "0", "2031", 0, 0, ErrInvalidExpiry},
		{"month double zero", "00", "2031", 0, 0, ErrInvalidExpiry},
		{"month 13", "13", "2031", 0, 0, ErrInvalidExpiry},
		{"three digit month", "012", "2031", 0, 0, ErrInvalidExpiry},
		{"empty month", "", "2031", 0, 0, ErrInvalidExpiry},
		{"signed month", "+1", "2031", 0, 0, ErrInvalidExpiry},
		{"negative month", "-1", "2031", 0, 0, ErrInvalidExpiry},
		{"spaced month", " 1", "2031", 0, 0, ErrInvalidExpiry},
		{"three digit year", "12", "203", 0, 0, ErrInvalidExpiry},
		{"one digit year", "12", "3", 0, 0, ErrInvalidExpiry},
		{"five digit year", "12", "20311", 0, 0, ErrInvalidExpiry},
		{"empty year", "12", "", 0, 0, ErrInvalidExpiry},
		{"letters in year", "12", "20a1", 0, 0, ErrInvalidExpiry},
		{"signed year", "12", "+031", 0, 0, ErrInvalidExpiry},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, y, err := ParseExpiry(tt.month, tt.year)
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Fatalf("ParseExpiry(%q, %q) error = %v, want %v", tt.month, tt.year, err, tt.wantErr)
			}
			if m != tt.wantMonth || y != tt.wantYear {
				t.Errorf("ParseExpiry(%q, %q) = %d, %d, want %d, %d", tt.month, tt.year, m, y, tt.wantMonth, tt.wantYear)
			}
		})
	}
}

func TestCheckExpiry(t *testing.T) {
	now := time.Date(2026, time.March, 15, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		month   string
		year    string
		now     time.Time
		wantErr error
	}{
		{"current month", "3", "2026", now, nil},
		{"current month two digit year", "03", "26", now, nil},
		{"next month", "4", "2026", now, nil},
		{"previous month", "2", "2026", now, ErrExpired},
		{"previous year", "12", "2025", now, ErrExpired},
		{"last instant of month", "3", "2026", time.Date(2026, time.March, 31, 23, 59, 59, 999999999, time.UTC), nil},
		{"first instant of next month", "3", "2026", time.Date(2026, time.April, 1, 0, 0, 0, 0, time.UTC), ErrExpired},
		{"december end of year", "12", "2026", time.Date(2026, time.December, 31, 23, 59, 59, 0, time.UTC), nil},
		{"december after year end", "12", "2026", time.Date(2027, time.January, 1, 0, 0, 0, 0, time.UTC), ErrExpired},
		// 2026-04-01 01:00 in UTC+2 is 2026-03-31 23:00 UTC: still March.
		{"now in other zone", "3", "2026", time.Date(2026, time.April, 1, 1, 0, 0, 0, time.FixedZone("UTC+2", 2*3600)), nil},
		{"twenty years ahead", "12", "2046", now, nil},
		{"more than twenty years ahead", "1", "2047", now, ErrInvalidExpiry},
		{"malformed", "13", "2030", now, ErrInvalidExpiry},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckExpiry(tt.month, tt.year, tt.now)
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Errorf("CheckExpiry(%q, %q, %v) = %v, want %v", tt.month, tt.year, tt.now, err, tt.wantErr)
			}
		})
	}
}

func TestValidateCVV(t *testing.T) {
	tests := []struct {
		name    string
		cvv     string
		brand   string
		wantErr error
	}{
		{"visa 3 digits", "739", "visa", nil},
		{"mastercard 3 digits", "000", "mastercard", nil},
		{"unknown brand 3 digits", "123", "unknown", nil},
		{"amex 4 digits", "1234", "amex", nil},
		{"amex 3 digits", "123", "amex", ErrInvalidCVV},
		{"visa 4 digits", "1234", "visa", ErrInvalidCVV},
		{"visa 2 digits", "12", "visa", ErrInvalidCVV},
		{"empty", "", "visa", ErrInvalidCVV},
		{"letters", "12a", "visa", ErrInvalidCVV},
		{"spaces", " 123", "visa", ErrInvalidCVV},
		{"amex letters", "12a4", "amex", ErrInvalidCVV},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateCVV(tt.cvv, tt.brand)
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Errorf("ValidateCVV(%q, %q) = %v, want %v", tt.cvv, tt.brand, err, tt.wantErr)
			}
		})
	}
}

func TestFingerprint(t *testing.T) {
	tests := []struct {
		name string
		key  string
		pan  string
		want string
	}{
		// Expected values from: printf '%s' PAN | openssl dgst -sha256 -hmac KEY
		{"visa", "fingerprint-test-key", "4242424242424242", "1bb2a04d6a98cca2419edd67fd8603659f8f7665f09ec40bba5b671bb089a07d"},
		{"mastercard", "fingerprint-test-key", "5555555555554444", "0b1a4789761b94f9e4cbeaada6677f9bbbee7c172013a0ac3e704adf6a9fa011"},
		{"other key", "other-key", "4242424242424242", "c43430df5daabf38d5c7aae79867f38fa9af2637e1da7e069df565f87bc874a8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Fingerprint([]byte(tt.key), tt.pan); got != tt.want {
				t.Errorf("Fingerprint = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestWithCheckDigit(t *testing.T) {
	tests := []struct {
		name string
		body string
		want string
	}{
		{"the test Visa", "424242424242424", "4242424242424242"},
		{"the test Mastercard", "555555555555444", "5555555555554444"},
		{"a check digit of 0", "411111111111111", "4111111111111111"},
		{"a bench card", "410000000000001", "4100000000000019"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := WithCheckDigit(tc.body)
			if got != tc.want || !Luhn(got) {
				t.Errorf("WithCheckDigit(%q) = %q, want %q", tc.body, got, tc.want)
			}
		})
	}
}
