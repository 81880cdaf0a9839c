// Package apm knows the alternative payment methods the gateway offers:
// each method's currencies, countries and required shopper data.
package apm

import (
	"slices"
	"strings"
)

// Method is one alternative payment method.
type Method struct {
	Name       string
	Currencies []string
	Countries  []string
	// NeedsDocument: the shopper's tax id (person.document_number) is required.
	NeedsDocument bool
	// DocumentDigits is the document's length in digits, when fixed.
	DocumentDigits int
	// NeedsBankCode: bank_code is required.
	NeedsBankCode bool
}

// Methods are the methods offered, by name.
var Methods = map[string]Method{
	"PIX":   {Name: "PIX", Currencies: []string{"BRL"}, Countries: []string{"BR"}, NeedsDocument: true, DocumentDigits: 11},
	"OXXO":  {Name: "OXXO", Currencies: []string{"MXN"}, Countries: []string{"MX"}},
	"IDEAL": {Name: "IDEAL", Currencies: []string{"EUR"}, Countries: []string{"NL"}, NeedsBankCode: true},
}

// Problem names what an APM order lacks; empty when it is fine.
type Problem struct {
	Field  string
	Reason string
}

// Order is what Check looks at.
type Order struct {
	Method   string
	Currency string
	Country  string
	Document string
	BankCode string
}

// Lookup finds a method by name, case-insensitively.
func Lookup(name string) (Method, bool) {
	m, ok := Methods[strings.ToUpper(strings.TrimSpace(name))]
	return m, ok
}

// Check tells whether the method can take the order. ok is false for an
// unknown method; otherwise a non-empty Problem says what is wrong.
func Check(o Order) (m Method, ok bool, p Problem) {
	m, ok = Lookup(o.Method)
	if !ok {
		return Method{}, false, Problem{Field: "payment_method", Reason: "unknown payment method " + o.Method}
	}
	switch {
	case !slices.Contains(m.Currencies, o.Currency):
		return m, true, Problem{Field: "currency", Reason: m.Name + " takes " + strings.Join(m.Currencies, ", ")}
	case o.Country == "":
		return m, true, Problem{Field: "billing_country", Reason: "the shopper's country is required"}
	case !slices.Contains(m.Countries, o.Country):
		return m, true, Problem{Field: "billing_country", Reason: m.Name + " is offered in " + strings.Join(m.Countries, ", ")}
	case m.NeedsDocument && o.Document == "":
		return m, true, Problem{Field: "person.document_number", Reason: m.Name + " needs the shopper's document number"}
	case m.NeedsDocument && m.DocumentDigits > 0 && !digits(o.Document, m.DocumentDigits):
		return m, true, Problem{Field: "person.document_number", Reason: "must be " + itoa(m.DocumentDigits) + " digits"}
	case m.NeedsBankCode && o.BankCode == "":
		return m, true, Problem{Field: "bank_code", Reason: m.Name + " needs the shopper's bank_code"}
	}
	return m, true, Problem{}
}

func digits(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
