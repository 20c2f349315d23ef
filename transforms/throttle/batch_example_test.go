package throttle_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/beamthrottle/beamthrottle/transforms/throttle"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*upperBatch)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*wordCost)(nil)).Elem())
}

// upperBatch is a batch caller: one call for many strings. An API that
// fails some items and not others returns a *clientcall.BatchError with one
// error per item (nil for those that succeeded); a whole-call error, such as
// a 429, applies to every item.
type upperBatch struct{}

func (upperBatch) CallBatch(ctx context.Context, reqs []string) ([]string, error) {
	resps := make([]string, len(reqs))
	errs := make([]error, len(reqs))
	failed := false
	for i, r := range reqs {
		if r == "" {
			errs[i], failed = fmt.Errorf("empty request"), true
			continue
		}
		resps[i] = strings.ToUpper(r)
	}
	if failed {
		return resps, &clientcall.BatchError{Errs: errs}
	}
	return resps, nil
}

// wordCost charges an element one unit per word, as an API counting tokens.
type wordCost struct{}

func (wordCost) Cost(s string) (int, error) { return len(strings.Fields(s)), nil }

// Send elements in calls of up to 50 (a batch caller's CallBatch), charge
// each its words against the pacer (and a shared quota, with WithQuota),
// and read the counts back: the empty element fails alone, as an error.
func ExampleWithItemsPerCall() {
	p, s := beam.NewPipelineWithRoot()
	requests := beam.Create(s, "hello world", "", "one two three", "four")

	out := throttle.Adaptive(s, requests, upperBatch{},
		throttle.WithItemsPerCall(50), throttle.WithCost(wordCost{}))
	_ = out // out.Success holds "HELLO WORLD", "ONE TWO THREE", "FOUR"

	*jobopts.Experiments = "prism_disable_sdf_split" // on Prism: see Adaptive
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
	fmt.Println("calls:", counts["calls"], "cost:", counts["cost"],
		"success:", counts["accepted"], "errors:", counts["errors"])
	// Output: calls: 1 cost: 7 success: 3 errors: 1
}
