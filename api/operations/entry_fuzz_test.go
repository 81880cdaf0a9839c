package operations

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/paygate/paygate/internal/dev/fuzztext"
)

// Run the fuzz target with
//
//	go test -run='^$' -fuzz='^FuzzBatchEntries$' ./api/operations
//
// (or make fuzz). Plain go test runs the seeds of f.Add and testdata/fuzz.

// FuzzBatchEntries checks a batch array: it decodes from a JSON array or
// from a JSON string holding one, to the same entries either way, and every
// entry field is a value written in the input.
func FuzzBatchEntries(f *testing.F) {
	for _, s := range []string{
		`[]`, `null`, `""`, `" "`, `"[]"`, `[{}]`,
		`[{"transaction_id":"1234567890123456789","amount":12.30,"refund_reason":"late"}]`,
		`"[{\"transaction_id\":\"1234567890123456789\"}]"`,
		`"[{\"refund_reason\":\"a\\u0000b\"}]"`,
		`"\"[]\""`, `[{"transaction_id":{}}]`, `[{"review_flag":true}]`, `{"transaction_id":"1"}`,
		"[{\"refund_reason\":\"\xff\"}]", `[{"amount":-0.0e+99999}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got batchEntries
		if err := json.Unmarshal(data, &got); err != nil {
			return
		}
		written := map[string]bool{}
		fuzztext.JSONValues(data, written, 1)
		fuzztext.WalkText(reflect.ValueOf(got), "", func(field, v string) {
			if v != "" && !written[v] {
				t.Errorf("entry field %s = %q is not a value the input wrote", field, v)
			}
		})
		if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && trimmed[0] == '[' {
			quoted, err := json.Marshal(string(trimmed))
			if err != nil {
				t.Fatal(err)
			}
			var viaText batchEntries
			if err := json.Unmarshal(quoted, &viaText); err != nil {
				t.Fatalf("the array as JSON text %s is refused: %v", quoted, err)
			}
			if !reflect.DeepEqual(got, viaText) && len(got)+len(viaText) > 0 {
				t.Fatalf("array %s gives %+v, as JSON text %+v", trimmed, got, viaText)
			}
		}
	})
}
