package payout

import (
	"errors"
	"testing"

	"github.com/paygate/paygate/internal/domain/country"
)

func TestParseIBAN(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    IBAN
		wantErr error
	}{
		// Valid, one per length class.
		{"GB", "GB82WEST12345698765432", "GB82WEST12345698765432", nil},
		{"DE", "DE89370400440532013000", "DE89370400440532013000", nil},
		{"FR with a letter in the BBAN", "FR1420041010050500013M02606", "FR1420041010050500013M02606", nil},
		{"NL", "NL91ABNA0417164300", "NL91ABNA0417164300", nil},
		{"BE, 16", "BE68539007547034", "BE68539007547034", nil},
		{"NO, the shortest", "NO9386011117947", "NO9386011117947", nil},
		{"CH", "CH9300762011623852957", "CH9300762011623852957", nil},
		{"IT", "IT60X0542811101000000123456", "IT60X0542811101000000123456", nil},
		{"MT, 31", "MT84MALT011000012345MTLCAST001S", "MT84MALT011000012345MTLCAST001S", nil},
		{"LC, 32", "LC55HEMM000100010012001200023015", "LC55HEMM000100010012001200023015", nil},
		{"RU, the longest", "RU0204452560040702810412345678901", "RU0204452560040702810412345678901", nil},
		{"BH", "BH67BMAG00001299123456", "BH67BMAG00001299123456", nil},
		{"check digits 98", "GB98WEST12345698760003", "GB98WEST12345698760003", nil},
		{"check digits 02", "GB02WEST12345698760082", "GB02WEST12345698760082", nil},
		// The rail simulator's test beneficiaries (docs/decisions.md) must get past validation.
		{"rail: always fails", "DE32370400449900000001", "DE32370400449900000001", nil},
		{"rail: fails once", "DE05370400449900000002", "DE05370400449900000002", nil},
		{"rail: unavailable twice", "DE75370400449900000003", "DE75370400449900000003", nil},
		{"rail: stays submitted", "DE48370400449900000004", "DE48370400449900000004", nil},

		// How it may be written.
		{"printed in groups", "GB82 WEST 1234 5698 7654 32", "GB82WEST12345698765432", nil},
		{"lower case", "gb82west12345698765432", "GB82WEST12345698765432", nil},
		{"mixed case, printed, padded", "  gb82 West 1234 5698 7654 32\n", "GB82WEST12345698765432", nil},
		{"irregular spaces", "GB82  WEST12 345698765432", "GB82WEST12345698765432", nil},
		{"tab inside", "GB82\tWEST12345698765432", "", ErrIBANFormat},
		{"dashes", "GB82-WEST-1234-5698-7654-32", "", ErrIBANFormat},
		{"non-breaking space inside", "GB82\u00a0WEST12345698765432", "", ErrIBANFormat},
		{"full-width letters", "ＧＢ82WEST12345698765432", "", ErrIBANFormat},
		{"empty", "", "", ErrIBANFormat},
		{"country only", "GB", "", ErrIBANFormat},
		{"digits where the country goes", "1282WEST12345698765432", "", ErrIBANFormat},
		{"letters where check digits go", "GBXXWEST12345698765432", "", ErrIBANFormat},
		{"too long to look at", "GB82WEST12345698765432" + "                                                ", "GB82WEST12345698765432", nil},
		{"longer than anything", "GB82WEST12345698765432GB82WEST12345698765432GB82WEST12345698765432", "", ErrIBANFormat},

		// Wrong.
		{"wrong check digit", "GB83WEST12345698765432", "", ErrIBANChecksum},
		{"DE wrong check digit", "DE88370400440532013000", "", ErrIBANChecksum},
		{"swapped digits in the account", "GB82WEST12345698765423", "", ErrIBANChecksum},
		{"DE one short", "DE8937040044053201300", "", ErrIBANLength},
		{"DE one long", "DE893704004405320130000", "", ErrIBANLength},
		{"GB with a DE length", "GB82WEST123456987654", "", ErrIBANLength},
		{"NO with 16", "NO93860111179470", "", ErrIBANLength},
		{"country without IBAN", "US12345678901234567890", "", ErrIBANCountry},
		{"Kosovo, not an ISO country here", "XK051212012345678906", "", ErrIBANCountry},
		{"check digits 01 that pass mod 97", "GB01WEST12345698760003", "", ErrIBANCheckDigits},
		{"check digits 00 that pass mod 97", "GB00WEST12345698760021", "", ErrIBANCheckDigits},
		{"check digits 99 that pass mod 97", "GB99WEST12345698760082", "", ErrIBANCheckDigits},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseIBAN(tc.in)
			if !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) {
				t.Fatalf("ParseIBAN(%q) error = %v, want %v", tc.in, err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("ParseIBAN(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestIBANParts(t *testing.T) {
	i, err := ParseIBAN("GB82WEST12345698765432")
	if err != nil {
		t.Fatal(err)
	}
	if i.Country() != "GB" || i.CheckDigits() != "82" || i.BBAN() != "WEST12345698765432" || i.String() != "GB82WEST12345698765432" {
		t.Errorf("parts = %s %s %s %s", i.Country(), i.CheckDigits(), i.BBAN(), i)
	}
	if got, want := i.Printed(), "GB82 WEST 1234 5698 7654 32"; got != want {
		t.Errorf("Printed = %q, want %q", got, want)
	}
	if back, err := ParseIBAN(i.Printed()); err != nil || back != i {
		t.Errorf("ParseIBAN(Printed) = %q, %v", back, err)
	}
}

// TestIBANTable pins that every IBAN country is an assigned ISO country and
// every length is within ISO 13616's 15 to 34.
func TestIBANTable(t *testing.T) {
	for cc, n := range ibanLengths {
		if !country.Known(cc) {
			t.Errorf("%s has IBANs but is not a known country", cc)
		}
		if n < 15 || n > 34 {
			t.Errorf("%s IBAN length %d outside 15 to 34", cc, n)
		}
	}
	if n, ok := IBANLength("DE"); n != 22 || !ok {
		t.Errorf("IBANLength(DE) = %d, %t", n, ok)
	}
	if _, ok := IBANLength("US"); ok {
		t.Error("IBANLength(US) reports IBANs")
	}
}

func TestParseBIC(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    BIC
		wantErr error
	}{
		{"8 characters", "DEUTDEFF", "DEUTDEFF", nil},
		{"11 characters", "DEUTDEFF500", "DEUTDEFF500", nil},
		{"head office branch", "COBADEFFXXX", "COBADEFFXXX", nil},
		{"digits in location", "BOFAUS3N", "BOFAUS3N", nil},
		{"lower case", "deutdeff500", "DEUTDEFF500", nil},
		{"padded", " CHASUS33 ", "CHASUS33", nil},
		{"test BIC", "DEUTDEF0", "DEUTDEF0", nil},
		{"7 characters", "DEUTDEF", "", ErrBICFormat},
		{"9 characters", "DEUTDEFF5", "", ErrBICFormat},
		{"10 characters", "DEUTDEFF50", "", ErrBICFormat},
		{"12 characters", "DEUTDEFF5000", "", ErrBICFormat},
		{"digit in bank code", "DEU1DEFF", "", ErrBICFormat},
		{"digit in country", "DEUTD3FF", "", ErrBICFormat},
		{"space inside", "DEUT DEFF50", "", ErrBICFormat},
		{"symbol in branch", "DEUTDEFF50-", "", ErrBICFormat},
		{"symbol in location", "DEUTDEF_", "", ErrBICFormat},
		{"non-ASCII", "DEÜTDEFF", "", ErrBICFormat},
		{"unknown country", "DEUTXXFF", "", ErrBICCountry},
		{"UK is not a country code", "BARCUK22", "", ErrBICCountry},
		{"empty", "", "", ErrBICFormat},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseBIC(tc.in)
			if !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) {
				t.Fatalf("ParseBIC(%q) error = %v, want %v", tc.in, err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("ParseBIC(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestBICParts(t *testing.T) {
	tests := []struct {
		bic                             BIC
		bank, country, location, branch string
		test                            bool
	}{
		{"DEUTDEFF", "DEUT", "DE", "FF", "XXX", false},
		{"DEUTDEFF500", "DEUT", "DE", "FF", "500", false},
		{"DEUTDEF0", "DEUT", "DE", "F0", "XXX", true},
	}
	for _, tc := range tests {
		t.Run(string(tc.bic), func(t *testing.T) {
			b := tc.bic
			if b.BankCode() != tc.bank || b.Country() != tc.country || b.Location() != tc.location || b.Branch() != tc.branch || b.Test() != tc.test {
				t.Errorf("parts = %s %s %s %s %t", b.BankCode(), b.Country(), b.Location(), b.Branch(), b.Test())
			}
		})
	}
}
