package throttle

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/beamthrottle/beamthrottle/internal/harness/procstat"
	"github.com/beamthrottle/beamthrottle/internal/prismsplit"
	"github.com/beamthrottle/beamthrottle/testserver"
)

func init() {
	register.DoFn3x1[context.Context, []byte, func([]byte), error](&plainCallFn{})
	register.DoFn2x0[[]byte, func(int, []byte)](&benchKeyFn{})
	register.DoFn4x1[context.Context, int, func(*[]byte) bool, func([]byte), error](&groupCallFn{})
	register.Emitter2[int, []byte]()
	register.Iter1[[]byte]()
}

// benchKeyFn and groupCallFn are the keyed-shuffle reference: the elements
// spread over Groups keys (round robin), grouped by key (GroupByKey), and
// the no-op caller called for each, as the transform's stateful step needs
// its input keyed and shuffled anyway.
type benchKeyFn struct {
	Groups int
	n      int
}

func (f *benchKeyFn) ProcessElement(b []byte, emit func(int, []byte)) {
	f.n++
	emit(f.n%f.Groups, b)
}

type groupCallFn struct{}

func (groupCallFn) ProcessElement(ctx context.Context, _ int, iter func(*[]byte) bool, emit func([]byte)) error {
	var b []byte
	for iter(&b) {
		resp, err := clientcall.Echo{}.Call(ctx, b)
		if err != nil {
			return err
		}
		emit(resp)
	}
	return nil
}

// plainCallFn is the baseline: a stateless ParDo calling the same no-op
// caller for every element.
type plainCallFn struct{}

func (plainCallFn) ProcessElement(ctx context.Context, b []byte, emit func([]byte)) error {
	resp, err := clientcall.Echo{}.Call(ctx, b)
	if err != nil {
		return err
	}
	emit(resp)
	return nil
}

const benchElements = 100_000

// runBench runs build's pipeline once per iteration over benchElements
// generated elements on Prism (synthetic processing-time clock, so batch
// intervals cost no wall time) and reports elements/s and the process's
// peak RSS.
func runBench(b *testing.B, build func(s beam.Scope, in beam.PCollection)) float64 {
	return runBenchN(b, benchElements, generate, build)
}

// runBenchN is runBench over n elements made by gen.
func runBenchN(b *testing.B, n int, gen func(beam.Scope, int) beam.PCollection, build func(s beam.Scope, in beam.PCollection)) float64 {
	old := *jobopts.Experiments
	defer func() { *jobopts.Experiments = old }()
	prismsplit.Avoid()
	*jobopts.Experiments = prismsplit.WithExperiment(*jobopts.Experiments, "prism_disable_rtc")
	var total time.Duration
	iters := 0
	for b.Loop() {
		p, s := beam.NewPipelineWithRoot()
		build(s, gen(s, n))
		start := time.Now()
		if err := ptest.Run(p); err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
		iters++
	}
	rate := float64(n*iters) / total.Seconds()
	b.ReportMetric(rate, "elements/s")
	if mb := procstat.PeakRSSMB(); mb > 0 {
		b.ReportMetric(mb, "peak-RSS-MB")
	}
	return rate
}

