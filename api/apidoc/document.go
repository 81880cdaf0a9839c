package apidoc

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// Media types of requests and answers.
const (
	JSON = "application/json"
	Form = "application/x-www-form-urlencoded"
	XML  = "application/xml"
	HTML = "text/html"
	Text = "text/plain"
)

// Security schemes an operation may name.
const (
	// Signed is a merchant request proving the account's key: the
	// encryption_data field or the Paygate-Signature header.
	Signed = "merchantSignature"
	// Admin is the operators' bearer token.
	Admin = "adminToken"
	// Provider is a callback signed by the provider with its own secret.
	Provider = "providerSignature"
)

// Operation describes one route.
type Operation struct {
	Method string
	// Path is the route as the router has it (gin's :name and *name).
	Path        string
	Tag         string
	Summary     string
	Description string
	// Request is a value of the request body's type (nil: no body);
	// Required names its fields that must be sent. Forms says a form
	// body is read as the JSON one is.
	Request  any
	Required []string
	Forms    bool
	// RawRequest is the body's media type and schema when it is not a
	// Go type (a provider's own format).
	RawRequest *Content
	// Query are the query string's parameters.
	Query []Parameter
	// Headers are request headers the operation reads.
	Headers []Parameter
	// Answers are the answers by HTTP status.
	Answers map[int]Answer
	// Security is the scheme the operation needs ("" for none).
	Security string
	// Codes are the result codes the operation answers (docs/result-codes.md).
	Codes []string
	// Example is a request body that the operation accepts.
	Example any
}

// Answer is one answer of an operation.
type Answer struct {
	Description string
	// Media is the answer's media type; Body a value of its type, read
	// with xml tags when Media is XML; Schema instead of Body for an
	// answer that is not a Go type.
	Media   string
	Body    any
	Schema  Schema
	Headers []Parameter
	Example any
	// Also are other media types the same status may answer in.
	Also []Content
}

// Content is a media type and its schema.
type Content struct {
	Media  string
	Schema Schema
}

// Parameter is a query parameter or a header.
type Parameter struct {
	Name        string
	Description string
	Required    bool
	Schema      Schema
}

// Webhook is a request the gateway sends to the merchant (a
// notification): its name, the fields of its form body and its headers.
type Webhook struct {
	Name, Summary, Description string
	// Fields are the body's fields and what each means.
	Fields  map[string]string
	Headers []Parameter
}

// WebhookSchema is the schema of a webhook's body: its fields, and no
// other; a field that does not apply is left out (a fee not yet priced).
func WebhookSchema(w Webhook) Schema {
	props := Schema{}
	for name, d := range w.Fields {
		props[name] = Schema{"type": "string", "description": d}
	}
	return Schema{"type": "object", "properties": props, "required": []any{"notify_type", "notify_id"}, "additionalProperties": false}
}

// Info is the document's header.
type Info struct {
	Title, Version, Description string
	// ResultCodesURL is where result codes are explained; each operation
	// links its codes there.
	ResultCodesURL string
}

// OpenAPIPath is a gin route path in OpenAPI's form: /v1/x/:id becomes
// /v1/x/{id}, and a catch-all *call {call}.
func OpenAPIPath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		if strings.HasPrefix(s, ":") || strings.HasPrefix(s, "*") {
			parts[i] = "{" + s[1:] + "}"
		}
	}
	return strings.Join(parts, "/")
}

