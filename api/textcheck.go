package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/paygate/paygate/internal/domain/codes"
)

// Limits on the shape of a body, so that nothing oversize or nested without
// end reaches a workflow or a record (bad data is refused at the door).
const (
	maxDepth        = 6    // objects and arrays inside one another
	maxNestedText   = 2048 // bytes of one string inside an object or array field
	maxArrayDefault = 100  // entries of an array not named in arrayLimits
)

// arrayLimits are the most entries each named array may hold. The batch
// arrays are checked against their own, per-operation limits by the handler
// (answered as TooManyOrders); here they only get a ceiling.
var arrayLimits = map[string]int{
	"cart_items":             100,
	"account_owner":          10,
	"total_discount":         20,
	"additional_information": 50,
	"documents":              10,
	"capture_orders":         1000,
	"review_orders":          1000,
	"cancel_orders":          1000,
	"refund_orders":          1000,
}

// longNestedText are the nested fields, by their path without indexes,
// that hold more than maxNestedText: a dispute's evidence (api/disputes),
// a statement of 20,000 characters (four bytes each at most) and a file of
// 512 KiB in base64. The handler checks each against its own limit.
var longNestedText = map[string]int{
	"evidence[].text":           20000 * 4,
	"evidence[].content_base64": (512<<10 + 2) / 3 * 4,
}

// multilineNested are the nested fields, by their path without indexes,
// where tab, line feed and carriage return are allowed, as in
// multilineFields: a dispute's written statement has paragraphs.
var multilineNested = map[string]bool{"evidence[].text": true}

