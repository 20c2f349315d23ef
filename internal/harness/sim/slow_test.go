package sim_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/internal/harness/sim"
	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// boundedInput is n elements at the start, against a steady capacity, run
// for d.
func boundedInput(n int, d time.Duration) sim.Scenario {
	return sim.Scenario{Name: "bounded", Duration: d, Phases: []sim.Phase{{Capacity: 1}}, Arrivals: make([]time.Duration, n)}
}

// TestCallTimeout: a call slower than the call timeout is answered at the
// timeout, as failed: the policy records a failure then, its element is a
// final error, and the call is counted as timed out, neither accepted nor
// rejected. A call as slow as the timeout is not.
func TestCallTimeout(t *testing.T) {
	const n = 20
	tests := []struct {
		timeout  time.Duration
		timedOut bool
	}{
		{time.Second, true},
		{2 * time.Second, false},
		{0, false},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.timeout), func(t *testing.T) {
			var pol *script
			alg := sim.Algorithm{Name: "script", New: func(e sim.Env) adaptive.Policy {
				pol = &script{start: e.Start, decide: send}
				return pol
			}}
			var finals []string
			cfg := sim.Config{Latency: 2 * time.Second, CallTimeout: tc.timeout, CallsInFlight: 4,
				OnFinal: func(_ time.Duration, o string) { finals = append(finals, o) }}
			r, err := sim.Run(boundedInput(n, time.Minute), alg, cfg)
			if err != nil {
				t.Fatal(err)
			}
			m, o := r.Metrics, r.Outcomes
			want, outcome, lat := sim.Outcomes{Arrived: n, Success: n}, "success", 2*time.Second
			var timedOut int64
			if tc.timedOut {
				want, outcome, lat, timedOut = sim.Outcomes{Arrived: n, Errors: n}, "error", tc.timeout, n
			}
			if o != want || m.TimedOut != timedOut || m.Sent != n || m.Accepted+m.BackendRejected+m.TimedOut != n {
				t.Errorf("got outcomes %+v, %d timed out of %d sent (%d accepted, %d rejected); want %+v, %d timed out",
					o, m.TimedOut, m.Sent, m.Accepted, m.BackendRejected, want, timedOut)
			}
			if m.AnswerP50 != 2*time.Second || m.AnswerP99 != 2*time.Second {
				t.Errorf("got answer times %v and %v, want the backend's 2s, timed out or not", m.AnswerP50, m.AnswerP99)
			}
			if len(finals) != n || slices.ContainsFunc(finals, func(s string) bool { return s != outcome }) {
				t.Errorf("got final outcomes %v, want %d %q", finals, n, outcome)
			}
			for _, rec := range pol.records {
				if got := rec.At - rec.Sent; got < lat || (tc.timedOut != (rec.Outcome == adaptive.Failed)) {
					t.Errorf("got record %+v, want one at least %v after its call, failed %v", rec, lat, tc.timedOut)
				}
			}
		})
	}
}

// TestQueueServer: a queueing backend refuses nothing; one call at a time
// never waits, and 40 calls under way at a 10/s queue wait about 4 s each
// (Little's law).
func TestQueueServer(t *testing.T) {
	tests := []struct {
		calls, elements int
		min, max        time.Duration // of the answers' median
	}{
		{1, 60, time.Second, time.Second},
		{40, 400, 3900 * time.Millisecond, 4100 * time.Millisecond},
	}
	for _, tc := range tests {
		cfg := sim.Config{Backend: sim.Queue(), Capacity: 10, Latency: time.Second, CallsInFlight: tc.calls}
		r, err := sim.Run(boundedInput(tc.elements, 2*time.Minute), sim.NoneAlgorithm(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		m := r.Metrics
		if m.BackendRejected != 0 || r.Outcomes.Success != r.Outcomes.Arrived {
			t.Errorf("%d calls: got %d rejected, outcomes %+v; want none rejected, every element a success",
				tc.calls, m.BackendRejected, r.Outcomes)
		}
		if m.AnswerP50 < tc.min || m.AnswerP50 > tc.max {
			t.Errorf("%d calls: got median answer %v, want in [%v, %v]", tc.calls, m.AnswerP50, tc.min, tc.max)
		}
	}
}

// paced sends every element; its Budget is rate per second, as a pacer's.
type paced struct {
	script
	rate float64
}

func (p *paced) Budget(now, until time.Time) int { return int(until.Sub(now).Seconds() * p.rate) }

// TestSizeCalls: with SizeCalls, a group's calls under way follow its
// policy's pace, once the board knows the calls' latency: what it would
// send in twice the latency (4 s at 5/s: 20); one at a time when the calls
// are fast. Without it they are CallsInFlight.
func TestSizeCalls(t *testing.T) {
	tests := []struct {
		name     string
		cfg      sim.Config
		maxCalls int // the most calls under way at a decision, plus one
	}{
		{"sized, 2 s", sim.Config{Latency: 2 * time.Second, SizeCalls: true}, 20},
		{"sized, 50 ms", sim.Config{Latency: 50 * time.Millisecond, SizeCalls: true}, 1},
		{"fixed", sim.Config{Latency: 2 * time.Second, CallsInFlight: 7}, 7},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var pol *paced
			alg := sim.Algorithm{Name: "paced", New: func(e sim.Env) adaptive.Policy {
				pol = &paced{script: script{start: e.Start, decide: send}, rate: 5}
				return pol
			}}
			if _, err := sim.Run(boundedInput(200, time.Minute), alg, tc.cfg); err != nil {
				t.Fatal(err)
			}
			most := 0
			for _, d := range pol.decisions {
				if d.At >= 3*time.Second { // the first firing's bound is from a batch interval
					most = max(most, d.InFlight+1)
				}
			}
			if most != tc.maxCalls {
				t.Errorf("got at most %d calls under way, want %d", most, tc.maxCalls)
			}
		})
	}
}

