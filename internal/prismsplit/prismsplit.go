// Package prismsplit turns off the dynamic splitting of Beam's Prism
// runner, which transforms/throttle's stateful step cannot run under, for
// this repository's pipeline, binaries and tests. Users of the transform on
// Prism pass the experiment with Beam's --experiments flag instead.
package prismsplit

import (
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
)

// Experiment is the Prism experiment that turns off dynamic splitting of
// bundles ("sdf" in its name notwithstanding, it covers every stage).
//
// Pipelines that use throttle.Adaptive must run on Prism with it. Prism, as
// of Beam v2.77, may run one key of a stateful step in two bundles at once:
// when it splits a slow bundle, it frees every key of the residual, even a
// key whose earlier elements stay in the primary. Both bundles then read
// the key's state as it was and the later commit overwrites the earlier
// one, which for the throttle means a batch of buffered elements is lost
// (see transforms/throttle's TestPrismKeyExclusive). Runners that keep a
// key in one bundle at a time, such as Dataflow, Flink and Spark, need
// nothing.
const Experiment = "prism_disable_sdf_split"

// Avoid adds Experiment to Beam's --experiments flag (jobopts.Experiments)
// if the --runner flag selects Prism: empty (Beam's default), "prism" or
// "PrismRunner". Call it before running the pipeline; pipeline.Run does. It
// reports whether the experiment is now set. A job sent to a Prism job
// server through the universal runner needs
// --experiments=prism_disable_sdf_split on the command line instead.
func Avoid() bool {
	switch *runners.Runner {
	case "", "prism", "PrismRunner":
	default:
		return false
	}
	if exps := WithExperiment(*jobopts.Experiments, Experiment); exps != *jobopts.Experiments {
		*jobopts.Experiments = exps // only once: concurrent runs then only read it
	}
	return true
}

// WithExperiment returns the comma-separated list exps with exp added,
// unless it is already there.
func WithExperiment(exps, exp string) string {
	if exps == "" {
		return exp
	}
	if slices.Contains(strings.Split(exps, ","), exp) {
		return exps
	}
	return exps + "," + exp
}
