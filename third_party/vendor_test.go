// Tests of third_party: beam/ is what scripts/vendor-beam makes of Beam's
// release and beam.patch, so that go.mod's replace builds against Beam with
// the fixes third_party/README.md lists and nothing else.
package thirdparty

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// beamModule is the module go.mod replaces with beam/.
const beamModule = "github.com/apache/beam/sdks/v2"

// vendored are the paths of Beam's module that scripts/vendor-beam copies,
// without the files and directories that match skipped.
var vendored = []string{"go.mod", "go.sum", "LICENSE", "go/pkg", "go/container/tools"}

// skipped reports whether vendor-beam leaves name (a file's or a
// directory's base name) out: its tar --exclude='*_test.go'
// --exclude=testdata.
func skipped(name string) bool {
	test, _ := filepath.Match("*_test.go", name)
	return test || name == "testdata"
}

// TestVendoredBeam checks that beam/ equals Beam's module at the version
// go.mod requires, as the module cache holds it (downloaded through the
// module proxy if need be), reduced to what scripts/vendor-beam copies and
// patched with beam.patch as it patches it. It fails naming the first path
// (in lexical order) that differs: run scripts/vendor-beam, or refresh the
// patch from beam/.
func TestVendoredBeam(t *testing.T) {
	version := strings.TrimSpace(string(goOutput(t, "..", "list", "-m", "-f", "{{.Version}}", beamModule)))
	// Outside any module, so that go.sum is left alone.
	var mod struct{ Dir, Error string }
	out := goOutput(t, t.TempDir(), "mod", "download", "-json", beamModule+"@"+version)
	if err := json.Unmarshal(out, &mod); err != nil || mod.Error != "" || mod.Dir == "" {
		t.Fatalf("go mod download %s@%s: %v %s\n%s", beamModule, version, err, mod.Error, out)
	}

	want := t.TempDir()
	for _, p := range vendored {
		if err := copyTree(filepath.Join(mod.Dir, p), filepath.Join(want, p)); err != nil {
			t.Fatal(err)
		}
	}
	patch, err := os.ReadFile("beam.patch")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("patch", "-p1", "-d", want)
	cmd.Stdin = bytes.NewReader(patch)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("patch -p1 < beam.patch on %s@%s: %v\n%s", beamModule, version, err, out)
	}

	wantFiles, gotFiles := files(t, want), files(t, "beam")
	for _, p := range mergedPaths(wantFiles, gotFiles) {
		w, inWant := wantFiles[p]
		g, inGot := gotFiles[p]
		switch {
		case !inGot:
			t.Fatalf("beam/%s: missing; %s@%s with beam.patch has it (run scripts/vendor-beam)", p, beamModule, version)
		case !inWant:
			t.Fatalf("beam/%s: not in %s@%s with beam.patch (run scripts/vendor-beam)", p, beamModule, version)
		case !bytes.Equal(w, g):
			t.Fatalf("beam/%s differs from %s@%s with beam.patch (run scripts/vendor-beam, or refresh beam.patch)", p, beamModule, version)
		}
	}
	if len(gotFiles) == 0 {
		t.Fatal("beam/ holds no files")
	}
}

// goOutput runs the go command with args in dir and returns its standard
// output.
func goOutput(t *testing.T, dir string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return out
}

// copyTree copies the file or directory src to dst, leaving out what
// skipped names.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path != src && skipped(d.Name()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}

// files returns the contents of the files under root, by slash-separated
// path relative to root.
func files(t *testing.T, root string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		out[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// mergedPaths returns the paths of a and b, sorted, each once.
func mergedPaths(a, b map[string][]byte) []string {
	var paths []string
	for p := range a {
		paths = append(paths, p)
	}
	for p := range b {
		if _, ok := a[p]; !ok {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	return paths
}
