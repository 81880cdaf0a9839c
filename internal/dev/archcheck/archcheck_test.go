package archcheck

import (
	"context"
	"slices"
	"testing"
)

// TestModuleKeepsTheRules runs the rules over this repository: a wrong
// import anywhere fails make test.
func TestModuleKeepsTheRules(t *testing.T) {
	module, pkgs, err := List(context.Background(), "../../..")
	if err != nil {
		t.Fatal(err)
	}
	if module != "github.com/paygate/paygate" || len(pkgs) < 20 {
		t.Fatalf("listed module %q with %d packages", module, len(pkgs))
	}
	for _, v := range Check(module, pkgs, Rules) {
		t.Errorf("%s", v)
	}
}

// TestFixtureWrongImportsAreCaught runs the same rules over a small module
// whose packages break them on purpose, and names each break.
func TestFixtureWrongImportsAreCaught(t *testing.T) {
	module, pkgs, err := List(context.Background(), "testdata/fixture")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range Check(module, pkgs, Rules) {
		got = append(got, v.String())
	}
	want := []string{
		"internal/domain/money imports models: domain may not import models",
		"internal/domain/money imports net/http: domain is pure and net/http does I/O",
		"stray: belongs to no layer",
		"workflows imports internal/adapters/vault: workflows may not import adapters",
		"workflows imports os: workflows may not do I/O through os",
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations:\n%q\nwant:\n%q", got, want)
	}
}

func TestCheckCases(t *testing.T) {
	const mod = "example.com/m"
	cases := []struct {
		name    string
		pkg     string
		imports []string
		want    []string
	}{
		{name: "domain may use pure std and other domain", pkg: "internal/domain/a",
			imports: []string{"strings", "net/url", "net/netip", "crypto/hmac", mod + "/internal/domain/b"}},
		{name: "domain may not use a third-party module", pkg: "internal/domain/a", imports: []string{"gorm.io/gorm"},
			want: []string{"internal/domain/a imports gorm.io/gorm: domain is pure: standard library only"}},
		{name: "domain may not use database/sql/driver", pkg: "internal/domain/a", imports: []string{"database/sql/driver"},
			want: []string{"internal/domain/a imports database/sql/driver: domain is pure and database/sql/driver does I/O"}},
		{name: "models may use gorm but not gin", pkg: "models", imports: []string{"gorm.io/gorm", "github.com/gin-gonic/gin"},
			want: []string{"models imports github.com/gin-gonic/gin: models may import only gorm.io/, github.com/jackc/ from outside"}},
		{name: "workflows may use the workflow SDK but not the client", pkg: "workflows",
			imports: []string{"go.temporal.io/sdk/workflow", "go.temporal.io/sdk/client"},
			want:    []string{"workflows imports go.temporal.io/sdk/client: workflows may import only go.temporal.io/sdk/workflow, go.temporal.io/sdk/temporal, go.temporal.io/api/ from outside"}},
		{name: "only redeliver of the adapters may name workflows", pkg: "internal/adapters/vault", imports: []string{mod + "/workflows"},
			want: []string{"internal/adapters/vault imports workflows: adapters may not import workflows"}},
		{name: "redeliver may name workflows", pkg: "internal/adapters/redeliver", imports: []string{mod + "/workflows"}},
		{name: "api may not use gorm", pkg: "api", imports: []string{"gorm.io/gorm", "github.com/gin-gonic/gin"},
			want: []string{"api imports gorm.io/gorm: api may not import gorm.io/gorm"}},
		{name: "the console may not use gorm", pkg: "api/console", imports: []string{"gorm.io/gorm"},
			want: []string{"api/console imports gorm.io/gorm: console may not import gorm.io/gorm"}},
		{name: "app may not use gorm", pkg: "app", imports: []string{"gorm.io/gorm"},
			want: []string{"app imports gorm.io/gorm: app may not import gorm.io/gorm"}},
		{name: "activities may not use gorm", pkg: "activities", imports: []string{"gorm.io/gorm"},
			want: []string{"activities imports gorm.io/gorm: activities may not import gorm.io/gorm"}},
		{name: "cmd may not use gorm", pkg: "cmd/paygate", imports: []string{"gorm.io/gorm"},
			want: []string{"cmd/paygate imports gorm.io/gorm: cmd may not import gorm.io/gorm"}},
		{name: "api may not import the composition root", pkg: "api", imports: []string{mod + "/app"},
			want: []string{"api imports app: api may not import app"}},
		{name: "production code may not import dev tools", pkg: "app", imports: []string{mod + "/internal/dev/simulator"},
			want: []string{"app imports internal/dev/simulator: app may not import dev"}},
		{name: "cmd may import dev tools", pkg: "cmd/paygate", imports: []string{mod + "/internal/dev/simulator"}},
		{name: "an import of a package in no layer", pkg: "api", imports: []string{mod + "/misc"},
			want: []string{"api imports misc: imports a package that belongs to no layer"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, v := range Check(mod, []Package{{ImportPath: mod + "/" + tc.pkg, Imports: tc.imports}}, Rules) {
				got = append(got, v.String())
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
