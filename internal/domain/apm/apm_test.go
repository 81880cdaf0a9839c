package apm

import "testing"

func TestCheck(t *testing.T) {
	tests := []struct {
		name  string
		order Order
		known bool
		field string
	}{
		{"pix", Order{Method: "PIX", Currency: "BRL", Country: "BR", Document: "12345678901"}, true, ""},
		{"pix lower case", Order{Method: "pix", Currency: "BRL", Country: "BR", Document: "12345678901"}, true, ""},
		{"oxxo", Order{Method: "OXXO", Currency: "MXN", Country: "MX"}, true, ""},
		{"ideal", Order{Method: "IDEAL", Currency: "EUR", Country: "NL", BankCode: "INGBNL2A"}, true, ""},
		{"unknown method", Order{Method: "BITCOIN", Currency: "BRL", Country: "BR"}, false, "payment_method"},
		{"wrong currency", Order{Method: "PIX", Currency: "USD", Country: "BR", Document: "12345678901"}, true, "currency"},
		{"no country", Order{Method: "OXXO", Currency: "MXN"}, true, "billing_country"},
		{"wrong country", Order{Method: "OXXO", Currency: "MXN", Country: "BR"}, true, "billing_country"},
		{"pix without document", Order{Method: "PIX", Currency: "BRL", Country: "BR"}, true, "person.document_number"},
		{"pix with a short document", Order{Method: "PIX", Currency: "BRL", Country: "BR", Document: "1234"}, true, "person.document_number"},
		{"ideal without bank", Order{Method: "IDEAL", Currency: "EUR", Country: "NL"}, true, "bank_code"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, known, p := Check(tc.order)
			if known != tc.known || p.Field != tc.field {
				t.Errorf("Check = known %v field %q (%s), want %v %q", known, p.Field, p.Reason, tc.known, tc.field)
			}
		})
	}
}
