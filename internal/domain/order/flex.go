package order

import (
	"bytes"
	"encoding/json"
	"reflect"
)

// Text is a string field that also accepts a JSON number or boolean, keeping
// its literal text. The interface's samples send some numbers unquoted; reading
// them as text means no float ever touches an amount.
type Text string

// UnmarshalJSON accepts a JSON string, number, boolean or null.
func (t *Text) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || string(b) == "null" {
		*t = ""
		return nil
	}
	switch b[0] {
	case '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*t = Text(s)
		return nil
	case '{':
		return &json.UnmarshalTypeError{Value: "object", Type: reflect.TypeFor[string]()}
	case '[':
		return &json.UnmarshalTypeError{Value: "array", Type: reflect.TypeFor[string]()}
	}
	*t = Text(b)
	return nil
}

// String returns the text.
func (t Text) String() string { return string(t) }
