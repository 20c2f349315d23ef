package runners

import (
	"context"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx" // registers the runners package pipeline runs with
)

// TestRegistered checks the runner list against Beam's registry in a
// binary that imports beamx, as package pipeline does. The registry cannot
// be listed: registering a name Beam already has panics.
func TestRegistered(t *testing.T) {
	for _, r := range List() {
		for _, name := range append([]string{r.Name}, r.Aliases...) {
			t.Run(name, func(t *testing.T) {
				registered := func() (panicked bool) {
					defer func() { panicked = recover() != nil }()
					beam.RegisterRunner(name, func(context.Context, *beam.Pipeline) (beam.PipelineResult, error) {
						return nil, nil
					})
					return false
				}()
				if !registered {
					t.Errorf("runner %q is in List but Beam has no runner of that name in this binary", name)
				}
			})
		}
	}
}

// TestLookup: every name and alias finds its runner, "" finds prism, and
// names are case-sensitive.
func TestLookup(t *testing.T) {
	for _, r := range List() {
		for _, name := range append([]string{r.Name}, r.Aliases...) {
			if got, ok := Lookup(name); !ok || got.Name != r.Name {
				t.Errorf("Lookup(%q) = %q, %v; want %q, true", name, got.Name, ok, r.Name)
			}
		}
	}
	if got, ok := Lookup(""); !ok || got.Name != "prism" {
		t.Errorf("Lookup(\"\") = %q, %v; want prism, true", got.Name, ok)
	}
	for _, name := range []string{"Dataflow", "nosuchrunner"} {
		if _, ok := Lookup(name); ok {
			t.Errorf("Lookup(%q): found, want none", name)
		}
	}
}
