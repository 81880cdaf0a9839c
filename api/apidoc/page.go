package apidoc

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html/template"
	"slices"
	"strconv"
	"strings"
)

// pageStyle is the reference page's only style; the page has no script.
const pageStyle = `body{font:15px/1.5 system-ui,sans-serif;max-width:70rem;margin:2rem auto;padding:0 1rem;color:#1d232a}
h2{border-bottom:1px solid #d0d7de;padding-bottom:.3rem;margin-top:2.5rem}
h3{margin:1.8rem 0 .4rem}code,.m{font-family:ui-monospace,monospace;font-size:.92em}
.m{display:inline-block;min-width:4.5rem;font-weight:600}table{border-collapse:collapse;margin:.4rem 0 1rem;width:100%}
th,td{border:1px solid #d0d7de;padding:.25rem .5rem;text-align:left;vertical-align:top}th{background:#f6f8fa}
.req{color:#b42318;font-weight:600}nav a{margin-right:1rem}`

// PagePolicy is the reference page's Content-Security-Policy: its own
// style, nothing else.
var PagePolicy = func() string {
	sum := sha256.Sum256([]byte(pageStyle))
	return "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) +
		"'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
}()

var pageTemplate = template.Must(template.New("reference").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Info.Title}} reference</title>
<style>{{.Style}}</style></head><body>
<h1>{{.Info.Title}}, version {{.Info.Version}}</h1>
<p>{{.Info.Description}}</p>
<p>The machine-readable description: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1). Result codes: <a href="{{.Info.ResultCodesURL}}">docs/result-codes.md</a>.</p>
<nav>{{range .Tags}}<a href="#{{.ID}}">{{.Name}}</a>{{end}}</nav>
{{range .Tags}}<h2 id="{{.ID}}">{{.Name}}</h2>
{{range .Ops}}<h3 id="{{.ID}}"><span class="m">{{.Method}}</span> <code>{{.Path}}</code></h3>
<p><strong>{{.Summary}}</strong>{{if .Security}} · needs {{.Security}}{{end}}</p>
{{if .Description}}<p>{{.Description}}</p>{{end}}
{{if .Codes}}<p>Result codes: {{range .Codes}}<a href="{{.URL}}"><code>{{.ID}}</code></a> {{end}}</p>{{end}}
{{if .Params}}<table><tr><th>parameter</th><th>in</th><th>description</th></tr>
{{range .Params}}<tr><td><code>{{.Name}}</code>{{if .Required}} <span class="req">required</span>{{end}}</td><td>{{.In}}</td><td>{{.Description}}</td></tr>
{{end}}</table>{{end}}
{{if .Request}}<p>Request body ({{.RequestMedia}}):</p><table><tr><th>field</th><th>type</th><th>rule</th></tr>
{{range .Request}}<tr><td><code>{{.Name}}</code>{{if .Required}} <span class="req">required</span>{{end}}</td><td>{{.Type}}</td><td>{{.Rule}}</td></tr>
{{end}}</table>{{end}}
{{range .Answers}}<p>Answer {{.Status}}{{if .Media}} ({{.Media}}){{end}}: {{.Description}}</p>
{{if .Fields}}<table><tr><th>field</th><th>type</th><th>meaning</th></tr>
{{range .Fields}}<tr><td><code>{{.Name}}</code></td><td>{{.Type}}</td><td>{{.Rule}}</td></tr>
{{end}}</table>{{end}}{{end}}
{{end}}{{end}}
</body></html>
`))

type pageTag struct {
	ID, Name string
	Ops      []pageOp
}

type pageOp struct {
	ID, Method, Path, Summary, Description, Security string
	Codes                                            []pageCode
	Params                                           []pageParam
	RequestMedia                                     string
	Request                                          []pageField
	Answers                                          []pageAnswer
}

type pageCode struct{ ID, URL string }

type pageParam struct {
	Name, In, Description string
	Required              bool
}

type pageField struct {
	Name, Type, Rule string
	Required         bool
}

type pageAnswer struct {
	Status, Media, Description string
	Fields                     []pageField
}

// Page renders ops as one HTML page, readable without JavaScript.
func Page(info Info, s Schemas, ops []Operation) ([]byte, error) {
	var tags []*pageTag
	byName := map[string]*pageTag{}
	for _, op := range ops {
		name := op.Tag
		if name == "" {
			name = "Other"
		}
		t := byName[name]
		if t == nil {
			t = &pageTag{ID: "tag-" + strings.ToLower(strings.ReplaceAll(name, " ", "-")), Name: name}
			byName[name] = t
			tags = append(tags, t)
		}
		t.Ops = append(t.Ops, pageOperation(info, s, op))
	}
	data := struct {
		Info  Info
		Style template.CSS
		Tags  []*pageTag
	}{Info: info, Style: template.CSS(pageStyle)}
	for _, t := range tags {
		data.Tags = append(data.Tags, t)
	}
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, data); err != nil {
		return nil, fmt.Errorf("reference page: %w", err)
	}
	return b.Bytes(), nil
}

func pageOperation(info Info, s Schemas, op Operation) pageOp {
	p := pageOp{ID: operationID(op), Method: op.Method, Path: OpenAPIPath(op.Path), Summary: op.Summary,
		Description: op.Description}
	switch op.Security {
	case Signed:
		p.Security = "the account's signature (encryption_data or Paygate-Signature)"
	case Admin:
		p.Security = "the admin token (Authorization: Bearer)"
	case Provider:
		p.Security = "the provider's signature"
	}
	for _, c := range op.Codes {
		p.Codes = append(p.Codes, pageCode{ID: c, URL: info.ResultCodesURL + "#" + strings.ToLower(c)})
	}
	for _, name := range pathParams(op.Path) {
		p.Params = append(p.Params, pageParam{Name: name, In: "path", Required: true})
	}
	for _, q := range op.Query {
		p.Params = append(p.Params, pageParam{Name: q.Name, In: "query", Description: q.Description, Required: q.Required})
	}
	for _, h := range op.Headers {
		p.Params = append(p.Params, pageParam{Name: h.Name, In: "header", Description: h.Description, Required: h.Required})
	}
	if sch := RequestSchema(s, op); sch != nil {
		p.RequestMedia = JSON
		if op.RawRequest != nil {
			p.RequestMedia = op.RawRequest.Media
		}
		if op.Forms {
			p.RequestMedia += " or " + Form
		}
		p.Request = flatten("", sch)
	}
	statuses := make([]int, 0, len(op.Answers))
	for st := range op.Answers {
		statuses = append(statuses, st)
	}
	slices.Sort(statuses)
	for _, st := range statuses {
		a := op.Answers[st]
		pa := pageAnswer{Status: strconv.Itoa(st), Media: a.Media, Description: a.Description}
		if a.Media == JSON || a.Media == XML {
			pa.Fields = flatten("", AnswerSchema(s, a))
		}
		p.Answers = append(p.Answers, pa)
	}
	return p
}

// flatten lists an object schema's fields, those of nested objects and
// lists under dotted names.
func flatten(prefix string, sch Schema) []pageField {
	props, _ := sch["properties"].(Schema)
	required := map[string]bool{}
	if req, ok := sch["required"].([]any); ok {
		for _, r := range req {
			required[fmt.Sprint(r)] = true
		}
	}
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	slices.Sort(names)
	var out []pageField
	for _, n := range names {
		f, _ := props[n].(Schema)
		out = append(out, pageField{Name: prefix + n, Type: typeName(f), Rule: rule(f), Required: required[n]})
		if items, ok := f["items"].(Schema); ok {
			out = append(out, flatten(prefix+n+"[].", items)...)
		} else if _, ok := f["properties"]; ok {
			out = append(out, flatten(prefix+n+".", f)...)
		}
	}
	return out
}

func typeName(f Schema) string {
	switch t := f["type"].(type) {
	case string:
		return t
	case []any:
		var parts []string
		for _, p := range t {
			if p != "null" {
				parts = append(parts, fmt.Sprint(p))
			}
		}
		return strings.Join(parts, " or ")
	}
	return "any"
}

func rule(f Schema) string {
	var parts []string
	if d, ok := f["description"].(string); ok {
		parts = append(parts, d)
	}
	if p, ok := f["pattern"].(string); ok {
		parts = append(parts, "pattern "+p)
	}
	if e, ok := f["enum"].([]any); ok {
		parts = append(parts, "one of "+strings.Trim(fmt.Sprint(e), "[]"))
	}
	return strings.Join(parts, " ")
}
