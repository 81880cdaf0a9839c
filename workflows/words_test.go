package workflows_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// connectorWordTypes are the types of the connector vocabulary
// (internal/domain/connector): the words connectors answer in.
var connectorWordTypes = map[string]bool{"DeclineReason": true, "AuthenticationStatus": true, "APMStatus": true}

// connectorWords reads the values of the connector vocabulary's constants
// from its source, so a word added there is checked here too.
func connectorWords(t *testing.T) map[string]string {
	t.Helper()
	words := map[string]string{}
	files, err := filepath.Glob(filepath.Join("..", "internal", "domain", "connector", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				typed := false
				if id, ok := vs.Type.(*ast.Ident); ok && connectorWordTypes[id.Name] {
					typed = true
				}
				for i, v := range vs.Values {
					lit, _ := v.(*ast.BasicLit)
					if call, isCall := v.(*ast.CallExpr); isCall && len(call.Args) == 1 {
						if id, ok := call.Fun.(*ast.Ident); ok && connectorWordTypes[id.Name] {
							lit, typed = call.Args[0].(*ast.BasicLit), true
						}
					}
					if !typed || lit == nil || lit.Kind != token.STRING {
						continue
					}
					word, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					words[word] = vs.Names[i].Name
				}
			}
		}
	}
	if len(words) < 10 {
		t.Fatalf("found only %d connector words: %v", len(words), words)
	}
	return words
}

// TestNoConnectorWordsInWorkflows: workflows and activities use the
// connector vocabulary's constants, never its words as text, so a word
// changed or added in the domain is seen by the compiler everywhere.
func TestNoConnectorWordsInWorkflows(t *testing.T) {
	words := connectorWords(t)
	for _, dir := range []string{".", filepath.Join("..", "activities")} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				if s, err := strconv.Unquote(lit.Value); err == nil {
					if c, found := words[s]; found {
						t.Errorf("%s: %q is the connector word connector.%s: use the constant", fset.Position(lit.Pos()), s, c)
					}
				}
				return true
			})
		}
	}
}
