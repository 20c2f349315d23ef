package apisize

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBudgets holds the public packages to the size of their API: every
// exported name is a promise kept across releases.
func TestBudgets(t *testing.T) {
	for _, c := range []struct {
		dir    string
		budget int
	}{
		{"transforms/adaptive", 50},
		{"transforms/throttle", 60},
		{"transforms/throttle/quota", 45},
		{"transforms/throttle/quota/redisquota", 20},
		{"transforms/throttle/quota/envoyquota", 15},
		{"pipeline", 60},
	} {
		names, err := Names(filepath.Join("..", "..", "..", c.dir))
		if err != nil {
			t.Fatalf("%s: %v", c.dir, err)
		}
		if len(names) == 0 || len(names) > c.budget {
			t.Errorf("%s exports %d names, want 1 to %d: %v", c.dir, len(names), c.budget, names)
		}
	}
}

// TestFileLengths: no non-test Go file under transforms/ is over 400
// lines, so that each can be read in one sitting.
func TestFileLengths(t *testing.T) {
	root := filepath.Join("..", "..", "..", "transforms")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if n := bytes.Count(b, []byte("\n")); n > 400 {
			t.Errorf("%s has %d lines, want at most 400", path, n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
