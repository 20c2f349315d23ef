package sim_test

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/internal/harness/sim"
)

const ms = time.Millisecond

// step is one request to a backend: NextAvailable(at) must be next, then
// Take(at) must answer ok and retryAfter.
type step struct {
	at         time.Duration
	next       time.Duration
	ok         bool
	retryAfter time.Duration
}

func TestBackends(t *testing.T) {
	steady := []sim.Phase{{Capacity: 1}}
	// Capacity 1 until 1 s, an outage until 2 s, then capacity 2.
	outage := []sim.Phase{{Capacity: 1}, {At: time.Second, Capacity: 1, Outage: true}, {At: 2 * time.Second, Capacity: 2}}
	tests := []struct {
		name   string
		model  sim.BackendModel
		rate   float64
		phases []sim.Phase
		steps  []step
	}{
		{
			name: "one-token bucket", model: sim.TokenBucket(0, true), rate: 10, phases: steady,
			steps: []step{
				{at: 0, next: 0, ok: true},
				{at: 0, next: 100 * ms, retryAfter: time.Second},
				{at: 50 * ms, next: 100 * ms, retryAfter: time.Second},
				{at: 100 * ms, next: 100 * ms, ok: true},
				{at: 250 * ms, next: 250 * ms, ok: true}, // one token at most
				{at: 300 * ms, next: 350 * ms, retryAfter: time.Second},
			},
		},
		{
			name: "bucket of 1 s, no Retry-After", model: sim.TokenBucket(time.Second, false), rate: 3, phases: steady,
			steps: []step{
				{at: 0, next: 0, ok: true}, {at: 0, next: 0, ok: true}, {at: 0, next: 0, ok: true},
				{at: 0, next: 333_333_334}, // 1/3 s, rounded up to the nanosecond
				{at: 2 * time.Second, next: 2 * time.Second, ok: true},
			},
		},
		{
			name: "bucket of 2 s, 1.5 s to wait", model: sim.TokenBucket(2*time.Second, true), rate: 1, phases: steady,
			steps: []step{
				{at: 0, next: 0, ok: true}, {at: 0, next: 0, ok: true},
				{at: 500 * ms, next: time.Second, retryAfter: time.Second},
				{at: 2 * time.Second, next: 2 * time.Second, ok: true}, // full again: two tokens
				{at: 2 * time.Second, next: 2 * time.Second, ok: true},
				{at: 2 * time.Second, next: 3 * time.Second, retryAfter: time.Second},
			},
		},
		{
			name: "bucket across an outage", model: sim.TokenBucket(time.Second, true), rate: 10, phases: outage,
			steps: []step{
				{at: 900 * ms, next: 900 * ms, ok: true},
				// Empty in the outage; at capacity 20 the first token comes 50 ms after it.
				{at: 1500 * ms, next: 2050 * ms, retryAfter: time.Second},
				{at: 2050 * ms, next: 2050 * ms, ok: true},
			},
		},
		{
			name: "bucket after a quota drop holds the new depth", model: sim.TokenBucket(time.Second, true), rate: 2,
			phases: []sim.Phase{{Capacity: 1}, {At: time.Second, Capacity: 0.5}},
			steps: []step{
				{at: time.Second, next: time.Second, ok: true}, // 2 tokens before, 1 after
				{at: time.Second, next: 2 * time.Second, retryAfter: time.Second},
			},
		},
		{
			name: "one-token bucket refilled every 100 ms", model: sim.SteppedTokenBucket(0, 100*ms, true), rate: 10, phases: steady,
			steps: []step{
				{at: 0, next: 0, ok: true},
				{at: 150 * ms, next: 150 * ms, ok: true}, // the token of 100 ms
				{at: 199 * ms, next: 200 * ms, retryAfter: time.Second},
				{at: 200 * ms, next: 200 * ms, ok: true},
				{at: 250 * ms, next: 300 * ms, retryAfter: time.Second},
			},
		},
		{
			name: "fixed 1 s window", model: sim.FixedWindow(time.Second, true), rate: 3, phases: steady,
			steps: []step{
				{at: 100 * ms, next: 100 * ms, ok: true}, {at: 100 * ms, next: 100 * ms, ok: true}, {at: 100 * ms, next: 100 * ms, ok: true},
				{at: 100 * ms, next: time.Second, retryAfter: time.Second},
				{at: 999 * ms, next: time.Second, retryAfter: time.Second},
				{at: time.Second, next: time.Second, ok: true},
			},
		},
		{
			name: "fixed 5 s window, Retry-After of the wait", model: sim.FixedWindow(5*time.Second, true), rate: 0.4, phases: steady,
			steps: []step{
				{at: 0, next: 0, ok: true}, {at: 500 * ms, next: 500 * ms, ok: true},
				{at: 600 * ms, next: 5 * time.Second, retryAfter: 5 * time.Second},
				{at: 3900 * ms, next: 5 * time.Second, retryAfter: 2 * time.Second},
				{at: 7 * time.Second, next: 7 * time.Second, ok: true},
			},
		},
		{
			name: "fixed window without Retry-After", model: sim.FixedWindow(5*time.Second, false), rate: 0.2, phases: steady,
			steps: []step{{at: 0, next: 0, ok: true}, {at: time.Second, next: 5 * time.Second}},
		},
		{
			name: "fixed window across an outage", model: sim.FixedWindow(time.Second, true), rate: 1, phases: outage,
			steps: []step{
				{at: 900 * ms, next: 900 * ms, ok: true},
				{at: 1500 * ms, next: 2 * time.Second, retryAfter: time.Second},
				{at: 2 * time.Second, next: 2 * time.Second, ok: true},
				{at: 2 * time.Second, next: 2 * time.Second, ok: true},
				{at: 2 * time.Second, next: 3 * time.Second, retryAfter: time.Second},
			},
		},
		{
			name: "GCRA, no burst", model: sim.GCRA(1, true), rate: 10, phases: steady,
			steps: []step{
				{at: 0, next: 0, ok: true},
				{at: 50 * ms, next: 100 * ms, retryAfter: time.Second},
				{at: 100 * ms, next: 100 * ms, ok: true},
				{at: 350 * ms, next: 350 * ms, ok: true},
				{at: 400 * ms, next: 450 * ms, retryAfter: time.Second},
			},
		},
		{
			name: "GCRA, burst of 3", model: sim.GCRA(3, false), rate: 10, phases: steady,
			steps: []step{
				{at: 0, next: 0, ok: true}, {at: 0, next: 0, ok: true}, {at: 0, next: 0, ok: true},
				{at: 0, next: 100 * ms},
				{at: 100 * ms, next: 100 * ms, ok: true},
			},
		},
		{
			name: "GCRA across an outage and a doubled rate", model: sim.GCRA(1, true), rate: 10, phases: outage,
			steps: []step{
				{at: 950 * ms, next: 950 * ms, ok: true},
				{at: 1500 * ms, next: 2 * time.Second, retryAfter: time.Second},
				{at: 2 * time.Second, next: 2 * time.Second, ok: true},
				{at: 2010 * ms, next: 2050 * ms, retryAfter: time.Second}, // 20/s: 50 ms apart
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.model.New(sim.NewCapacity(tc.rate, tc.phases), 1)
			for i, s := range tc.steps {
				if got := b.NextAvailable(s.at); got != s.next {
					t.Errorf("step %d: NextAvailable(%v) = %v, want %v", i, s.at, got, s.next)
				}
				if ok, ra := b.Take(s.at); ok != s.ok || ra != s.retryAfter {
					t.Errorf("step %d: Take(%v) = %v, %v, want %v, %v", i, s.at, ok, ra, s.ok, s.retryAfter)
				}
			}
		})
	}
}

