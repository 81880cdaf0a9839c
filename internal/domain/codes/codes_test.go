package codes

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// docRows reads the rows of the table under "## Table" in
// docs/result-codes.md: code → message.
func docRows(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("../../../docs/result-codes.md")
	if err != nil {
		t.Fatalf("read docs: %v", err)
	}
	_, table, ok := strings.Cut(string(b), "\n## Table\n")
	if !ok {
		t.Fatal(`docs/result-codes.md has no "## Table" section`)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(line, "| `") {
			continue
		}
		id := strings.Trim(strings.TrimSpace(cells[1]), "`")
		if _, dup := rows[id]; dup {
			t.Errorf("docs list %s twice", id)
		}
		rows[id] = strings.TrimSpace(cells[2])
	}
	return rows
}

func TestDocsListEveryCode(t *testing.T) {
	rows := docRows(t)
	for _, c := range All() {
		t.Run(c.ID, func(t *testing.T) {
			msg, ok := rows[c.ID]
			if !ok {
				t.Fatalf("docs/result-codes.md has no row for %s", c.ID)
			}
			if msg != c.Message {
				t.Errorf("docs message = %q, want %q", msg, c.Message)
			}
		})
	}
	known := map[string]bool{}
	for _, c := range All() {
		known[c.ID] = true
	}
	for id := range rows {
		if !known[id] {
			t.Errorf("docs list %s, which is not in codes.All()", id)
		}
	}
}

func TestCodesUniqueAndWellFormed(t *testing.T) {
	family := map[byte]string{'I': "request", 'R': "risk", 'C': "connector", 'S': "system", 'E': "communication", 'A': "decline"}
	ids := map[string]bool{}
	messages := map[string]string{}
	for _, c := range All() {
		t.Run(c.ID, func(t *testing.T) {
			if ids[c.ID] {
				t.Errorf("ID %s appears twice in All()", c.ID)
			}
			ids[c.ID] = true
			if other, dup := messages[c.Message]; dup {
				t.Errorf("message %q used by %s and %s", c.Message, other, c.ID)
			}
			messages[c.Message] = c.ID
			if c.Message == "" || strings.Contains(c.Message, ":") || strings.Contains(c.Message, "|") {
				t.Errorf("message %q must be non-empty without ':' or '|'", c.Message)
			}
			if regexp.MustCompile(`^000[0-9]$`).MatchString(c.ID) {
				return // the success family: done, or accepted and pending
			}
			if !regexp.MustCompile(`^[IRCSEA][0-9]{4}$`).MatchString(c.ID) {
				t.Errorf("ID %q is not a family letter and 4 digits", c.ID)
			}
			if _, ok := family[c.ID[0]]; !ok {
				t.Errorf("ID %q has an unknown family", c.ID)
			}
		})
	}
	if len(ids) != len(All()) {
		t.Errorf("All() has %d distinct codes among %d", len(ids), len(All()))
	}
}

func TestFamilies(t *testing.T) {
	tests := []struct {
		code Code
		id   string
	}{
		{OK, "0000"},
		{MissingField, "I0001"},
		{DuplicateOrder, "I0009"},
		{RequestTooLarge, "I0011"},
		{BadSignature, "I0013"},
		{OrderMismatch, "I0019"},
		{RiskAmountLimit, "R0001"},
		{RiskBlockedCard, "R0002"},
		{RiskRejected, "R0003"},
		{ConnectorError, "C0001"},
		{ThreeDSNotAvailable, "C0002"},
		{SystemError, "S0001"},
		{RecordRejected, "S0002"},
		{TransactionIDConflict, "S0003"},
		{AcquirerTimeout, "E0001"},
		{Declined, "A0001"},
		{InsufficientFunds, "A0002"},
		{ExpiredCard, "A0003"},
		{WrongCVV, "A0004"},
		{ThreeDSFailed, "A0005"},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			if tc.code.ID != tc.id {
				t.Errorf("ID = %s, want %s", tc.code.ID, tc.id)
			}
		})
	}
}

func TestStringParseRoundTrip(t *testing.T) {
	for _, c := range All() {
		t.Run(c.ID, func(t *testing.T) {
			s := c.String()
			if want := c.ID + ":" + c.Message; s != want {
				t.Fatalf("String() = %q, want %q", s, want)
			}
			if got := Parse(s); got != c {
				t.Errorf("Parse(%q) = %+v, want %+v", s, got, c)
			}
		})
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Code
	}{
		{"plain", "A0002:Insufficient funds", InsufficientFunds},
		{"with detail keeps later colons", "I0001:Missing required field: card", Code{"I0001", "Missing required field: card"}},
		{"no message", "S0001", Code{ID: "S0001"}},
		{"empty", "", Code{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Parse(tc.in); got != tc.want {
				t.Errorf("Parse(%q) = %+v, want %+v", tc.in, got, tc.want)
			}
		})
	}
}

func TestWith(t *testing.T) {
	tests := []struct {
		name    string
		code    Code
		details []string
		want    string
	}{
		{"appends detail", MissingField, []string{"shopper_email"}, "I0001:Missing required field: shopper_email"},
		{"empty detail unchanged", InvalidAmount, []string{""}, "I0003:Invalid amount"},
		{"details in order", InvalidField, []string{"a", "", "b"}, "I0008:Invalid field value: a: b"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.code
			for _, d := range tc.details {
				got = got.With(d)
			}
			if got.String() != tc.want {
				t.Errorf("String() = %q, want %q", got.String(), tc.want)
			}
			if !got.Is(tc.code) || got.ID != tc.code.ID {
				t.Errorf("%+v.Is(%+v) = false, want the same table entry", got, tc.code)
			}
			if Parse(got.String()) != got {
				t.Errorf("Parse(%q) = %+v, want %+v", got.String(), Parse(got.String()), got)
			}
		})
	}
	if MissingField.Message != "Missing required field" {
		t.Errorf("With changed the table entry: %q", MissingField.Message)
	}
}

func TestIsAndSuccess(t *testing.T) {
	tests := []struct {
		name    string
		c       Code
		other   Code
		is      bool
		success bool
	}{
		{"success", OK, OK, true, true},
		{"success by parse", Parse("0000:Success"), OK, true, true},
		{"decline is not success", Declined, OK, false, false},
		{"same id other detail", Declined.With("x"), Declined, true, false},
		{"different id", InsufficientFunds, Declined, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.c.Is(tc.other); got != tc.is {
				t.Errorf("Is = %v, want %v", got, tc.is)
			}
			if got := tc.c.Success(); got != tc.success {
				t.Errorf("Success = %v, want %v", got, tc.success)
			}
		})
	}
}
