package throttle_test

import (
	"context"
	"fmt"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/beamthrottle/beamthrottle/transforms/throttle"
)

// Throttle calls to a (here: no-op) caller and read the outcome counts
// back from the pipeline's metrics.
func ExampleAdaptive() {
	p, s := beam.NewPipelineWithRoot()
	requests := beam.Create(s, []byte("a"), []byte("b"), []byte("c"))

	out := throttle.Adaptive(s, requests, clientcall.Echo{},
		throttle.WithGroups(2), throttle.WithBatchSize(100))

	_ = out // out.Success, out.ClientThrottled, out.ServerThrottled, out.Errors

	// On Prism, run with Beam's --experiments=prism_disable_sdf_split (see Adaptive).
	*jobopts.Experiments = "prism_disable_sdf_split"
	res, err := prism.Execute(context.Background(), p)
	if err != nil {
		fmt.Println("pipeline failed:", err)
		return
	}
	var success int64
	for _, c := range res.Metrics().AllMetrics().Counters() {
		if c.Key.Namespace == "beamthrottle" && c.Key.Name == "accepted" {
			success += c.Result()
		}
	}
	fmt.Println("success:", success)
	// Output: success: 3
}
