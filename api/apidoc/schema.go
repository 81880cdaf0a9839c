// Package apidoc builds the API's OpenAPI 3.1 description from the routes'
// own request and answer types, so that the reference cannot drift from the
// code: a field added to a request type is in the document the next build.
package apidoc

import (
	"reflect"
	"strings"
	"time"
)

// Schema is a JSON Schema (2020-12, as OpenAPI 3.1 has it) as a JSON
// object.
type Schema = map[string]any

// Rule is what a field's value must be beyond its type, shared by every
// operation with a field of that name (amount, currency, ...).
type Rule struct {
	Description string
	Pattern     string
	Format      string
	Enum        []string
	MaxLength   int
	Example     any
}

// Schemas reads Go types into schemas.
type Schemas struct {
	// Types are the schemas of Go types that reflection reads wrongly, a
	// string type that also takes a JSON number, say.
	Types map[reflect.Type]Schema
	// Rules are the field rules by field name.
	Rules map[string]Rule
}

var timeType = reflect.TypeFor[time.Time]()

// Of is the schema of v's type, its field names from the json tags (xml
// tags when xmlNames is set: the XML answers).
func (s Schemas) Of(v any, xmlNames bool) Schema {
	if v == nil {
		return Schema{}
	}
	return s.of(reflect.TypeOf(v), xmlNames, map[reflect.Type]bool{})
}

func (s Schemas) of(t reflect.Type, xmlNames bool, seen map[reflect.Type]bool) Schema {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if sch, ok := s.Types[t]; ok {
		return clone(sch)
	}
	if t == timeType {
		return Schema{"type": "string", "format": "date-time"}
	}
	switch t.Kind() {
	case reflect.String:
		return Schema{"type": "string"}
	case reflect.Bool:
		return Schema{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return Schema{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return Schema{"type": "number"}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return Schema{"type": "string", "contentEncoding": "base64"}
		}
		return Schema{"type": []any{"array", "null"}, "items": s.of(t.Elem(), xmlNames, seen)}
	case reflect.Map:
		return Schema{"type": []any{"object", "null"}, "additionalProperties": s.of(t.Elem(), xmlNames, seen)}
	case reflect.Struct:
		if seen[t] {
			// A type that holds itself is described once.
			return Schema{"type": "object"}
		}
		seen[t] = true
		defer delete(seen, t)
		props := Schema{}
		s.fields(t, xmlNames, seen, props)
		return Schema{"type": "object", "properties": props}
	}
	return Schema{}
}

// fields adds t's fields to props, the fields of embedded structs as its
// own (as encoding/json reads them).
func (s Schemas) fields(t reflect.Type, xmlNames bool, seen map[reflect.Type]bool, props Schema) {
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Type == reflect.TypeFor[struct{}]() || f.Name == "XMLName" {
			continue
		}
		tag := f.Tag.Get("json")
		if xmlNames {
			tag = f.Tag.Get("xml")
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			s.fields(ft, xmlNames, seen, props)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		sch := s.of(f.Type, xmlNames, seen)
		if r, ok := s.Rules[name]; ok {
			r.apply(sch)
		}
		props[name] = sch
	}
}

func (r Rule) apply(sch Schema) {
	if r.Description != "" {
		sch["description"] = r.Description
	}
	if r.Pattern != "" {
		sch["pattern"] = r.Pattern
	}
	if r.Format != "" {
		sch["format"] = r.Format
	}
	if len(r.Enum) > 0 {
		enum := make([]any, len(r.Enum))
		for i, e := range r.Enum {
			enum[i] = e
		}
		sch["enum"] = enum
	}
	if r.MaxLength > 0 {
		sch["maxLength"] = r.MaxLength
	}
	if r.Example != nil {
		sch["examples"] = []any{r.Example}
	}
}

// clone copies a schema deeply enough that rules applied to one field do
// not show on another of the same type.
func clone(s Schema) Schema {
	out := make(Schema, len(s))
	for k, v := range s {
		if m, ok := v.(Schema); ok {
			v = clone(m)
		}
		out[k] = v
	}
	return out
}