// Document is the OpenAPI 3.1 document of ops and the webhooks the
// gateway sends.
func Document(info Info, s Schemas, ops []Operation, webhooks []Webhook) Schema {
	paths := Schema{}
	for _, op := range ops {
		p := OpenAPIPath(op.Path)
		item, _ := paths[p].(Schema)
		if item == nil {
			item = Schema{}
			paths[p] = item
		}
		item[strings.ToLower(op.Method)] = operation(info, s, op)
	}
	hooks := Schema{}
	for _, w := range webhooks {
		var params []any
		for _, h := range w.Headers {
			params = append(params, parameter(h, "header"))
		}
		hooks[w.Name] = Schema{"post": Schema{
			"operationId": "notify" + strings.ToUpper(w.Name[:1]) + w.Name[1:],
			"summary":     w.Summary, "description": w.Description, "parameters": params,
			"requestBody": Schema{"required": true, "content": Schema{Form: Schema{"schema": WebhookSchema(w)}}},
			"responses": Schema{
				"2XX":     Schema{"description": "Delivered: any 2xx acknowledges it."},
				"default": Schema{"description": "Not delivered: it is sent again on the retry schedule (30 s doubling to 1 h, for 72 h)."},
			},
		}}
	}
	return Schema{
		"openapi":  "3.1.0",
		"webhooks": hooks,
		"info": Schema{
			"title": info.Title, "version": info.Version, "description": info.Description,
		},
		"paths": paths,
		"components": Schema{
			"securitySchemes": Schema{
				Signed: Schema{"type": "apiKey", "in": "header", "name": "Paygate-Signature",
					"description": "The account's sign key proved by the Paygate-Signature header (HMAC-SHA256 over the method, path, time, nonce and body), or by the body's encryption_data field: the hex SHA-256 of the operation's signed fields in order, without separators, followed by the sign key. Each operation names its signed fields."},
				Admin: Schema{"type": "http", "scheme": "bearer",
					"description": "PAYGATE_ADMIN_TOKEN; the admin API is off when it is unset."},
				Provider: Schema{"type": "apiKey", "in": "header", "name": "X-Provider-Signature",
					"description": "A provider's callback, signed with the secret it shares with the gateway. The callback is a rumour: the gateway asks the provider before it acts on it."},
			},
		},
	}
}

func operation(info Info, s Schemas, op Operation) Schema {
	o := Schema{
		"operationId": operationID(op),
		"summary":     op.Summary,
	}
	desc := op.Description
	if len(op.Codes) > 0 {
		var b strings.Builder
		b.WriteString(desc)
		b.WriteString("\n\nResult codes:")
		for _, c := range op.Codes {
			b.WriteString(" [" + c + "](" + info.ResultCodesURL + "#" + strings.ToLower(c) + ")")
		}
		desc = strings.TrimSpace(b.String())
		codes := make([]any, len(op.Codes))
		for i, c := range op.Codes {
			codes[i] = c
		}
		o["x-result-codes"] = codes
	}
	if desc != "" {
		o["description"] = desc
	}
	if op.Tag != "" {
		o["tags"] = []any{op.Tag}
	}
	var params []any
	for _, name := range pathParams(op.Path) {
		params = append(params, Schema{"name": name, "in": "path", "required": true, "schema": Schema{"type": "string"}})
	}
	for _, q := range op.Query {
		params = append(params, parameter(q, "query"))
	}
	for _, h := range op.Headers {
		params = append(params, parameter(h, "header"))
	}
	if len(params) > 0 {
		o["parameters"] = params
	}
	if body := requestBody(s, op); body != nil {
		o["requestBody"] = body
	}
	responses := Schema{}
	statuses := make([]int, 0, len(op.Answers))
	for st := range op.Answers {
		statuses = append(statuses, st)
	}
	slices.Sort(statuses)
	for _, st := range statuses {
		responses[strconv.Itoa(st)] = response(s, st, op.Answers[st])
	}
	o["responses"] = responses
	if op.Security != "" {
		o["security"] = []any{Schema{op.Security: []any{}}}
	} else {
		o["security"] = []any{}
	}
	return o
}

func operationID(op Operation) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(op.Method))
	up := true
	for _, r := range OpenAPIPath(op.Path) {
		switch {
		case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9':
			if up && r >= 'a' && r <= 'z' {
				r -= 'a' - 'A'
			}
			b.WriteRune(r)
			up = false
		default:
			up = true
		}
	}
	return b.String()
}

