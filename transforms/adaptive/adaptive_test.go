package adaptive_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// t0 is a fixed start time, aligned to the minute.
var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// formula is the SRE-book formula written out independently of the package.
func formula(requests, accepts int64, k float64) float64 {
	return math.Max(0, (float64(requests)-k*float64(accepts))/(float64(requests)+1))
}

// alwaysAllow is a random value that never rejects while p < 1.
var alwaysAllow = math.Nextafter(1, 0)

// constRand returns a random function that always returns v.
func constRand(v float64) func() float64 { return func() float64 { return v } }

func mustNew(t testing.TB, cfg adaptive.SREConfig, rnd func() float64) *adaptive.SRE {
	t.Helper()
	s, err := adaptive.NewSRE(cfg, rnd, 0)
	if err != nil {
		t.Fatalf("NewSRE(%+v) error: %v", cfg, err)
	}
	return s
}

// decide asks s about one request at now, none in flight, and returns
// whether it is sent and the p it used.
func decide(s *adaptive.SRE, now time.Time) (allow bool, p float64) {
	d := s.Decide(now, 0, 1)
	return d.Verdict == adaptive.Send, d.Probability
}

// record gives s the outcome, at now, of a request sent at now.
func record(s *adaptive.SRE, now time.Time, o adaptive.Outcome) {
	s.Record(now, adaptive.Answer{Outcome: o, Sent: now})
}

// windowName names a window for subtests: "Sliding" or "FixedReset".
func windowName(sliding bool) string {
	if sliding {
		return "Sliding"
	}
	return "FixedReset"
}

func TestProbabilityFunc(t *testing.T) {
	tests := []struct {
		name              string
		requests, accepts int64
		k                 float64
		want              float64
	}{
		{"no requests", 0, 0, 2, 0},
		{"one request no accepts", 1, 0, 2, 0.5},
		{"ten requests no accepts", 10, 0, 2, 10.0 / 11},
		{"half accepted K=2", 10, 5, 2, 0},
		{"four of ten accepted K=2", 10, 4, 2, 2.0 / 11},
		{"four of ten accepted K=1.1", 10, 4, 1.1, (10 - 1.1*4) / 11.0},
		{"more accepts than requests", 3, 7, 2, 0},
		{"negative requests", -5, 0, 2, 0},
		{"negative accepts", 10, -3, 2, 10.0 / 11},
		{"K zero uses default", 10, 4, 0, 2.0 / 11},
		{"K negative uses default", 10, 4, -1, 2.0 / 11},
		{"K NaN uses default", 10, 4, math.NaN(), 2.0 / 11},
		{"K +Inf uses default", 10, 4, math.Inf(1), 2.0 / 11},
		{"K -Inf uses default", 10, 4, math.Inf(-1), 2.0 / 11},
		{"huge K", 10, 1, 1e308, 0},
		{"tiny K", 10, 10, 1e-300, 10.0 / 11},
		{"max requests clamps to 1", math.MaxInt64, 0, 2, 1},
		{"max requests and accepts", math.MaxInt64, math.MaxInt64, 2, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := adaptive.Probability(tc.requests, tc.accepts, tc.k)
			if math.Abs(got-tc.want) > 1e-15 || math.IsNaN(got) {
				t.Errorf("Probability(%d, %d, %v) = %v, want %v", tc.requests, tc.accepts, tc.k, got, tc.want)
			}
		})
	}
}