// TestBackendOracle checks, on random request times, what an oracle relies
// on for every standard backend: Take(at) accepts iff NextAvailable(at) is
// at, Take(NextAvailable(at)) accepts, and calling NextAvailable changes no
// answer of Take.
func TestBackendOracle(t *testing.T) {
	phases := []sim.Phase{
		{Capacity: 1}, {At: 7 * time.Second, Capacity: 0.5}, {At: 13 * time.Second, Capacity: 1, Outage: true},
		{At: 17 * time.Second, Capacity: 2.5}, {At: 31 * time.Second, Capacity: 1},
	}
	models := []sim.BackendModel{
		sim.TokenBucket(time.Second, true), sim.TokenBucket(0, false), sim.SteppedTokenBucket(0, 100*ms, true),
		sim.SteppedTokenBucket(time.Second, 100*ms, false), sim.FixedWindow(time.Second, true),
		sim.FixedWindow(5*time.Second, false), sim.FixedWindow(time.Minute, true), sim.DriftingWindow(4*time.Second, time.Second, true),
		sim.DriftingWindow(time.Second, 500*ms, false), sim.GCRA(1, true), sim.GCRA(4, false),
		// Either token limit may bind first, as the draws go.
		sim.TokenLimits(sim.TokenQuota{Window: 5 * time.Second, Requests: 40, Input: 600, Output: 150,
			InputMedian: 10, InputSigma: 0.8, OutputMedian: 3, OutputSigma: 1}),
		sim.TokenLimits(sim.TokenQuota{Window: time.Second, Requests: 4, Input: 60, Output: 20,
			InputMedian: 10, InputSigma: 0.5, OutputMedian: 3, OutputSigma: 0.5, RetryAfter: true}),
	}
	for _, m := range models {
		for _, rate := range []float64{3, 10, 100} {
			t.Run(m.Name, func(t *testing.T) {
				rnd := rand.New(rand.NewPCG(1, uint64(rate)))
				capacity := sim.NewCapacity(rate, phases)
				probed, plain := m.New(capacity, 7), m.New(capacity, 7)
				var at time.Duration
				for i := range 5000 {
					at += time.Duration(rnd.ExpFloat64() / (2 * rate) * 1e9)
					next := probed.NextAvailable(at)
					ok, ra := probed.Take(at)
					if want, wantRA := plain.Take(at); ok != want || ra != wantRA {
						t.Fatalf("request %d at %v: Take after NextAvailable = %v, %v; without = %v, %v", i, at, ok, ra, want, wantRA)
					}
					if ok != (next == at) {
						t.Fatalf("request %d at %v: Take = %v, NextAvailable = %v", i, at, ok, next)
					}
					if ok || next == sim.Never || rnd.IntN(4) > 0 {
						continue
					}
					// Jump to the time it said.
					at = next
					if ok, _ := probed.Take(at); !ok {
						t.Fatalf("request %d: Take(NextAvailable) = Take(%v) rejected", i, at)
					}
					plain.Take(at)
				}
			})
		}
	}
}

