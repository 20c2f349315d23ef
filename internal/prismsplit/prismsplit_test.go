package prismsplit

import (
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
)

func TestWithExperiment(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "x"},
		{"x", "x"},
		{"a", "a,x"},
		{"a,x,b", "a,x,b"},
		{"ax", "ax,x"},
	} {
		if got := WithExperiment(tc.in, "x"); got != tc.want {
			t.Errorf("WithExperiment(%q, x): got %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestAvoid(t *testing.T) {
	oldRunner, oldExps := *runners.Runner, *jobopts.Experiments
	defer func() { *runners.Runner, *jobopts.Experiments = oldRunner, oldExps }()
	for _, tc := range []struct {
		runner, exps string
		ok           bool
		want         string
	}{
		{"", "", true, Experiment},
		{"prism", "a", true, "a," + Experiment},
		{"PrismRunner", Experiment, true, Experiment},
		{"dataflow", "a", false, "a"},
	} {
		*runners.Runner, *jobopts.Experiments = tc.runner, tc.exps
		if ok := Avoid(); ok != tc.ok || *jobopts.Experiments != tc.want {
			t.Errorf("runner %q, experiments %q: Avoid() = %v with experiments %q, want %v with %q",
				tc.runner, tc.exps, ok, *jobopts.Experiments, tc.ok, tc.want)
		}
	}
}