// TestProbabilityUnderLoad feeds traces of backend responses to an SRE
// that allows everything and checks p before every request against the
// formula, and the final counts and p against hand-computed values.
// Trace letters: A accepted, T throttled, F failed (not overload).
func TestProbabilityUnderLoad(t *testing.T) {
	tests := []struct {
		name                      string
		k                         float64
		trace                     string
		wantRequests, wantAccepts int64
		wantP                     float64
	}{
		{"all accepted", 2, strings.Repeat("A", 20), 20, 20, 0},
		{"all failed, not overload", 2, strings.Repeat("F", 20), 20, 20, 0},
		{"all throttled K=2", 2, strings.Repeat("T", 10), 10, 0, 10.0 / 11},
		{"all throttled K=1.1", 1.1, strings.Repeat("T", 10), 10, 0, 10.0 / 11},
		{"half accepted K=2", 2, strings.Repeat("AT", 5), 10, 5, 0},
		{"half accepted K=1.1", 1.1, strings.Repeat("AT", 5), 10, 5, (10 - 5.5) / 11},
		{"one in four accepted K=2", 2, strings.Repeat("ATTT", 3), 12, 3, 6.0 / 13},
		{"one in four accepted K=1.1", 1.1, strings.Repeat("ATTT", 3), 12, 3, (12 - 3.3) / 13},
		{"accepted then throttled K=2", 2, "AAAAATTTTTTTTTT", 15, 5, 5.0 / 16},
		{"accepted then throttled K=1.1", 1.1, "AAAAATTTTTTTTTT", 15, 5, (15 - 5.5) / 16},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			th := mustNew(t, adaptive.SREConfig{K: tc.k}, constRand(alwaysAllow))
			now := t0
			var requests, accepts int64
			for i, c := range tc.trace {
				allow, p := decide(th, now)
				if want := formula(requests, accepts, tc.k); math.Abs(p-want) > 1e-15 {
					t.Fatalf("request %d: got p %v, want %v", i, p, want)
				}
				if !allow {
					t.Fatalf("request %d: got allow false with p %v, want true", i, p)
				}
				requests++
				switch c {
				case 'A':
					record(th, now, adaptive.Accepted)
					accepts++
				case 'F':
					record(th, now, adaptive.Failed)
					accepts++
				case 'T':
					record(th, now, adaptive.Throttled)
				}
				now = now.Add(time.Second)
			}
			gotReq, gotAcc := adaptive.Counts(th, now)
			if gotReq != tc.wantRequests || gotAcc != tc.wantAccepts {
				t.Errorf("got counts (%d, %d), want (%d, %d)", gotReq, gotAcc, tc.wantRequests, tc.wantAccepts)
			}
			if got := adaptive.P(th, now); math.Abs(got-tc.wantP) > 1e-15 {
				t.Errorf("got Probability %v, want %v", got, tc.wantP)
			}
		})
	}
}

// TestLocalRejectionsCountAsRequests checks that a locally rejected request
// is counted and raises p for the next one, and that a request is rejected
// exactly when the random value is below p.
func TestLocalRejectionsCountAsRequests(t *testing.T) {
	tests := []struct {
		name      string
		k         float64
		rnd       []float64
		wantAllow []bool
		wantP     []float64
	}{
		{
			name:      "K=2",
			k:         2,
			rnd:       []float64{0.9, 0.4, 0.7, 0.7, 0.8, 0},
			wantAllow: []bool{true, false, true, false, true, false},
			wantP:     []float64{0, 1.0 / 2, 2.0 / 3, 3.0 / 4, 4.0 / 5, 5.0 / 6},
		},
		{
			name:      "always rejected once p>0",
			k:         1.1,
			rnd:       []float64{0, 0, 0, 0},
			wantAllow: []bool{true, false, false, false},
			wantP:     []float64{0, 1.0 / 2, 2.0 / 3, 3.0 / 4},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			i := 0
			th := mustNew(t, adaptive.SREConfig{K: tc.k}, func() float64 { i++; return tc.rnd[i-1] })
			for j := range tc.rnd {
				allow, p := decide(th, t0)
				if allow != tc.wantAllow[j] || math.Abs(p-tc.wantP[j]) > 1e-15 {
					t.Errorf("request %d: got (%v, %v), want (%v, %v)", j, allow, p, tc.wantAllow[j], tc.wantP[j])
				}
				if allow {
					record(th, t0, adaptive.Throttled)
				}
				if req, _ := adaptive.Counts(th, t0); req != int64(j+1) {
					t.Errorf("after request %d: got %d requests, want %d", j, req, j+1)
				}
			}
			if i != len(tc.rnd) {
				t.Errorf("got %d calls of rnd, want %d", i, len(tc.rnd))
			}
		})
	}
}

