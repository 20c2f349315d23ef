package pipeline

import (
	"flag"
	"strings"
	"testing"
)

// TestFlagTable: each flag is in the table once, the rows of a group are
// together (--help shows a group once), and a throttle setting names one
// flag.
func TestFlagTable(t *testing.T) {
	names := map[string]bool{}
	groups := map[string]bool{}
	settings := map[string]string{}
	last := ""
	for _, f := range flagTable(new(Options)) {
		if f.name == "" || f.group == "" || f.usage == "" || f.define == nil {
			t.Errorf("row %q: got group %q, usage %q, define set %t; want all set", f.name, f.group, f.usage, f.define != nil)
		}
		if names[f.name] {
			t.Errorf("--%s has two rows, want one", f.name)
		}
		names[f.name] = true
		if f.group != last && groups[f.group] {
			t.Errorf("--%s is in group %q, whose other rows are not beside it", f.name, f.group)
		}
		groups[f.group], last = true, f.group
		for _, s := range strings.Fields(f.setting) {
			if other, ok := settings[s]; ok {
				t.Errorf("setting %s names --%s and --%s, want one flag", s, other, f.name)
			}
			settings[s] = f.name
		}
		if len(f.option) > 0 && f.setting == "" {
			t.Errorf("--%s passes transform options but names no setting: the transform's errors about it would not name the flag", f.name)
		}
	}
}

// TestHelpGroups: the groups hold every flag RegisterFlags defines, in the
// table's order.
func TestHelpGroups(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	RegisterFlags(fs)
	var grouped []string
	for _, g := range helpGroups() {
		grouped = append(grouped, g.Flags...)
	}
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if len(grouped) != n {
		t.Errorf("groups hold %d flags, RegisterFlags defines %d", len(grouped), n)
	}
	for i, f := range flagTable(new(Options)) {
		if i < len(grouped) && grouped[i] != f.name {
			t.Errorf("group flag %d is --%s, want --%s (the table's order)", i, grouped[i], f.name)
		}
	}
}