func pathParams(p string) []string {
	var out []string
	for _, s := range strings.Split(p, "/") {
		if strings.HasPrefix(s, ":") || strings.HasPrefix(s, "*") {
			out = append(out, s[1:])
		}
	}
	return out
}

func parameter(p Parameter, in string) Schema {
	sch := p.Schema
	if sch == nil {
		sch = Schema{"type": "string"}
	}
	out := Schema{"name": p.Name, "in": in, "schema": sch}
	if p.Description != "" {
		out["description"] = p.Description
	}
	if p.Required {
		out["required"] = true
	}
	return out
}

// RequestSchema is the schema of op's request body, its required fields
// marked; nil when it has none.
func RequestSchema(s Schemas, op Operation) Schema {
	if op.RawRequest != nil {
		return op.RawRequest.Schema
	}
	if op.Request == nil {
		return nil
	}
	sch := s.Of(op.Request, false)
	if len(op.Required) > 0 {
		req := make([]any, len(op.Required))
		for i, r := range op.Required {
			req[i] = r
		}
		sch["required"] = req
	}
	return sch
}

func requestBody(s Schemas, op Operation) Schema {
	sch := RequestSchema(s, op)
	if sch == nil {
		return nil
	}
	media := JSON
	if op.RawRequest != nil {
		media = op.RawRequest.Media
	}
	json := Schema{"schema": sch}
	if op.Example != nil {
		json["example"] = op.Example
	}
	content := Schema{media: json}
	if op.Forms {
		content[Form] = Schema{"schema": sch,
			"x-note": "Each field as a form value; the nested fields (objects and lists) as JSON text."}
	}
	return Schema{"required": true, "content": content}
}

// AnswerSchema is the schema of an answer's body.
func AnswerSchema(s Schemas, a Answer) Schema {
	if a.Schema != nil {
		return a.Schema
	}
	if a.Body == nil {
		return Schema{"type": "string"}
	}
	return s.Of(a.Body, a.Media == XML)
}

func response(s Schemas, status int, a Answer) Schema {
	desc := a.Description
	if desc == "" {
		desc = http.StatusText(status)
	}
	out := Schema{"description": desc}
	if a.Media != "" {
		c := Schema{"schema": AnswerSchema(s, a)}
		if a.Example != nil {
			c["example"] = a.Example
		}
		content := Schema{a.Media: c}
		for _, o := range a.Also {
			content[o.Media] = Schema{"schema": o.Schema}
		}
		out["content"] = content
	}
	if len(a.Headers) > 0 {
		hs := Schema{}
		for _, h := range a.Headers {
			sch := h.Schema
			if sch == nil {
				sch = Schema{"type": "string"}
			}
			hs[h.Name] = Schema{"description": h.Description, "schema": sch}
		}
		out["headers"] = hs
	}
	return out
}

// WithExamples gives each of ops the request example examples holds under
// its "METHOD path" (gin's path).
func WithExamples(examples map[string]any, ops []Operation) []Operation {
	for i := range ops {
		if ex, ok := examples[ops[i].Method+" "+ops[i].Path]; ok {
			ops[i].Example = ex
		}
	}
	return ops
}

// Described is the same answer under each status, each with its own
// description.
func Described(a Answer, byStatus map[int]string) map[int]Answer {
	out := make(map[int]Answer, len(byStatus))
	for st, d := range byStatus {
		a.Description = d
		out[st] = a
	}
	return out
}

// StringFields is the schema of an object of string fields, those named
// in required required.
func StringFields(fields []string, required ...string) Schema {
	props := Schema{}
	for _, f := range fields {
		props[f] = Schema{"type": "string"}
	}
	sch := Schema{"type": "object", "properties": props}
	if len(required) > 0 {
		req := make([]any, len(required))
		for i, r := range required {
			req[i] = r
		}
		sch["required"] = req
	}
	return sch
}
