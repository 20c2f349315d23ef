package throttle

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestMetricNamesDocumented checks that the package doc lists the name of
// every counter the transform defines (the metric* constants), since users
// read the counters by name.
func TestMetricNamesDocumented(t *testing.T) {
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var doc string
	names := map[string]string{} // constant → metric name
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if f.Doc != nil {
			doc += f.Doc.Text()
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if !strings.HasPrefix(id.Name, "metric") || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					v, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					names[id.Name] = v
				}
			}
		}
	}
	if len(names) < 20 {
		t.Fatalf("found %d metric constants, want the 23 or so of metrics.go and quota.go", len(names))
	}
	if !strings.Contains(doc, `"`+namespace+`"`) {
		t.Errorf("package doc does not name the namespace %q", namespace)
	}
	for c, name := range names {
		if !strings.Contains(doc, "\n\t"+name+" ") {
			t.Errorf("package doc does not list %s (%q)", c, name)
		}
	}
}
