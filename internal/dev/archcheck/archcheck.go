// Package archcheck enforces who may import whom (docs/architecture.md).
// Every package of the module belongs to one layer, found by its path; a
// layer names the layers it may import and the outside packages it may
// not. The rules are data, so the test that runs them over the module and
// the test that runs them over a fixture with wrong imports check the same
// thing.
package archcheck

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"sort"
	"strings"
)

// Layer is one room of the house.
type Layer struct {
	Name string
	// Prefixes are the module-relative package paths of the layer: a
	// package is in the layer when its path is a prefix or starts with
	// prefix + "/". The longest matching prefix over all layers wins.
	Prefixes []string
	// May are the layers whose packages this layer may import.
	May []string
	// Pure layers import only the standard library, and none of its
	// packages that do I/O (IOPackages).
	Pure bool
	// Outside are path prefixes of packages from other modules the layer
	// may import; nil allows any.
	Outside []string
	// DenyStd are standard library packages the layer may not import, in
	// the patterns of IOPackages.
	DenyStd []string
	// DenyOutside are path prefixes of packages from other modules the
	// layer may not import, whatever Outside allows.
	DenyOutside []string
	// Except names single packages that may import a layer the rest of
	// their layer may not: module-relative package path → layer names.
	Except map[string][]string
}

// IOPackages are the standard library packages that reach outside the
// process: a pure layer imports none of them. A pattern ending in "/..."
// covers the package and those below it; any other names one package.
// net/url and net/netip only parse, so they are not among them.
var IOPackages = []string{
	"database/sql/...", "net", "net/http/...", "net/mail", "net/rpc/...", "net/smtp", "net/textproto",
	"os", "os/exec", "os/signal", "os/user", "plugin", "syscall", "io/ioutil", "log/syslog",
}

// Rules are the import rules of this repository; docs/architecture.md
// draws them.
var Rules = []Layer{
	{Name: "domain", Prefixes: []string{"internal/domain"}, May: []string{"domain"}, Pure: true},
	{Name: "models", Prefixes: []string{"models"}, May: []string{"domain"},
		Outside: []string{"gorm.io/", "github.com/jackc/"}},
	{Name: "adapters", Prefixes: []string{"internal/adapters"}, May: []string{"domain", "models", "adapters"},
		Except: map[string][]string{
			// It starts the redelivery workflow, so it names its input and queue.
			"internal/adapters/redeliver": {"workflows"},
		}},
	// Activities reach the record through models.Records, never the
	// database itself.
	{Name: "activities", Prefixes: []string{"activities"}, May: []string{"domain", "models", "adapters"},
		DenyOutside: []string{"gorm.io/"}},
	{Name: "workflows", Prefixes: []string{"workflows"}, May: []string{"domain", "activities"},
		Outside: []string{"go.temporal.io/sdk/workflow", "go.temporal.io/sdk/temporal", "go.temporal.io/api/"},
		DenyStd: IOPackages},
	// The API reaches the record through interfaces (api.Records), never
	// the database itself.
	{Name: "api", Prefixes: []string{"api"}, May: []string{"domain", "models", "adapters", "workflows", "api"},
		DenyOutside: []string{"gorm.io/"}},
	// The back office reaches the record through its own interface
	// (console.Records, models.ConsoleRecords over Postgres).
	{Name: "console", Prefixes: []string{"api/console"}, May: []string{"domain", "models", "adapters", "workflows", "api", "console"},
		DenyOutside: []string{"gorm.io/"}},
	{Name: "worker", Prefixes: []string{"worker"}, May: []string{"domain", "activities", "workflows"}},
	// The composition root hands the database handle on as models.DB; it
	// writes no query either.
	{Name: "app", Prefixes: []string{"app"},
		May:         []string{"domain", "models", "adapters", "activities", "workflows", "api", "console", "worker"},
		DenyOutside: []string{"gorm.io/"}},
	{Name: "dev", Prefixes: []string{"internal/dev"}, May: []string{"domain", "models", "adapters", "dev"}},
	// Commands parse flags and call the app, models and adapters; they
	// write no query of their own.
	{Name: "cmd", Prefixes: []string{"cmd"},
		May:         []string{"domain", "models", "adapters", "activities", "workflows", "api", "console", "worker", "app", "dev"},
		DenyOutside: []string{"gorm.io/"}},
	{Name: "integration", Prefixes: []string{"integration"},
		May: []string{"domain", "models", "adapters", "activities", "workflows", "api", "console", "worker", "app", "dev", "client", "integration"}},
	// The Go client is what merchants build into their programs: the
	// signing and notification rules of the domain and the standard
	// library, nothing else of ours or anyone's.
	{Name: "client", Prefixes: []string{"client"}, May: []string{"domain"}, Outside: []string{}},
}