func TestBackendNames(t *testing.T) {
	tests := []struct {
		model sim.BackendModel
		want  string
	}{
		{sim.DefaultBackend(), "token-bucket-1s-ra"},
		{sim.TokenBucket(0, false), "one-token"},
		{sim.SteppedTokenBucket(0, 100*ms, true), "one-token-step-100ms-ra"},
		{sim.FixedWindow(time.Minute, false), "fixed-60s"},
		{sim.GCRA(0, true), "gcra-ra"},
		{sim.GCRA(10, false), "gcra-burst-10"},
		{sim.Queue(), "queue"},
	}
	for _, tc := range tests {
		if tc.model.Name != tc.want {
			t.Errorf("got name %q, want %q", tc.model.Name, tc.want)
		}
	}
}

// TestDriftingWindow: with a quota of one request per window, each request
// taken as soon as it can be shows the windows' starts: each window lasts
// 4 to 5 s, not all alike, the first ends before 5 s, and a seed gives the
// same windows again.
func TestDriftingWindow(t *testing.T) {
	m := sim.DriftingWindow(4*time.Second, time.Second, false)
	starts := func(seed uint64) []time.Duration {
		b := m.New(sim.NewCapacity(1/4.5, []sim.Phase{{Capacity: 1}}), seed)
		var out []time.Duration
		for at := time.Duration(0); len(out) < 20; {
			if ok, _ := b.Take(at); !ok {
				t.Fatalf("Take(%v) refused at the time NextAvailable gave", at)
			}
			if ok, _ := b.Take(at); ok {
				t.Fatalf("a second Take(%v) in the same window accepted", at)
			}
			at = b.NextAvailable(at)
			out = append(out, at)
		}
		return out
	}
	got := starts(1)
	if got[0] <= 0 || got[0] >= 5*time.Second {
		t.Errorf("first window ends at %v, want in (0, 5s)", got[0])
	}
	lengths := map[time.Duration]bool{}
	for i := 1; i < len(got); i++ {
		d := got[i] - got[i-1]
		if d < 4*time.Second || d >= 5*time.Second {
			t.Errorf("window %d lasts %v, want in [4s, 5s)", i, d)
		}
		lengths[d] = true
	}
	if len(lengths) < 2 {
		t.Errorf("every window lasts the same, want them to drift")
	}
	if again := starts(1); !slices.Equal(again, got) {
		t.Errorf("seed 1 again gives %v, want %v", again, got)
	}
	if other := starts(2); slices.Equal(other, got) {
		t.Errorf("seed 2 gives the same windows as seed 1")
	}
}

