package activities

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// gormCalls are the gorm methods that build or run a query.
var gormCalls = map[string]bool{
	"WithContext": true, "Model": true, "Where": true, "Transaction": true, "Exec": true, "Raw": true,
	"Find": true, "First": true, "Take": true, "Create": true, "Save": true, "Updates": true, "Update": true,
	"UpdateColumns": true, "Delete": true, "Pluck": true, "Count": true, "Clauses": true,
}

// TestActivitiesWriteNoQueries: activities reach Postgres only through the
// models functions, which own the queries; none is written here on the
// database handle.
func TestActivitiesWriteNoQueries(t *testing.T) {
	files, err := filepath.Glob("*.go")
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
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || !gormCalls[sel.Sel.Name] {
				return true
			}
			// a.Records.DB.X(...): a query on the handle.
			if inner, ok := sel.X.(*ast.SelectorExpr); ok && inner.Sel.Name == "DB" {
				t.Errorf("%s: a query written on the database handle (.DB.%s); put it in models", fset.Position(call.Pos()), sel.Sel.Name)
			}
			return true
		})
	}
}
