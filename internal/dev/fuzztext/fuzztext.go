// Package fuzztext is what the fuzz targets of the request decoding share:
// the values a JSON text writes, and the text fields a decoded value holds.
// Only tests import it.
package fuzztext

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
)

// JSONValues adds the scalar values of a JSON text to out; strings that hold
// JSON text are read too, depth levels down.
func JSONValues(raw []byte, out map[string]bool, depth int) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	type frame struct{ object, wantKey bool }
	var stack []frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return
		}
		isKey := len(stack) > 0 && stack[len(stack)-1].object && stack[len(stack)-1].wantKey
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].wantKey = !isKey
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				stack = append(stack, frame{object: true, wantKey: true})
			case '[':
				stack = append(stack, frame{})
			default:
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1].object {
					stack[len(stack)-1].wantKey = true
				}
			}
		case string:
			if isKey {
				continue
			}
			out[v] = true
			if depth > 0 {
				JSONValues([]byte(strings.TrimSpace(v)), out, depth-1)
			}
		case json.Number:
			out[v.String()] = true
		case bool:
			out[map[bool]string{true: "true", false: "false"}[v]] = true
		}
	}
}

// WalkText calls fn with the JSON name and value of every string (or string
// kind) field reachable from v.
func WalkText(v reflect.Value, name string, fn func(field, value string)) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			WalkText(v.Elem(), name, fn)
		}
	case reflect.String:
		fn(name, v.String())
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			WalkText(v.Index(i), name, fn)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			WalkText(v.MapIndex(k), name, fn)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			sf := v.Type().Field(i)
			if !sf.IsExported() {
				continue
			}
			tag, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
			switch {
			case tag == "-":
				continue
			case sf.Anonymous && tag == "":
				WalkText(v.Field(i), name, fn)
			default:
				if tag == "" {
					tag = sf.Name
				}
				WalkText(v.Field(i), tag, fn)
			}
		}
	}
}
