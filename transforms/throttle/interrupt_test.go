package throttle

import (
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/google/go-cmp/cmp"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/beamthrottle/beamthrottle/internal/interrupt"
)

func init() {
	register.Function1x1[Record, bool](interruptedOK)
}

// TestFiringInterrupted: once the pipeline is interrupted, a firing calls
// nothing more: each element it holds is routed as client-throttled with
// interruptedMessage, or as server-throttled if its last attempt was
// answered 429, saying so; Drop drops both.
func TestFiringInterrupted(t *testing.T) {
	end := interrupt.Begin()
	defer end()
	tests := []struct {
		strategy Strategy
		want     counts
	}{
		{Route, counts{CT: 2, ST: 1}},
		{Postpone, counts{CT: 2, ST: 1}},
		{Drop, counts{Dropped: 3}},
	}
	for _, tc := range tests {
		t.Run(string(tc.strategy), func(t *testing.T) {
			var o outs
			p := &scriptPolicy{}
			fr := testFiring(&throttleFn{settings: settings{Strategy: tc.strategy}}, p, &o)
			its := items("x0", "x1", "x6")
			its[2].Attempts, its[2].Last = 1, failure{Outcome: OutcomeServerThrottled, Status: 429, Error: "429"}
			fr.run(its)
			if got := countsOf(fr, &o); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
			if fr.t.calls != 0 || fr.t.requests != 0 || len(p.recorded) != 0 {
				t.Errorf("%d calls, %d requests, %d answers recorded; want none", fr.t.calls, fr.t.requests, len(p.recorded))
			}
			if fr.t.interrupted != 3 {
				t.Errorf("interrupted = %d, want 3", fr.t.interrupted)
			}
			for _, r := range o.st {
				if want := "429. " + interruptedAgain; r.Error != want || r.StatusCode != 429 || r.Attempts != 1 {
					t.Errorf("server-throttled record %+v, want error %q, status 429 and 1 attempt", r, want)
				}
			}
			for _, r := range o.ct {
				if d := cmp.Diff(Record{Input: r.Input, Error: interruptedMessage, Outcome: OutcomeClientThrottled, Probability: 1, Group: "g",
					LastAttempt: t0.UnixMicro()}, r); d != "" {
					t.Errorf("client-throttled record (-want +got):\n%s", d)
				}
			}
		})
	}
}

func interruptedOK(r Record) bool {
	return r.Outcome == OutcomeClientThrottled && r.Error == interruptedMessage && r.Attempts == 0 && len(r.Input) > 0
}

// TestInterruptedPipeline: a pipeline interrupted from its start calls
// nothing, routes every element to ClientThrottled as interrupted, and ends.
func TestInterruptedPipeline(t *testing.T) {
	const n = 500
	end := interrupt.Begin()
	defer end()
	p, s := beam.NewPipelineWithRoot()
	out := Adaptive(s, generate(s, n), clientcall.Echo{}, WithBatchSize(10), WithGroups(3))
	passert.Count(s, out.ClientThrottled, "client_throttled", n)
	passert.True(s, out.ClientThrottled, interruptedOK)
	passert.Empty(s, out.Success)
	passert.Empty(s, out.ServerThrottled)
	passert.Empty(s, out.Errors)
	res := runPipeline(t, p, false)
	if calls, got := counter(t, res, metricCalls), counter(t, res, metricInterrupted); calls != 0 || got != n {
		t.Errorf("%d calls and %d interrupted, want 0 and %d", calls, got, n)
	}
}
