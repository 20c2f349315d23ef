package pipeline

import (
	"flag"
	"testing"
)

// TestFlagGroups: every flag RegisterFlags defines is in exactly one group,
// and every grouped name is such a flag.
func TestFlagGroups(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	RegisterFlags(fs)
	seen := map[string]string{}
	for _, g := range FlagGroups() {
		if g.Title == "" || len(g.Flags) == 0 {
			t.Errorf("group %q with flags %q: want a title and flags", g.Title, g.Flags)
		}
		for _, name := range g.Flags {
			if fs.Lookup(name) == nil {
				t.Errorf("group %q lists --%s, which RegisterFlags does not define", g.Title, name)
			}
			if other, ok := seen[name]; ok {
				t.Errorf("--%s is in groups %q and %q, want one", name, other, g.Title)
			}
			seen[name] = g.Title
		}
	}
	fs.VisitAll(func(f *flag.Flag) {
		if _, ok := seen[f.Name]; !ok {
			t.Errorf("--%s is in no group of FlagGroups", f.Name)
		}
	})
}