// TestCeiling: against a server that queues at 50/s with 2 s calls and a
// 5 s timeout, a client with no pace of its own and sized calls is held by
// its worker's ceiling, which 8 groups on one worker share: no call times
// out and answers stay within twice the latency. With a ceiling per group
// (8 workers) or 256 calls fixed, the queue outgrows the timeout.
func TestCeiling(t *testing.T) {
	tests := []struct {
		name            string
		groups, workers int
		calls           int
		sized, timeouts bool
	}{
		{"sized", 1, 1, 0, true, false},
		{"sized, 8 groups on a worker", 8, 1, 0, true, false},
		{"sized, 8 workers", 8, 8, 0, true, true},
		{"256 fixed", 1, 1, 256, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := sim.Config{Backend: sim.Queue(), Capacity: 50, Latency: 2 * time.Second, CallTimeout: 5 * time.Second,
				Groups: tc.groups, Workers: tc.workers, SizeCalls: tc.sized, CallsInFlight: tc.calls}
			r, err := sim.Run(boundedInput(3000, 2*time.Minute), sim.NoneAlgorithm(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			m := r.Metrics
			if got := m.TimedOut > m.Sent/2; got != tc.timeouts {
				t.Errorf("got %d of %d calls timed out, want most %v", m.TimedOut, m.Sent, tc.timeouts)
			}
			if !tc.timeouts && (m.AnswerP99 > 4*time.Second || r.Outcomes.Success != r.Outcomes.Arrived) {
				t.Errorf("got answer p99 %v, outcomes %+v; want at most 4s, every element a success", m.AnswerP99, r.Outcomes)
			}
		})
	}
}

// TestSlowCases pins, for the default seed, which goals of the slow APIs
// the pacer meets, as TestLimitCases does: the oracle meets every goal of
// its cases, the contrast its timeouts, and every element is counted once.
func TestSlowCases(t *testing.T) {
	algs := algorithmsNamed(sim.SlowAlgorithms)
	rs, err := sim.Suite{Cases: sim.SlowCases(), Algorithms: algs, DropSeries: true}.Run()
	if err != nil {
		t.Fatal(err)
	}
	all := []string{"waste", "every element succeeds", "done within", "no call times out", "answer p99", "timeouts"}
	met := map[string][]string{
		"slow/2s/1":                {"waste", "every element succeeds", "done within", "no call times out"},
		"slow/2s/8":                {"waste", "every element succeeds", "done within", "no call times out"},
		"slow/2s-bucket/1":         {"waste", "every element succeeds", "done within", "no call times out"},
		"slow/2s-bucket/8":         {"waste", "every element succeeds", "done within", "no call times out"},
		"slow/2s-at-once/1":        {"waste", "every element succeeds", "done within", "no call times out"},
		"slow/2s-at-once/8":        {"waste", "every element succeeds", "done within", "no call times out"},
		"slow/lognormal/1":         {"waste", "every element succeeds", "done within", "no call times out"},
		"slow/lognormal/8":         {"waste", "every element succeeds", "done within", "no call times out"},
		"slow/queue-50/1":          all,
		"slow/queue-50/8":          all,
		"slow/queue-50-fixed256/1": all,
		"slow/queue-50-fixed256/8": all,
		"slow/outage/1":            {"waste", "utilisation"},
		"slow/outage/8":            {"waste", "utilisation"},
	}
	pacerRuns := 0
	for _, r := range rs {
		o, m := r.Outcomes, r.Metrics
		bounded := r.Case != "slow/outage" // the outage's arrivals go on to its end
		if !o.Balanced() || bounded && o.Queued != 0 || m.Accepted+m.BackendRejected+m.TimedOut != m.Sent {
			t.Errorf("%s/%s/G=%d: got outcomes %+v, %d sent, %d accepted, %d rejected, %d timed out; want all final (bounded input), counted once",
				r.Case, r.Algorithm, r.Groups, o, m.Sent, m.Accepted, m.BackendRejected, m.TimedOut)
		}
		if r.Algorithm == sim.Oracle {
			if !sim.Met(r.Checks) {
				t.Errorf("%s/oracle/G=%d: %s, want every goal met by the oracle", r.Case, r.Groups, sim.Misses(r.Checks))
			}
			continue
		}
		pacerRuns++
		want, ok := met[fmt.Sprintf("%s/%d", r.Case, r.Groups)]
		if !ok {
			t.Errorf("%s/G=%d not pinned", r.Case, r.Groups)
		}
		for _, c := range r.Checks {
			pinned := slices.ContainsFunc(want, func(p string) bool { return strings.HasPrefix(c.Goal, p) })
			if c.Met != pinned {
				t.Errorf("%s/pacer/G=%d: %s: got %s (met %v), want met %v", r.Case, r.Groups, c.Goal, c.Got, c.Met, pinned)
			}
		}
	}
	if pacerRuns != len(met) {
		t.Errorf("got %d runs of the pacer, want the %d pinned", pacerRuns, len(met))
	}
}

func TestGoalCheckTimeouts(t *testing.T) {
	r := sim.Result{Groups: 1, Metrics: sim.Metrics{Sent: 100, TimedOut: 60, AnswerP99: 5 * time.Second}}
	g := sim.Goal{NoTimeouts: true, MaxAnswerP99: 4 * time.Second, MinTimedOut: 0.5}
	var met []bool
	for _, c := range g.Check(sim.Scenario{}, r, nil) {
		met = append(met, c.Met)
	}
	if want := []bool{false, false, true}; !slices.Equal(met, want) {
		t.Errorf("got met %v, want %v", met, want)
	}
	want := "✗ no call times out: 60; answer p99 ≤ 4.00 s: 5.00 s"
	if got := sim.Misses(g.Check(sim.Scenario{}, r, nil)); got != want {
		t.Errorf("got misses %q, want %q", got, want)
	}
	if got, want := g.String(), "no call times out, answer p99 ≤ 4.00 s, timeouts ≥ 50.0 % of calls (the contrast)"; got != want {
		t.Errorf("got goals %q, want %q", got, want)
	}
}

// algorithmsNamed returns the simulator's algorithms whose names are in
// names, in the simulator's order.
func algorithmsNamed(names []string) []sim.Algorithm {
	var algs []sim.Algorithm
	for _, a := range sim.Algorithms() {
		if slices.Contains(names, a.Name) {
			algs = append(algs, a)
		}
	}
	return algs
}

// TestRefuseAtOnce: with Config.RefuseAtOnce a refused call is answered a
// millisecond after it is sent, an accepted one after the latency; without,
// every answer takes the latency.
func TestRefuseAtOnce(t *testing.T) {
	const n = 20
	for _, tc := range []struct {
		atOnce bool
		p50    time.Duration // most of the calls are refused
	}{
		{false, 2 * time.Second},
		{true, time.Millisecond},
	} {
		t.Run(fmt.Sprint(tc.atOnce), func(t *testing.T) {
			alg := sim.Algorithm{Name: "script", New: func(e sim.Env) adaptive.Policy {
				return &script{start: e.Start, decide: send}
			}}
			cfg := sim.Config{Backend: sim.GCRA(1, true), Capacity: 1, Latency: 2 * time.Second, CallsInFlight: n,
				RefuseAtOnce: tc.atOnce, MaxWait: time.Second}
			r, err := sim.Run(boundedInput(n, time.Minute), alg, cfg)
			if err != nil {
				t.Fatal(err)
			}
			m := r.Metrics
			if m.BackendRejected < n/2 || m.AnswerP50 != tc.p50 || m.AnswerP99 != 2*time.Second {
				t.Errorf("got %d of %d refused, answers p50 %v and p99 %v; want most refused, %v and 2s",
					m.BackendRejected, m.Sent, m.AnswerP50, m.AnswerP99, tc.p50)
			}
		})
	}
}
