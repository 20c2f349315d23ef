package throttle_test

import (
	"bytes"
	"context"
	"fmt"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/beamthrottle/beamthrottle/transforms/throttle"
)

// liveFirst puts payloads beginning "live" in the high tier and the rest
// (a backfill) in the low one. Priority functions are registered types,
// configured by exported fields.
type liveFirst struct{}

func (liveFirst) Priority(payload []byte) int {
	if bytes.HasPrefix(payload, []byte("live")) {
		return 1
	}
	return -1
}

func init() { beam.RegisterType(reflect.TypeOf((*liveFirst)(nil)).Elem()) }

// Send a live feed ahead of a backfill that shares its API key: each
// group's firing calls for the live elements first, and the per-tier
// counters show what each tier got.
func ExampleWithPriority() {
	p, s := beam.NewPipelineWithRoot()
	requests := beam.Create(s, []byte("backfill-1"), []byte("backfill-2"), []byte("live-1"),
		[]byte("backfill-3"), []byte("live-2"))

	throttle.Adaptive(s, requests, clientcall.Echo{}, throttle.WithPriority(liveFirst{}))

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
	fmt.Println("high:", counts["high_accepted"], "low:", counts["low_accepted"])
	// Output: high: 2 low: 3
}
