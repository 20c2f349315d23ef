package apisize

import (
	"path/filepath"
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
	} {
		names, err := Names(filepath.Join("..", "..", c.dir))
		if err != nil {
			t.Fatalf("%s: %v", c.dir, err)
		}
		if len(names) == 0 || len(names) > c.budget {
			t.Errorf("%s exports %d names, want 1 to %d: %v", c.dir, len(names), c.budget, names)
		}
	}
}
