package layout

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// pkg is what the test reads of go list -json: the imports of a package's
// non-test files, direct and transitive.
type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// listModule returns the module's path and its packages by path within it,
// as go list -json ./... describes them.
func listModule(t *testing.T) (module string, pkgs map[string]pkg) {
	t.Helper()
	module = strings.TrimSpace(string(goCmd(t, "list", "-m")))
	pkgs = map[string]pkg{}
	dec := json.NewDecoder(bytes.NewReader(goCmd(t, "list", "-json", "./...")))
	for {
		var p pkg
		err := dec.Decode(&p)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		rel, ok := within(module, p.ImportPath)
		if !ok {
			t.Fatalf("go list ./... listed %s, outside module %s", p.ImportPath, module)
		}
		pkgs[rel] = p
	}
	if len(pkgs) == 0 {
		t.Fatal("go list ./... listed no packages")
	}
	return module, pkgs
}

// goCmd runs the go command with args at the module's root and returns
// its output.
func goCmd(t *testing.T, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = "../../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out
}

// within returns path relative to module, if it is in it.
func within(module, path string) (string, bool) {
	return strings.CutPrefix(path, module+"/")
}

// matches reports whether rel (a path within the module) is one of list's.
func matches(list []string, rel string) bool {
	for _, p := range list {
		if dir, ok := strings.CutSuffix(p, "/..."); ok {
			if rel == dir || strings.HasPrefix(rel, dir+"/") {
				return true
			}
		} else if rel == p {
			return true
		}
	}
	return false
}

// TestKindsListed: every package of the module outside cmd/ is of one kind,
// product or harness, and every harness named is a package of the module, so
// that a new or moved package must be given its kind.
func TestKindsListed(t *testing.T) {
	_, pkgs := listModule(t)
	for rel := range pkgs {
		if strings.HasPrefix(rel, "cmd/") {
			continue
		}
		p, h := matches(product, rel), matches(harnesses, rel)
		switch {
		case p && h:
			t.Errorf("%s is listed both as product and as a harness", rel)
		case !p && !h:
			t.Errorf("%s is neither product nor harness: add it to one list of internal/harness/layout (and to docs/guide.md's layout)", rel)
		}
	}
	for _, list := range []struct {
		kind  string
		names []string
	}{{"product", product}, {"harness", harnesses}} {
		for _, p := range list.names {
			found := false
			for rel := range pkgs {
				found = found || matches([]string{p}, rel)
			}
			if !found {
				t.Errorf("%s %s matches no package of the module: update internal/harness/layout's lists", list.kind, p)
			}
		}
	}
}

// TestProductImportsNoHarness: no product package's non-test code imports a
// harness, directly or through other packages. A failure names the product
// package, the harness and the chain of imports between them.
func TestProductImportsNoHarness(t *testing.T) {
	module, pkgs := listModule(t)
	var names []string
	for rel := range pkgs {
		names = append(names, rel)
	}
	slices.Sort(names)
	for _, rel := range names {
		if !matches(product, rel) {
			continue
		}
		for _, dep := range pkgs[rel].Deps {
			if d, ok := within(module, dep); ok && matches(harnesses, d) {
				t.Errorf("product package %s imports harness %s: %s", rel, d, strings.Join(chain(module, pkgs, rel, d), " -> "))
			}
		}
	}
}

// chain returns the shortest chain of direct imports from the package from
// to the package to (paths within module), both included.
func chain(module string, pkgs map[string]pkg, from, to string) []string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if cur == to {
			var path []string
			for p := to; p != ""; p = prev[p] {
				path = append(path, p)
			}
			slices.Reverse(path)
			return path
		}
		for _, imp := range pkgs[cur].Imports {
			next, ok := within(module, imp)
			if _, seen := prev[next]; !ok || seen {
				continue
			}
			prev[next] = cur
			queue = append(queue, next)
		}
	}
	return []string{from, "...", to}
}
