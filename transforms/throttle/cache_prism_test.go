package throttle

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/beamthrottle/beamthrottle/internal/testenv/services"
	"github.com/beamthrottle/beamthrottle/testserver"
)

func init() {
	register.DoFn2x0[[]byte, func([]byte)](&genRepeats{})
	beam.RegisterType(reflect.TypeOf((*killingCaller)(nil)).Elem())
}

// genRepeats emits N JSON payloads {"id":i mod Distinct}: each of Distinct
// payloads N/Distinct times.
type genRepeats struct{ N, Distinct int }

func (g *genRepeats) ProcessElement(_ []byte, emit func([]byte)) {
	for i := range g.N {
		emit(fmt.Appendf(nil, `{"id":%d}`, i%g.Distinct))
	}
}

func repeats(n, distinct int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = fmt.Sprintf(`{"id":%d}`, i%distinct)
	}
	return out
}

// TestCacheAnswersRepeats: 1,000 elements holding 100 distinct payloads
// make exactly 100 calls (the quota server's count), with the cache in
// Redis or in process; every element succeeds with its own response (the
// server echoes the payload), and the counters say 100 calls and 900
// answers from the cache.
func TestCacheAnswersRepeats(t *testing.T) {
	const n, distinct = 1000, 100
	for _, backend := range []string{"redis", "memory"} {
		t.Run(backend, func(t *testing.T) {
			addr := ""
			if backend == "redis" {
				addr = services.StartRedis(t).Addr
			}
			srv, err := testserver.NewServer(testserver.Config{})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			p, s := beam.NewPipelineWithRoot()
			in := beam.Reshuffle(s, beam.ParDo(s, &genRepeats{N: n, Distinct: distinct}, beam.Impulse(s)))
			out := Adaptive(s, in, &clientcall.HTTP{URL: srv.Endpoint()},
				WithCache(addr, time.Hour), WithGroups(4), WithBatchSize(50), WithBatchInterval(100*time.Millisecond))
			passert.Equals(s, beam.ParDo(s, bytesToString, out.Success), repeats(n, distinct)...)
			for _, c := range []beam.PCollection{out.ClientThrottled, out.ServerThrottled, out.Errors} {
				passert.Empty(s, c)
			}
			res := runPipeline(t, p, true)
			got := outcomeMetrics(t, res)
			st := srv.Handler.Stats()
			if st.Accepted != distinct || st.Rejected != 0 {
				t.Errorf("server answered %d calls (%d refused), want %d: one per distinct payload", st.Accepted, st.Rejected, distinct)
			}
			if got[metricAccepted] != distinct || got[metricCacheHits] != n-distinct || sumOutcomes(got) != n {
				t.Errorf("counters %v, want %d accepted and %d cache hits, %d in all", got, distinct, n-distinct, n)
			}
			if e := counter(t, res, metricCacheErrors); e != 0 {
				t.Errorf("%d cache errors, want none", e)
			}
		})
	}
}

// killers holds, by test name, the kill switches killingCaller counts its
// calls on: shared by every instance of the caller, so that the switch
// trips at the After-th call of them all.
var killers sync.Map // string → *killSwitch

// killSwitch runs kill once, at the after-th call counted.
type killSwitch struct {
	after int64
	calls atomic.Int64
	kill  func()
}

// killingCaller is the HTTP caller that counts its calls, across all its
// instances, on the kill switch registered under Kill.
type killingCaller struct {
	clientcall.HTTP
	Kill string
}

func (c *killingCaller) Call(ctx context.Context, req []byte) ([]byte, error) {
	if k, ok := killers.Load(c.Kill); ok {
		k := k.(*killSwitch)
		if k.calls.Add(1) == k.after {
			k.kill()
		}
	}
	return c.HTTP.Call(ctx, req)
}