func TestFailedOutcome(t *testing.T) {
	tests := []struct {
		name                   string
		countFailuresAsRejects bool
		outcome                adaptive.Outcome
		wantAccepts            int64
	}{
		{"accepted", false, adaptive.Accepted, 4},
		{"throttled", false, adaptive.Throttled, 0},
		{"failed counts as accepted by default", false, adaptive.Failed, 4},
		{"unknown outcome treated as failed", false, adaptive.Outcome(42), 4},
		{"accepted with option", true, adaptive.Accepted, 4},
		{"throttled with option", true, adaptive.Throttled, 0},
		{"failed counts as rejected with option", true, adaptive.Failed, 0},
		{"unknown outcome treated as failed with option", true, adaptive.Outcome(42), 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := adaptive.SREConfig{CountFailuresAsRejects: tc.countFailuresAsRejects}
			th := mustNew(t, cfg, constRand(alwaysAllow))
			for range 4 {
				decide(th, t0)
				record(th, t0, tc.outcome)
			}
			req, acc := adaptive.Counts(th, t0)
			if req != 4 || acc != tc.wantAccepts {
				t.Errorf("got counts (%d, %d), want (4, %d)", req, acc, tc.wantAccepts)
			}
			if got, want := adaptive.P(th, t0), formula(4, tc.wantAccepts, adaptive.DefaultK); got != want {
				t.Errorf("got Probability %v, want %v", got, want)
			}
		})
	}
}

// TestUnstarted: a new SRE's window starts at its first event, whose
// request is sent with p 0 (even with a random value of 0).
func TestUnstarted(t *testing.T) {
	for _, w := range []bool{false, true} {
		t.Run(windowName(w), func(t *testing.T) {
			th := mustNew(t, adaptive.SREConfig{Sliding: w}, constRand(0))
			if adaptive.Started(th) {
				t.Fatalf("got a started window before any event, want unstarted")
			}
			if allow, p := decide(th, t0); !allow || p != 0 {
				t.Errorf("first request: got (%v, %v), want (true, 0)", allow, p)
			}
			if !adaptive.Started(th) {
				t.Errorf("got an unstarted window after Decide, want started")
			}
			if req, acc := adaptive.Counts(th, t0); req != 1 || acc != 0 {
				t.Errorf("got counts (%d, %d) after one request, want (1, 0)", req, acc)
			}
		})
	}
}

func TestExtremeTimes(t *testing.T) {
	times := []time.Time{
		{},
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Unix(0, math.MinInt64),
		time.Unix(-1, 0),
		time.Unix(0, 0),
		t0,
		time.Unix(0, math.MaxInt64),
		time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	for _, w := range []bool{false, true} {
		t.Run(windowName(w), func(t *testing.T) {
			cfg := adaptive.SREConfig{Sliding: w, ResetInterval: time.Nanosecond, WindowSize: 3, Bucket: 1}
			th := mustNew(t, cfg, nil)
			for _, now := range append(times, times...) {
				_, p := decide(th, now)
				record(th, now, adaptive.Throttled)
				req, acc := adaptive.Counts(th, now)
				if p < 0 || p > 1 || math.IsNaN(p) || req < 1 || acc != 0 {
					t.Errorf("at %v: got p %v, counts (%d, %d), want p in [0,1], at least one request, no accepts",
						now, p, req, acc)
				}
			}
		})
	}
}

// modeConfigs are one configuration of each window, for the tests and
// benchmarks that cover them all.
var modeConfigs = []struct {
	name string
	cfg  adaptive.SREConfig
}{
	{"FixedReset", adaptive.SREConfig{}},
	{"Sliding", adaptive.SREConfig{Sliding: true}},
}

func TestDecideRecordZeroAllocs(t *testing.T) {
	for _, mc := range modeConfigs {
		t.Run(mc.name, func(t *testing.T) {
			th := mustNew(t, mc.cfg, nil)
			now := t0
			i := 0
			allocs := testing.AllocsPerRun(1000, func() {
				now = now.Add(37 * time.Millisecond)
				if allow, _ := decide(th, now); allow {
					record(th, now, adaptive.Outcome(i%3))
				}
				i++
			})
			if allocs != 0 {
				t.Errorf("got %v allocs per Decide+Record, want 0", allocs)
			}
		})
	}
}

// BenchmarkDecideRecord measures one decision and the record of its outcome
// (a third each accepted, throttled and failed), a millisecond apart, in
// each window.
func BenchmarkDecideRecord(b *testing.B) {
	for _, mc := range modeConfigs {
		b.Run(mc.name, func(b *testing.B) {
			th := mustNew(b, mc.cfg, nil)
			now := t0
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				now = now.Add(time.Millisecond)
				if allow, _ := decide(th, now); allow {
					record(th, now, adaptive.Outcome(i%3))
				}
				i++
			}
		})
	}
}

