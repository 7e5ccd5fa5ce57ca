package lint

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/stratadb/strata"

// forbidden lists, per package prefix, the package prefixes it must not
// import (STYLE.md "Layout": imports only point downward; the table store is
// a library of its own; meta knows neither the runtime nor SQL).
var forbidden = map[string][]string{
	"internal/base":    {"internal/types", "dataflow", "table", "meta", "sql", "connector", "engine", "server", "demo", "web", "cmd"},
	"internal/suggest": {"internal/types", "dataflow", "table", "meta", "sql", "connector", "engine", "server", "demo", "web", "cmd"},
	"internal/types":   {"dataflow", "table", "meta", "sql", "connector", "engine", "server", "demo", "web", "cmd"},
	"internal/duckdb":  {"dataflow", "table", "meta", "sql", "connector", "engine", "server", "demo", "web", "cmd"},
	"dataflow":         {"table", "meta", "sql", "connector", "engine", "server", "demo", "web", "cmd"},
	"table":            {"dataflow", "meta", "sql", "connector", "engine", "server", "demo", "web", "cmd"},
	"meta":             {"dataflow", "sql", "connector", "engine", "server", "demo", "web", "cmd"},
	"sql":              {"engine", "server", "demo", "web", "cmd"},
	"connector":        {"sql", "engine", "server", "demo", "web", "cmd"},
	"topology":         {"sql", "engine", "server", "demo", "web", "cmd"},
	"engine":           {"server", "demo", "web", "cmd"},
	"server":           {"demo", "web", "cmd"},
	"demo":             {"web", "cmd"},
}

// repoRoot returns the module root (two levels above this package).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found at %s: %v", root, err)
	}
	return root
}

// packages returns every directory holding Go files, relative to root, with
// the imports of its non-test files.
func packages(t *testing.T, root string) map[string][]string {
	t.Helper()
	pkgs := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		if _, ok := pkgs[rel]; !ok {
			pkgs[rel] = nil
		}
		if strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			pkgs[rel] = append(pkgs[rel], p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

func under(pkg, prefix string) bool {
	return pkg == prefix || strings.HasPrefix(pkg, prefix+"/")
}

func TestImportsPointDownward(t *testing.T) {
	root := repoRoot(t)
	for pkg, imports := range packages(t, root) {
		for prefix, bans := range forbidden {
			if !under(pkg, prefix) {
				continue
			}
			for _, imp := range imports {
				if !strings.HasPrefix(imp, module+"/") {
					continue
				}
				target := strings.TrimPrefix(imp, module+"/")
				for _, ban := range bans {
					if under(target, ban) {
						t.Errorf("%s imports %s: %s must not depend on %s", pkg, target, prefix, ban)
					}
				}
			}
		}
	}
}

func TestEveryPackageHasDocGo(t *testing.T) {
	root := repoRoot(t)
	var missing []string
	for pkg := range packages(t, root) {
		if pkg == "." {
			continue
		}
		if _, err := os.Stat(filepath.Join(root, pkg, "doc.go")); err != nil {
			// A command documents itself in main.go.
			if strings.HasPrefix(pkg, "cmd/") {
				continue
			}
			missing = append(missing, pkg)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("packages without doc.go: %s", strings.Join(missing, ", "))
	}
}