// BenchmarkAdaptive measures the transform with a no-op caller, next to a
// plain ParDo calling the same caller, and reports their ratio. The
// KeyedShuffle row is the floor of a keyed step: the same calls after a
// GroupByKey over 4 keys; each transform row reports its ratio to the last
// KeyedShuffle run too. One run's rates swing by a third: compare medians
// over -count runs.
func BenchmarkAdaptive(b *testing.B) {
	var plain, shuffle float64
	b.Run("PlainParDo", func(b *testing.B) {
		plain = runBench(b, func(s beam.Scope, in beam.PCollection) { beam.ParDo(s, plainCallFn{}, in) })
	})
	b.Run("KeyedShuffle/groups=4", func(b *testing.B) {
		rate := runBench(b, func(s beam.Scope, in beam.PCollection) {
			beam.ParDo(s, groupCallFn{}, beam.GroupByKey(s, beam.ParDo(s, &benchKeyFn{Groups: 4}, in)))
		})
		if plain > 0 {
			b.ReportMetric(rate/plain, "ratio-to-plain")
		}
		shuffle = rate
	})
	for _, c := range []struct {
		mode          Mode
		groups, batch int
	}{
		{ModeSRE, 1, benchElements}, {ModeSRE, 4, benchElements}, {ModeSRE, 4, 5000},
		{ModeSRE, 4, 500}, {ModeSRE, 4, 100}, {ModePaced, 4, 5000},
	} {
		b.Run(fmt.Sprintf("Throttle/%v/groups=%d/batch=%d", c.mode, c.groups, c.batch), func(b *testing.B) {
			rate := runBench(b, func(s beam.Scope, in beam.PCollection) {
				Adaptive(s, in, clientcall.Echo{}, WithMode(c.mode), WithGroups(c.groups), WithBatchSize(c.batch), WithBatchInterval(100*time.Millisecond))
			})
			if plain > 0 {
				b.ReportMetric(rate/plain, "ratio-to-plain")
			}
			if shuffle > 0 {
				b.ReportMetric(rate/shuffle, "ratio-to-shuffle")
			}
		})
	}
}

// BenchmarkBatching measures what packing elements into calls gains against
// an API whose calls take 5 ms (the quota server on loopback, unlimited,
// with latency): the same 5,000 JSON elements through the HTTP caller, one
// element a call and in JSON-array batches of 10 and 50, 4 groups, one call
// in flight each. It reports elements/s, calls and the gain over one
// element a call.
func BenchmarkBatching(b *testing.B) {
	const n = 5000
	srv, err := testserver.NewServer(testserver.Config{Latency: 5 * time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	var single float64
	for _, perCall := range []int{1, 10, 50} {
		b.Run(fmt.Sprintf("items_per_call=%d", perCall), func(b *testing.B) {
			srv.Handler.Reset()
			rate := runBenchN(b, n, generateJSON, func(s beam.Scope, in beam.PCollection) {
				Adaptive(s, in, &clientcall.HTTP{URL: srv.Endpoint()}, WithMode(ModeSRE), WithGroups(4),
					WithBatchSize(1000), WithBatchInterval(100*time.Millisecond), WithItemsPerCall(perCall))
			})
			st := srv.Handler.Stats()
			b.ReportMetric(float64(st.Accepted)/float64(b.N), "calls/op")
			if perCall == 1 {
				single = rate
			} else if single > 0 {
				b.ReportMetric(rate/single, "gain")
			}
		})
	}
}

// BenchmarkTokensPerMinute measures the pacer alone (no shared quota)
// against a quota counted in tokens: 600 JSON elements costing 1 to 100
// tokens (30,300 in all) through the HTTP caller to the quota server, which
// allows 60,000 tokens a minute as a token bucket of 1,000 a second, with
// WithCost charging each element its tokens, beside the same run counting
// one unit per element. It reports the tokens refused (waste, % of those
// sent) and the tokens accepted per second over the seconds the server was
// busy (utilisation, % of the quota). It runs in real time, as the quota
// server counts the quota on the wall clock.
func BenchmarkTokensPerMinute(b *testing.B) {
	const n, perSecond = 600, 1000
	for _, tc := range []struct {
		name string
		opts []Option
	}{
		{"cost=tokens", []Option{WithCost(tokenCost{})}},
		{"cost=1", nil},
	} {
		b.Run(tc.name, func(b *testing.B) {
			srv, err := testserver.NewServer(testserver.Config{Quota: perSecond, Period: time.Second, CostField: "tokens"})
			if err != nil {
				b.Fatal(err)
			}
			defer srv.Close()
			runBenchN(b, n, generateJSON, func(s beam.Scope, in beam.PCollection) {
				Adaptive(s, in, &clientcall.HTTP{URL: srv.Endpoint()}, append([]Option{WithGroups(4)}, tc.opts...)...)
			})
			st := srv.Handler.Stats()
			busy := st.Series[len(st.Series)-1].T - st.Series[0].T + 1
			b.ReportMetric(100*float64(st.RejectedCost)/float64(st.AcceptedCost+st.RejectedCost), "waste-%")
			b.ReportMetric(100*float64(st.AcceptedCost)/float64(busy*perSecond), "utilisation-%")
		})
	}
}