// BenchmarkDecide measures a decision alone, in each window, with the
// backend throttling half of the requests so that p is above zero.
func BenchmarkDecide(b *testing.B) {
	for _, mc := range modeConfigs {
		b.Run(mc.name, func(b *testing.B) {
			th := mustNew(b, mc.cfg, nil)
			now := t0
			for i := range 2000 { // into the limited regime
				now = now.Add(time.Millisecond)
				if allow, _ := decide(th, now); allow {
					record(th, now, adaptive.Outcome(i%2))
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				now = now.Add(time.Microsecond)
				decide(th, now)
			}
		})
	}
}

// costPolicies are the policies that charge costs, a Pacer bare and
// shared, for the tests and benchmarks of Decide with a cost.
var costPolicies = []struct {
	name string
	new  func(testing.TB) adaptive.Policy
}{
	{"Pacer", func(tb testing.TB) adaptive.Policy { return mustNewPacer(tb) }},
	{"Shared", func(tb testing.TB) adaptive.Policy { return adaptive.NewShared(mustNewPacer(tb)) }},
}

func mustNewPacer(tb testing.TB) *adaptive.Pacer {
	tb.Helper()
	p, err := adaptive.NewPacer(adaptive.PacerConfig{})
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

func TestDecideCostsZeroAllocs(t *testing.T) {
	for _, cp := range costPolicies {
		t.Run(cp.name, func(t *testing.T) {
			p := cp.new(t)
			now := t0
			i := 0
			allocs := testing.AllocsPerRun(1000, func() {
				now = now.Add(37 * time.Millisecond)
				if d := p.Decide(now, 0, 1+i%100); d.Verdict == adaptive.Send {
					p.Record(now, adaptive.Answer{Outcome: adaptive.Outcome(i % 3), Sent: now})
				}
				i++
			})
			if allocs != 0 {
				t.Errorf("got %v allocs per Decide+Record, want 0", allocs)
			}
		})
	}
}

// BenchmarkDecideCost measures a decision on a request of cost 1 to 100,
// a microsecond apart, with the answer of
// each request let through recorded as accepted.
func BenchmarkDecideCost(b *testing.B) {
	for _, cp := range costPolicies {
		b.Run(cp.name, func(b *testing.B) {
			p := cp.new(b)
			now := t0
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				now = now.Add(time.Microsecond)
				if d := p.Decide(now, 0, 1+i%100); d.Verdict == adaptive.Send {
					p.Record(now, adaptive.Answer{Outcome: adaptive.Accepted, Sent: now})
				}
				i++
			}
		})
	}
}

// TestDecideInFlight: requests in flight are left out of p, so a wave of
// concurrent first calls is not throttled by its own requests; the
// requests are still counted.
func TestDecideInFlight(t *testing.T) {
	now := time.Unix(1000, 0)
	thr, err := adaptive.NewSRE(adaptive.SREConfig{}, func() float64 { return 0.01 }, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 8 {
		d := thr.Decide(now, i, 1)
		if allow, p := d.Verdict == adaptive.Send, d.Probability; !allow || p != 0 {
			t.Errorf("call %d with %d pending: allow %v, p %v; want allowed with p 0", i, i, allow, p)
		}
	}
	if r, a := adaptive.Counts(thr, now); r != 8 || a != 0 {
		t.Errorf("counts %d requests %d accepts, want 8, 0", r, a)
	}
	// Without the pending calls left out, the same state throttles.
	if allow, p := decide(thr, now); allow || p != adaptive.Probability(8, 0, adaptive.DefaultK) {
		t.Errorf("Decide after 8 unanswered requests: allow %v, p %v", allow, p)
	}
}