// withoutIndexes is a field's path with its array indexes left out:
// "evidence[3].text" → "evidence[].text".
func withoutIndexes(path string) string {
	var b strings.Builder
	skipping := false
	for _, r := range path {
		switch {
		case r == '[':
			skipping = true
			b.WriteRune(r)
		case r == ']':
			skipping = false
			b.WriteRune(r)
		case !skipping:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// multilineFields are the free-text fields where tab, line feed and carriage
// return are allowed. Every other control character is refused everywhere.
var multilineFields = map[string]bool{
	"note": true, "items": true, "custom": true, "refund_reason": true, "description": true,
	"billing_address": true, "delivery_address": true, "delivery_street_name": true, "address": true,
}

// checkText refuses text that is not valid UTF-8 or holds control
// characters: NUL and the other C0 controls (tab, line feed and carriage
// return only where the field allows them), DEL and the C1 controls. Such
// bytes cannot be stored in Postgres text or would corrupt a signed value.
func checkText(field, s string) *codes.Code {
	if !utf8.ValidString(s) {
		c := codes.InvalidField.With(field + " is not valid UTF-8")
		return &c
	}
	for _, r := range s {
		if !isControl(r) {
			continue
		}
		if (r == '\t' || r == '\n' || r == '\r') && (multilineFields[leafName(field)] || multilineNested[withoutIndexes(field)]) {
			continue
		}
		c := codes.InvalidField.With(field + " contains a control character")
		return &c
	}
	return nil
}

func isControl(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f)
}

// leafName is the last name of a field path: "cart_items[0].name" → "name".
func leafName(path string) string {
	i := len(path)
	for i > 0 && path[i-1] != '.' {
		i--
	}
	name := path[i:]
	if j := bytes.IndexByte([]byte(name), '['); j >= 0 {
		name = name[:j]
	}
	return name
}

// jsonFrame is one open object or array while a body is walked.
type jsonFrame struct {
	path    string
	array   bool
	index   int
	key     string // the key whose value comes next, in an object
	haveKey bool
	limit   int
}

// checkJSONText walks a JSON document and refuses invalid UTF-8 (checked on
// the raw bytes of each token, because decoding would quietly replace it),
// control characters, nesting deeper than maxDepth, arrays over their limit
// and nested strings over maxNestedText. The answer names the field.
func checkJSONText(raw []byte) *codes.Code { return checkJSONTextAt(raw, "", 0) }

// checkJSONTextAt walks raw as the value of the field at prefix ("" for the
// body), opened inside depth objects. A nested field sent as JSON text in a
// string (how batch arrays may come) is walked again as the document it
// holds, since its escapes only become characters when it is decoded a
// second time.
func checkJSONTextAt(raw []byte, prefix string, depth int) *codes.Code {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var stack []*jsonFrame
	prev := int64(0)
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			// Syntax errors are reported by the decoder proper.
			return nil
		}
		end := dec.InputOffset()
		rawTok := raw[prev:end]
		prev = end

		var top *jsonFrame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		// The path of the value this token is (or, for a key, names).
		path := prefix
		isKey := false
		if top != nil {
			switch {
			case top.array:
				path = fmt.Sprintf("%s[%d]", top.path, top.index)
			case !top.haveKey:
				isKey = true
				path = top.path
			default:
				path = joinPath(top.path, top.key)
			}
		}
		if delim, ok := tok.(json.Delim); !ok || delim == '{' || delim == '[' {
			if top != nil && top.array && top.index >= top.limit {
				c := codes.RequestTooLarge.With(fmt.Sprintf("%s holds more than %d entries", top.path, top.limit))
				return &c
			}
		}
		if delim, ok := tok.(json.Delim); ok && (delim == '}' || delim == ']') {
			stack = stack[:len(stack)-1]
			if len(stack) > 0 {
				stack[len(stack)-1].valueDone()
			}
			continue
		}
		if !utf8.Valid(rawTok) {
			c := codes.InvalidField.With(fieldName(path, isKey) + " is not valid UTF-8")
			return &c
		}
		switch v := tok.(type) {
		case json.Delim:
			if depth+len(stack) >= maxDepth {
				c := codes.InvalidField.With(fieldName(path, false) + " is nested too deeply")
				return &c
			}
			f := &jsonFrame{path: path, array: v == '['}
			if f.array {
				f.limit = maxArrayDefault
				if n, ok := arrayLimits[leafName(path)]; ok {
					f.limit = n
				}
			}
			stack = append(stack, f)
			continue
		case string:
			if isKey {
				if code := checkText("a field name", v); code != nil {
					return code
				}
				top.key, top.haveKey = fieldKey(v), true
				continue
			}
			if code := checkText(fieldName(path, false), v); code != nil {
				return code
			}
			limit := maxNestedText
			if n, ok := longNestedText[withoutIndexes(path)]; ok && prefix == "" {
				limit = n
			}
			if depth+len(stack) > 1 && len(v) > limit {
				c := codes.InvalidField.With(path + " is too long")
				return &c
			}
			if len(stack) == 1 && prefix == "" && nestedFields[path] {
				if inner := strings.TrimSpace(v); inner != "" && (inner[0] == '[' || inner[0] == '{') {
					if code := checkJSONTextAt([]byte(inner), path, 1); code != nil {
						return code
					}
				}
			}
		}
		if top != nil {
			top.valueDone()
		}
	}
}

// valueDone moves a frame past one value.
func (f *jsonFrame) valueDone() {
	if f.array {
		f.index++
		return
	}
	f.haveKey = false
}

func joinPath(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

func fieldName(path string, isKey bool) string {
	switch {
	case path == "" && isKey:
		return "a field name"
	case path == "":
		return "the body"
	case isKey:
		return "a field name in " + path
	}
	return path
}

// checkFormText refuses a form field whose name or value is not valid UTF-8
// once percent-decoded; control characters are found later, on the JSON the
// form becomes.
func checkFormText(key, value string) *codes.Code {
	if !utf8.ValidString(key) {
		c := codes.InvalidField.With("field name " + strconv.QuoteToASCII(key) + " is not valid UTF-8")
		return &c
	}
	if !utf8.ValidString(value) {
		c := codes.InvalidField.With(key + " is not valid UTF-8")
		return &c
	}
	return nil
}
