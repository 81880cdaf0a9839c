package apidoc

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestOpenAPIPath(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "/v1/authorise", "/v1/authorise"},
		{"parameter", "/admin/payouts/reruns/:id", "/admin/payouts/reruns/{id}"},
		{"catch-all", "/codec/*call", "/codec/{call}"},
		{"two", "/a/:x/b/:y", "/a/{x}/b/{y}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := OpenAPIPath(tc.in); got != tc.want {
				t.Errorf("OpenAPIPath(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

type flexText string

type inner struct {
	City string `json:"city"`
}

type sample struct {
	inner
	Amount  flexText          `json:"amount"`
	Count   int64             `json:"count,omitempty"`
	Secret  string            `json:"-"`
	Tags    []string          `json:"tags"`
	Extra   map[string]string `json:"extra"`
	Nested  *inner            `json:"nested"`
	private string
	Plain   bool
}

// TestSchemaOf: a type's schema names its fields as encoding/json does
// (embedded structs flattened, "-" left out, untagged by the Go name),
// with the schemas of special types and the field rules.
func TestSchemaOf(t *testing.T) {
	s := Schemas{
		Types: map[reflect.Type]Schema{reflect.TypeFor[flexText](): {"type": []any{"string", "number"}}},
		Rules: map[string]Rule{"amount": {Pattern: `^[0-9]+$`, Description: "An amount."}},
	}
	got, _ := json.Marshal(s.Of(sample{}, false))
	want := `{"properties":{"Plain":{"type":"boolean"},"amount":{"description":"An amount.","pattern":"^[0-9]+$","type":["string","number"]},` +
		`"city":{"type":"string"},"count":{"type":"integer"},"extra":{"additionalProperties":{"type":"string"},"type":["object","null"]},` +
		`"nested":{"properties":{"city":{"type":"string"}},"type":"object"},"tags":{"items":{"type":"string"},"type":["array","null"]}},"type":"object"}`
	if string(got) != want {
		t.Errorf("schema\n got %s\nwant %s", got, want)
	}
}
