package throttle_test

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/beamthrottle/beamthrottle/transforms/throttle"
)

// Answer repeated requests from an in-process response cache: four
// requests, two of them distinct, make two calls. With a Redis address
// instead of "", the cache is shared by every worker and job.
func ExampleWithCache() {
	p, s := beam.NewPipelineWithRoot()
	requests := beam.Create(s, []byte("a"), []byte("a"), []byte("b"), []byte("a"))

	throttle.Adaptive(s, requests, clientcall.Echo{},
		throttle.WithCache("", time.Hour), throttle.WithBatchInterval(10*time.Millisecond))

	*jobopts.Experiments = "prism_disable_sdf_split"
	res, err := prism.Execute(context.Background(), p)
	if err != nil {
		fmt.Println("pipeline failed:", err)
		return
	}
	counts := map[string]int64{}
	for _, c := range res.Metrics().AllMetrics().Counters() {
		if c.Key.Namespace == "beamthrottle" {
			counts[c.Key.Name] += c.Result()
		}
	}
	fmt.Println("calls:", counts["calls"], "answered from the cache:", counts["cache_hits"])
	// Output: calls: 2 answered from the cache: 2
}