// TestCacheRedisKilled: Redis is killed mid-run, at the 30th call of the
// 100 that fill the cache (counted across the caller's instances). The cache
// fails open: the elements it can no longer answer are called for, the
// faults are counted, and every element still ends in exactly one output,
// here Success (the server has no quota).
func TestCacheRedisKilled(t *testing.T) {
	const n, distinct = 1000, 100
	rs := services.StartRedis(t)
	killers.Store(t.Name(), &killSwitch{after: 30, kill: rs.Kill})
	defer killers.Delete(t.Name())
	srv, err := testserver.NewServer(testserver.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	p, s := beam.NewPipelineWithRoot()
	in := beam.Reshuffle(s, beam.ParDo(s, &genRepeats{N: n, Distinct: distinct}, beam.Impulse(s)))
	caller := &killingCaller{HTTP: clientcall.HTTP{URL: srv.Endpoint()}, Kill: t.Name()}
	out := Adaptive(s, in, caller, WithCache(rs.Addr, time.Hour), WithGroups(4), WithBatchSize(50),
		WithBatchInterval(100*time.Millisecond))
	passert.Equals(s, beam.ParDo(s, bytesToString, out.Success), repeats(n, distinct)...)
	res := runPipeline(t, p, true)
	got := outcomeMetrics(t, res)
	st := srv.Handler.Stats()
	if sumOutcomes(got) != n || got[metricAccepted]+got[metricCacheHits] != n {
		t.Errorf("counters %v, want all %d elements in Success", got, n)
	}
	if errs := counter(t, res, metricCacheErrors); errs == 0 || st.Accepted <= 30 {
		t.Errorf("%d cache errors and %d calls with Redis killed at a 30th call; want errors, and calls in place of the cache",
			errs, st.Accepted)
	}
	t.Logf("counters %v; %d calls; %d cache errors", got, st.Accepted, counter(t, res, metricCacheErrors))
}

// TestCacheDuplicatesNotHeld: 100 identical payloads meet in one group and
// one firing (a batch of 100). While the first is called, the others wait
// for its answer, and only for an answer the cache holds: with the cache
// up, the one call answers them all at once; with the cache down (Redis
// killed) or an error answer (never cached), they are called in the same
// firing. Either way no element waits for another firing (the postponed
// counter stays 0), where each used to wait a whole batch interval for the
// next one.
func TestCacheDuplicatesNotHeld(t *testing.T) {
	const n = 100
	down := services.StartRedis(t)
	down.Kill()
	tests := []struct {
		name      string
		cacheDown bool
		errorRate float64
		calls     int64
		want      map[string]int64
	}{
		{"cache up", false, 0, 1, map[string]int64{metricAccepted: 1, metricCacheHits: n - 1}},
		{"cache down", true, 0, n, map[string]int64{metricAccepted: n}},
		{"error answers", false, 1, n, map[string]int64{metricErrors: n}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			addr := down.Addr
			if !tc.cacheDown {
				addr = services.StartRedis(t).Addr
			}
			srv, err := testserver.NewServer(testserver.Config{ErrorRate: tc.errorRate})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			p, s := beam.NewPipelineWithRoot()
			in := beam.Reshuffle(s, beam.ParDo(s, &genRepeats{N: n, Distinct: 1}, beam.Impulse(s)))
			out := Adaptive(s, in, &clientcall.HTTP{URL: srv.Endpoint()}, WithCache(addr, time.Hour),
				WithMode(ModeSRE), WithStrategy(Route), WithGroups(1), WithBatchSize(n), WithBatchInterval(time.Second))
			passert.Count(s, out.Success, "success", int(tc.want[metricAccepted]+tc.want[metricCacheHits]))
			res := runPipeline(t, p, true)
			got := outcomeMetrics(t, res)
			for _, m := range []string{metricAccepted, metricCacheHits, metricErrors} {
				if got[m] != tc.want[m] {
					t.Errorf("%s = %d, want %d (counters %v)", m, got[m], tc.want[m], got)
				}
			}
			if c := counter(t, res, metricCalls); c != tc.calls {
				t.Errorf("%d calls, want %d", c, tc.calls)
			}
			if pp := counter(t, res, metricPostponed); pp != 0 {
				t.Errorf("%d elements postponed to a later firing, want none: duplicates wait only for an answer the cache holds", pp)
			}
		})
	}
}
