package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/paygate/paygate/internal/domain/codes"
)

// MaxBodyBytes is the largest request body the API reads.
const MaxBodyBytes = 1 << 20

var (
	// errTooLarge is returned by readBody for a body over MaxBodyBytes.
	errTooLarge = errors.New("request body over 1 MiB")
	// errBodyUnreadable is returned by readBody for a body that could not
	// be read; the formats answer it each in their own way (answerTo).
	errBodyUnreadable = errors.New("request body could not be read")
)

// readBody reads at most MaxBodyBytes and reports a larger body.
func readBody(r io.Reader) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r, MaxBodyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errBodyUnreadable, err)
	}
	if len(body) > MaxBodyBytes {
		return nil, errTooLarge
	}
	return body, nil
}

// nestedFields are the fields that hold objects or arrays. In a form body
// they are sent as JSON text.
var nestedFields = map[string]bool{
	"cart_items": true, "account_owner": true, "total_discount": true,
	"additional_information": true, "subscription": true, "person": true,
	"capture_orders": true, "review_orders": true, "cancel_orders": true, "refund_orders": true,
	"beneficiary": true, "payer": true, // POST /v1/payout
}

// fieldKey is a field's name as the JSON decoder matches it to a struct's
// tag: without regard to case (encoding/json folds K, the Kelvin sign and
// k alike, and s with the long s). The checks look names up by it, so that
// "REFUND_ORDERS" is checked as the refund_orders it is decoded into.
func fieldKey(name string) string {
	return strings.ToLower(strings.ToUpper(name))
}

// decodeBody fills dst from a JSON or form body. A body that starts with '{'
// is JSON whatever the Content-Type says (docs/design.md §3); anything else is read
// as a form and turned into the same JSON shape, so both take one path.
// It answers a result code that names what is wrong.
func decodeBody(body []byte, dst any) *codes.Code {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		c := codes.MalformedRequest.With("empty body")
		return &c
	}
	if trimmed[0] != '{' {
		converted, err := formToJSON(string(trimmed))
		var refused *fieldError
		if errors.As(err, &refused) {
			return &refused.code
		}
		if err != nil {
			c := codes.MalformedRequest.With(err.Error())
			return &c
		}
		trimmed = converted
	}
	if code := checkJSONText(trimmed); code != nil {
		return code
	}
	if err := json.Unmarshal(trimmed, dst); err != nil {
		c := codes.MalformedRequest.With(describeJSONError(err))
		return &c
	}
	return nil
}

// fieldError carries the result code that refuses one field of a form.
type fieldError struct{ code codes.Code }

func (e *fieldError) Error() string { return e.code.String() }

func formToJSON(body string) ([]byte, error) {
	values, err := url.ParseQuery(body)
	if err != nil {
		return nil, errors.New("body is neither JSON nor a valid form")
	}
	// The object is written by hand, fields in name order (so the field a
	// refusal names does not depend on map order), a nested field's JSON
	// as the merchant wrote it: json.Marshal compacted it and wrote '<',
	// '>' and '&' in it as \u escapes.
	var obj bytes.Buffer
	obj.WriteByte('{')
	for _, key := range slices.Sorted(maps.Keys(values)) {
		vals := values[key]
		if len(vals) == 0 {
			continue
		}
		v := vals[0]
		if code := checkFormText(key, v); code != nil {
			return nil, &fieldError{code: *code}
		}
		name, err := jsonString(key)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", key, err)
		}
		value := []byte(nil)
		if nestedFields[fieldKey(key)] {
			t := strings.TrimSpace(v)
			if t != "" && (t[0] == '[' || t[0] == '{') {
				if !json.Valid([]byte(t)) {
					return nil, fmt.Errorf("field %s: not valid JSON", key)
				}
				value = []byte(t)
			}
		}
		if value == nil {
			if value, err = jsonString(v); err != nil {
				return nil, fmt.Errorf("field %s: %w", key, err)
			}
		}
		if obj.Len() > 1 {
			obj.WriteByte(',')
		}
		obj.Write(name)
		obj.WriteByte(':')
		obj.Write(value)
	}
	obj.WriteByte('}')
	return obj.Bytes(), nil
}

// jsonString is s as a JSON string, '<', '>' and '&' as they are.
func jsonString(s string) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// describeJSONError says what is wrong without quoting the body, which may
// hold card data.
func describeJSONError(err error) string {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return fmt.Sprintf("invalid JSON at byte %d", syntax.Offset)
	case errors.As(err, &typ):
		if typ.Field != "" {
			return fmt.Sprintf("field %s has the wrong type (%s)", typ.Field, typ.Value)
		}
		return fmt.Sprintf("a field has the wrong type (%s)", typ.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "truncated JSON"
	}
	return "invalid JSON"
}

// RequestFields is the request's fields as text, read as decodeBody reads them
// (JSON when the body starts with '{', else a form), for the forwarding page
// and the checks that look at a field before the handler decodes.
func RequestFields(body []byte) map[string]string {
	out := map[string]string{}
	trimmed := strings.TrimSpace(string(body))
	if strings.HasPrefix(trimmed, "{") {
		var raw map[string]json.RawMessage
		if json.Unmarshal([]byte(trimmed), &raw) != nil {
			return out
		}
		for k, v := range raw {
			var s string
			if json.Unmarshal(v, &s) == nil {
				out[k] = s
			} else {
				out[k] = string(v)
			}
		}
		return out
	}
	values, err := url.ParseQuery(trimmed)
	if err != nil {
		return out
	}
	for k, v := range values {
		if len(v) > 0 {
			out[k] = v[0]
		}
	}
	return out
}

// JSONList is a request's array (the batches' entries) that comes as a JSON
// array or as JSON text holding one, which is how a form sends it and how
// some merchants send it inside JSON too.
type JSONList[T any] []T

func (l *JSONList[T]) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '"' {
		var text string
		if err := json.Unmarshal(data, &text); err != nil {
			return err
		}
		data = []byte(strings.TrimSpace(text))
		if len(data) == 0 {
			*l = nil
			return nil
		}
	}
	var list []T
	if err := json.Unmarshal(data, &list); err != nil {
		return err
	}
	*l = list
	return nil
}
