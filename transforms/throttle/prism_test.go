package throttle

import (
	"context"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"

	"github.com/beamthrottle/beamthrottle/internal/prismsplit"
)

func init() {
	register.DoFn2x0[[]byte, func(string, int)](&threeKeys{})
	register.DoFn5x1[context.Context, state.Provider, string, int, func(string, int)](&slowCount{})
}

// threeKeys emits N elements spread evenly over the keys a, b and c.
type threeKeys struct{ N int }

func (g *threeKeys) ProcessElement(_ []byte, emit func(string, int)) {
	for i := range g.N {
		emit([]string{"a", "b", "c"}[i%3], i)
	}
}

// slowCount counts its key's elements in value state and emits the count
// after each. It stalls on the 100th element of a key, long enough for
// Prism to see no progress and split the bundle.
type slowCount struct {
	Count state.Value[int]
}

func (f *slowCount) ProcessElement(_ context.Context, sp state.Provider, k string, _ int, emit func(string, int)) error {
	c, _, err := f.Count.Read(sp)
	if err != nil {
		return err
	}
	c++
	if c == 100 {
		time.Sleep(300 * time.Millisecond)
	}
	emit(k, c)
	return f.Count.Write(sp, c)
}

// TestPrismKeyExclusive checks that, with prismsplit.Avoid, a stateful
// step on Prism sees each key in one bundle at a time, so no state update
// is lost: each key's count reaches its number of elements.
//
// Without the experiment this fails on Beam v2.77: Prism splits the
// stalled bundle in the middle of a key's elements, runs the residual at
// once in a second bundle that reads the key's count as it was, and that
// key's count comes out short of its number of elements. That is how
// Adaptive lost buffered batches in a load run (docs/load/results.md,
// docs/upstream/prism-split-releases-keys.md).
func TestPrismKeyExclusive(t *testing.T) {
	if *runners.Runner != "" && *runners.Runner != "prism" {
		t.Skipf("runs on Prism only, not %q", *runners.Runner)
	}
	old := *jobopts.Experiments
	defer func() { *jobopts.Experiments = old }()
	if !prismsplit.Avoid() {
		t.Fatal("prismsplit.Avoid: got false on Prism, want true")
	}
	p, s := beam.NewPipelineWithRoot()
	kv := beam.Reshuffle(s, beam.ParDo(s, &threeKeys{N: 1800}, beam.Impulse(s)))
	counts := beam.ParDo(s, &slowCount{Count: state.MakeValueState[int]("count")}, kv)
	passert.Equals(s, beam.DropKey(s, stats.MaxPerKey(s, counts)), 600, 600, 600)
	runPipeline(t, p, false)
}