// TestQueue checks the queueing server as the test server's Mode Queue
// serves: turns 1/capacity apart in arrival order, each request waiting for
// its own, nothing refused; a turn in an outage waits for its end, at the
// new rate; Take takes a turn as Admit does.
func TestQueue(t *testing.T) {
	type admit struct {
		at, next, wait time.Duration // NextAvailable(at) must be next, then Admit(at) must wait wait
	}
	tests := []struct {
		name   string
		phases []sim.Phase
		steps  []admit
	}{
		{
			name: "steady", phases: []sim.Phase{{Capacity: 1}},
			steps: []admit{
				{at: 0, next: 0, wait: 0},
				{at: 0, next: 100 * ms, wait: 100 * ms},
				{at: 50 * ms, next: 200 * ms, wait: 150 * ms},
				{at: 250 * ms, next: 300 * ms, wait: 50 * ms},
				{at: time.Second, next: time.Second, wait: 0}, // the queue drained
			},
		},
		{
			name: "across an outage and a doubled rate", phases: []sim.Phase{{Capacity: 1},
				{At: time.Second, Capacity: 1, Outage: true}, {At: 2 * time.Second, Capacity: 2}},
			steps: []admit{
				{at: 950 * ms, next: 950 * ms, wait: 0},
				{at: 960 * ms, next: 2 * time.Second, wait: 1040 * ms}, // its turn would begin in the outage
				{at: 2 * time.Second, next: 2050 * ms, wait: 50 * ms},  // 20/s: 50 ms apart
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := sim.Queue().New(sim.NewCapacity(10, tc.phases), 1)
			q, ok := b.(sim.Queuer)
			if !ok {
				t.Fatalf("Queue's backend %T is not a Queuer", b)
			}
			for i, s := range tc.steps {
				if got := q.NextAvailable(s.at); got != s.next {
					t.Errorf("step %d: NextAvailable(%v) = %v, want %v", i, s.at, got, s.next)
				}
				if ok, ra, wait := q.Admit(s.at); !ok || ra != 0 || wait != s.wait {
					t.Errorf("step %d: Admit(%v) = %v, %v, %v, want true, 0, %v", i, s.at, ok, ra, wait, s.wait)
				}
			}
		})
	}

	b := sim.Queue().New(sim.NewCapacity(10, []sim.Phase{{Capacity: 1}}), 1)
	q := b.(sim.Queuer)
	if ok, ra := b.Take(0); !ok || ra != 0 {
		t.Errorf("Take(0) = %v, %v, want true, 0", ok, ra)
	}
	if _, _, wait := q.Admit(0); wait != 100*ms {
		t.Errorf("Admit(0) after Take(0) waits %v, want 100ms: Take takes a turn", wait)
	}

	// An outage that never ends: refused, as no turn would come.
	b = sim.Queue().New(sim.NewCapacity(10, []sim.Phase{{Capacity: 1}, {At: time.Second, Outage: true}}), 1)
	q = b.(sim.Queuer)
	if got := q.NextAvailable(1500 * ms); got != sim.Never {
		t.Errorf("NextAvailable in an endless outage = %v, want Never", got)
	}
	if ok, ra, _ := q.Admit(1500 * ms); ok || ra != time.Second {
		t.Errorf("Admit in an endless outage = %v, %v, want false, 1s", ok, ra)
	}
}