// Package is what the check needs of one package.
type Package struct {
	ImportPath string
	Imports    []string
}

// Violation is one import the rules forbid.
type Violation struct {
	Package string // module-relative
	Import  string // module-relative for the module's packages
	Reason  string
}

func (v Violation) String() string {
	if v.Import == "" {
		return v.Package + ": " + v.Reason
	}
	return v.Package + " imports " + v.Import + ": " + v.Reason
}

// List runs `go list -json ./...` in dir and returns the module path and
// its packages (their non-test imports).
func List(ctx context.Context, dir string) (string, []Package, error) {
	mod, err := run(ctx, dir, "go", "list", "-m")
	if err != nil {
		return "", nil, err
	}
	out, err := run(ctx, dir, "go", "list", "-json=ImportPath,Imports", "./...")
	if err != nil {
		return "", nil, err
	}
	var pkgs []Package
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p Package
		err := dec.Decode(&p)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", nil, fmt.Errorf("read go list: %w", err)
		}
		pkgs = append(pkgs, p)
	}
	return strings.TrimSpace(string(mod)), pkgs, nil
}

func run(ctx context.Context, dir string, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, stderr.String())
	}
	return out, nil
}

// Check applies rules to the packages of module and returns every
// violation, sorted. A package of the module that no layer claims is a
// violation too, so a new folder gets a place in the rules.
func Check(module string, pkgs []Package, rules []Layer) []Violation {
	var out []Violation
	for _, p := range pkgs {
		rel, ok := relative(module, p.ImportPath)
		if !ok {
			continue
		}
		from, ok := layerOf(rel, rules)
		if !ok {
			out = append(out, Violation{Package: rel, Reason: "belongs to no layer"})
			continue
		}
		for _, imp := range p.Imports {
			if reason := forbidden(module, rel, from, imp, rules); reason != "" {
				shown := imp
				if r, ok := relative(module, imp); ok {
					shown = r
				}
				out = append(out, Violation{Package: rel, Import: shown, Reason: reason})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// forbidden says why the package rel of layer from may not import imp, or
// "" when it may.
func forbidden(module, rel string, from Layer, imp string, rules []Layer) string {
	if target, ok := relative(module, imp); ok {
		to, ok := layerOf(target, rules)
		if !ok {
			return "imports a package that belongs to no layer"
		}
		if slices.Contains(from.May, to.Name) || slices.Contains(from.Except[rel], to.Name) {
			return ""
		}
		return fmt.Sprintf("%s may not import %s", from.Name, to.Name)
	}
	if standard(imp) {
		if from.Pure && underAny(imp, IOPackages) {
			return fmt.Sprintf("%s is pure and %s does I/O", from.Name, imp)
		}
		if underAny(imp, from.DenyStd) {
			return fmt.Sprintf("%s may not do I/O through %s", from.Name, imp)
		}
		return ""
	}
	if from.Pure {
		return fmt.Sprintf("%s is pure: standard library only", from.Name)
	}
	for _, p := range from.DenyOutside {
		if strings.HasPrefix(imp, p) || imp == strings.TrimSuffix(p, "/") {
			return fmt.Sprintf("%s may not import %s", from.Name, imp)
		}
	}
	if from.Outside == nil {
		return ""
	}
	for _, p := range from.Outside {
		if strings.HasPrefix(imp, p) || imp == strings.TrimSuffix(p, "/") {
			return ""
		}
	}
	return fmt.Sprintf("%s may import only %s from outside", from.Name, strings.Join(from.Outside, ", "))
}

// layerOf finds the layer of a module-relative path by its longest prefix.
func layerOf(rel string, rules []Layer) (Layer, bool) {
	best, bestLen := Layer{}, -1
	for _, l := range rules {
		for _, p := range l.Prefixes {
			if under(rel, p) && len(p) > bestLen {
				best, bestLen = l, len(p)
			}
		}
	}
	return best, bestLen >= 0
}

func relative(module, path string) (string, bool) {
	if path == module {
		return ".", true
	}
	rel, ok := strings.CutPrefix(path, module+"/")
	return rel, ok
}

func under(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

// underAny reports whether path matches one of the patterns (see
// IOPackages).
func underAny(path string, patterns []string) bool {
	for _, p := range patterns {
		if tree, ok := strings.CutSuffix(p, "/..."); ok && under(path, tree) || path == p {
			return true
		}
	}
	return false
}

// standard reports whether an import path is the standard library's: its
// first element has no dot.
func standard(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}
