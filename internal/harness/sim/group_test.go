package sim_test

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/beamthrottle/beamthrottle/internal/harness/sim"
	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// decision is one call of Decide: when, and with how many calls in flight.
type decision struct {
	At       time.Duration
	InFlight int
}

// record is one call of Record.
type record struct {
	At, Sent   time.Duration
	Outcome    adaptive.Outcome
	RetryAfter time.Duration
}

// verdict is a scripted decision: for Postpone, retryAt is RetryAt as time
// since the start of the run.
type verdict struct {
	v       adaptive.Verdict
	retryAt time.Duration
}

// script is a Policy that records its calls and decides with decide (the
// n-th decision, at at).
type script struct {
	start     time.Time
	decide    func(n int, at time.Duration) verdict
	decisions []decision
	records   []record
}

func (s *script) Decide(now time.Time, inFlight, _ int) adaptive.Decision {
	at := now.Sub(s.start)
	s.decisions = append(s.decisions, decision{at, inFlight})
	v := s.decide(len(s.decisions)-1, at)
	d := adaptive.Decision{Verdict: v.v}
	if v.v == adaptive.Postpone {
		d.RetryAt = s.start.Add(v.retryAt)
	}
	return d
}

func (s *script) Record(now time.Time, a adaptive.Answer) {
	s.records = append(s.records, record{now.Sub(s.start), a.Sent.Sub(s.start), a.Outcome, a.RetryAfter})
}

func (s *script) Budget(time.Time, time.Time) int { return -1 }
func (s *script) MarshalBinary() ([]byte, error)  { return nil, nil }
func (s *script) UnmarshalBinary([]byte) error    { return nil }

// answer is a scripted backend answer.
type answer struct {
	ok         bool
	retryAfter time.Duration
}

// scripted is a backend that gives its answers in turn, then accepts
// everything.
type scripted struct{ answers []answer }

func (b *scripted) Take(time.Duration) (bool, time.Duration) {
	if len(b.answers) == 0 {
		return true, 0
	}
	a := b.answers[0]
	b.answers = b.answers[1:]
	return a.ok, a.retryAfter
}

func (b *scripted) NextAvailable(at time.Duration) time.Duration { return at }

func send(int, time.Duration) verdict { return verdict{v: adaptive.Send} }

// postponeFirst postpones the n-th decision to retryAt and sends otherwise.
func postponeFirst(n int, retryAt time.Duration) func(int, time.Duration) verdict {
	return func(i int, _ time.Duration) verdict {
		if i == n {
			return verdict{adaptive.Postpone, retryAt}
		}
		return verdict{v: adaptive.Send}
	}
}

// at returns n arrival times t.
func at(n int, t time.Duration) []time.Duration {
	ts := make([]time.Duration, n)
	for i := range ts {
		ts[i] = t
	}
	return ts
}

func TestGroupLoop(t *testing.T) {
	sec := time.Second
	tests := []struct {
		name      string
		arrivals  []time.Duration
		cfg       sim.Config
		answers   []answer
		decide    func(n int, at time.Duration) verdict
		decisions []decision
		records   []record
		outcomes  sim.Outcomes
	}{
		{
			// The next firing starts a tenth of its wait (the batch
			// interval) before RetryAt, to wait for it inside itself; the
			// scripted policy sends at once.
			name: "a postpone ends the firing and fires again just before RetryAt", arrivals: at(2, 0),
			decide:    postponeFirst(0, 2500*ms),
			decisions: []decision{{sec, 0}, {2400 * ms, 0}, {2400 * ms, 0}},
			records:   []record{{2400 * ms, 2400 * ms, adaptive.Accepted, 0}, {2400 * ms, 2400 * ms, adaptive.Accepted, 0}},
			outcomes:  sim.Outcomes{Arrived: 2, Success: 2},
		},
		{
			name: "stop: a postpone fires again a tick later at the earliest", arrivals: at(1, 0),
			cfg:       sim.Config{Firing: sim.FiringStop},
			decide:    postponeFirst(0, 1010*ms),
			decisions: []decision{{sec, 0}, {sec + sim.DefaultTick, 0}},
			records:   []record{{sec + sim.DefaultTick, sec + sim.DefaultTick, adaptive.Accepted, 0}},
			outcomes:  sim.Outcomes{Arrived: 1, Success: 1},
		},
		{
			name: "stop: a postpone waits for the calls in flight", arrivals: at(3, 0),
			cfg:    sim.Config{Latency: 300 * ms, CallsInFlight: 2, Firing: sim.FiringStop},
			decide: postponeFirst(1, 1100*ms),
			// The firing ends at 1.3 s, after its RetryAt: the next one
			// starts then.
			decisions: []decision{{sec, 0}, {sec, 1}, {1300 * ms, 0}, {1300 * ms, 1}},
			records: []record{{1300 * ms, sec, adaptive.Accepted, 0}, {1600 * ms, 1300 * ms, adaptive.Accepted, 0},
				{1600 * ms, 1300 * ms, adaptive.Accepted, 0}},
			outcomes: sim.Outcomes{Arrived: 3, Success: 3},
		},
		{
			name: "a postpone within the firing's wait waits inside the firing", arrivals: []time.Duration{0, 0, 1100 * ms},
			decide: postponeFirst(0, 1300*ms),
			// The third element arrived after the firing's timer: it waits
			// for the next firing.
			decisions: []decision{{sec, 0}, {1300 * ms, 0}, {1300 * ms, 0}, {2 * sec, 0}},
			outcomes:  sim.Outcomes{Arrived: 3, Success: 3},
		},
		{
			name: "a postpone closer than MinWait waits MinWait", arrivals: at(1, 0),
			decide:    postponeFirst(0, sec),
			decisions: []decision{{sec, 0}, {sec + sim.MinWait, 0}},
			outcomes:  sim.Outcomes{Arrived: 1, Success: 1},
		},
		{
			name: "answers are recorded while a firing waits", arrivals: at(3, 0),
			cfg: sim.Config{Latency: 100 * ms, CallsInFlight: 2}, decide: postponeFirst(1, 1250*ms),
			decisions: []decision{{sec, 0}, {sec, 1}, {1250 * ms, 0}, {1250 * ms, 1}},
			records: []record{{1100 * ms, sec, adaptive.Accepted, 0}, {1350 * ms, 1250 * ms, adaptive.Accepted, 0},
				{1350 * ms, 1250 * ms, adaptive.Accepted, 0}},
			outcomes: sim.Outcomes{Arrived: 3, Success: 3},
		},
		{
			name: "a firing that sends goes on past its wait, and the next one waits for it", arrivals: at(5, 0),
			cfg: sim.Config{Latency: 300 * ms}, decide: send,
			// The answer of 2.2 s comes after the interval: the next firing,
			// due at 2 s, starts then.
			decisions: []decision{{sec, 0}, {1300 * ms, 0}, {1600 * ms, 0}, {1900 * ms, 0}, {2200 * ms, 0}},
			outcomes:  sim.Outcomes{Arrived: 5, Success: 5},
		},
		{
			name: "a firing waits for a free call slot", arrivals: at(7, 0),
			cfg:    sim.Config{Latency: 100 * ms, CallsInFlight: 3},
			decide: send,
			decisions: []decision{{sec, 0}, {sec, 1}, {sec, 2}, {1100 * ms, 0}, {1100 * ms, 1}, {1100 * ms, 2},
				{1200 * ms, 0}},
			records: []record{
				{1100 * ms, sec, adaptive.Accepted, 0}, {1100 * ms, sec, adaptive.Accepted, 0}, {1100 * ms, sec, adaptive.Accepted, 0},
				{1200 * ms, 1100 * ms, adaptive.Accepted, 0}, {1200 * ms, 1100 * ms, adaptive.Accepted, 0},
				{1200 * ms, 1100 * ms, adaptive.Accepted, 0}, {1300 * ms, 1200 * ms, adaptive.Accepted, 0},
			},
			outcomes: sim.Outcomes{Arrived: 7, Success: 7},
		},
		{
			name: "a 429 goes back to the queue until its Retry-After", arrivals: at(1, 0),
			cfg: sim.Config{Latency: 10 * ms}, answers: []answer{{false, 2 * sec}}, decide: send,
			// The timer fires every batch interval, as the transform's
			// does: the element is eligible from 3.01 s, and the firing
			// of 4 s sends it.
			decisions: []decision{{sec, 0}, {4 * sec, 0}},
			records:   []record{{1010 * ms, sec, adaptive.Throttled, 2 * sec}, {4010 * ms, 4 * sec, adaptive.Accepted, 0}},
			outcomes:  sim.Outcomes{Arrived: 1, Success: 1},
		},
		{
			name: "a 429 without Retry-After waits for the next firing", arrivals: at(1, 0),
			cfg: sim.Config{Latency: 10 * ms}, answers: []answer{{false, 0}}, decide: send,
			decisions: []decision{{sec, 0}, {2 * sec, 0}},
			records:   []record{{1010 * ms, sec, adaptive.Throttled, 0}, {2010 * ms, 2 * sec, adaptive.Accepted, 0}},
			outcomes:  sim.Outcomes{Arrived: 1, Success: 1},
		},
		{
			name: "a 429 keeps its place by arrival", arrivals: []time.Duration{0, 100 * ms},
			cfg: sim.Config{BatchSize: 1, MaxWait: 2050 * ms}, answers: []answer{{false, 0}}, decide: send,
			// The first element is sent again before the second, which
			// has waited too long by the firing of 3 s.
			decisions: []decision{{sec, 0}, {2 * sec, 0}},
			records:   []record{{sec, sec, adaptive.Throttled, 0}, {2 * sec, 2 * sec, adaptive.Accepted, 0}},
			outcomes:  sim.Outcomes{Arrived: 2, Success: 1, ClientRejected: 1},
		},
		{
			name: "FinalThrottled makes a 429 final", arrivals: at(1, 0),
			cfg: sim.Config{Latency: 10 * ms, FinalThrottled: true}, answers: []answer{{false, 2 * sec}}, decide: send,
			decisions: []decision{{sec, 0}},
			records:   []record{{1010 * ms, sec, adaptive.Throttled, 2 * sec}},
			outcomes:  sim.Outcomes{Arrived: 1, ServerThrottled: 1},
		},
		{
			name: "a reject is final", arrivals: at(1, 0),
			decide:    func(int, time.Duration) verdict { return verdict{v: adaptive.Reject} },
			decisions: []decision{{sec, 0}},
			outcomes:  sim.Outcomes{Arrived: 1, ClientRejected: 1},
		},
		{
			name: "MaxWait rejects at the start of a firing", arrivals: []time.Duration{0, 500 * ms},
			cfg:    sim.Config{MaxWait: 2 * sec},
			decide: func(_ int, at time.Duration) verdict { return verdict{adaptive.Postpone, at + sec} },
			// The next firing comes at 1.9 s, just before the slot asked
			// for; its slot, 2.9 s, is past both elements' MaxWait.
			decisions: []decision{{sec, 0}, {1900 * ms, 0}},
			outcomes:  sim.Outcomes{Arrived: 2, ClientRejected: 2},
		},
		{
			name: "MaxWait makes a throttled element server-throttled", arrivals: at(1, 0),
			cfg: sim.Config{MaxWait: 2500 * ms}, answers: []answer{{false, 0}, {false, 0}}, decide: send,
			decisions: []decision{{sec, 0}, {2 * sec, 0}},
			records:   []record{{sec, sec, adaptive.Throttled, 0}, {2 * sec, 2 * sec, adaptive.Throttled, 0}},
			outcomes:  sim.Outcomes{Arrived: 1, ServerThrottled: 1},
		},
		{
			name: "MaxBuffered rejects arrivals at a full group", arrivals: at(5, 0),
			cfg: sim.Config{MaxBuffered: 3}, decide: send,
			decisions: []decision{{sec, 0}, {sec, 0}, {sec, 0}},
			records: []record{{sec, sec, adaptive.Accepted, 0}, {sec, sec, adaptive.Accepted, 0},
				{sec, sec, adaptive.Accepted, 0}},
			outcomes: sim.Outcomes{Arrived: 5, Success: 3, ClientRejected: 2},
		},
		{
			name: "BatchSize bounds the decisions of a firing", arrivals: at(5, 0),
			cfg: sim.Config{BatchSize: 2}, decide: send,
			decisions: []decision{{sec, 0}, {sec, 0}, {2 * sec, 0}, {2 * sec, 0}, {3 * sec, 0}},
			records: []record{{sec, sec, adaptive.Accepted, 0}, {sec, sec, adaptive.Accepted, 0},
				{2 * sec, 2 * sec, adaptive.Accepted, 0}, {2 * sec, 2 * sec, adaptive.Accepted, 0},
				{3 * sec, 3 * sec, adaptive.Accepted, 0}},
			outcomes: sim.Outcomes{Arrived: 5, Success: 5},
		},
		{
			name: "a firing takes only what arrived by its timer",
			// The third element arrives during the firing of 1 s, which
			// ends at 1.2 s; the next firing is at 1 s + 1 s.
			arrivals: []time.Duration{0, 0, 1100 * ms},
			cfg:      sim.Config{Latency: 100 * ms}, decide: send,
			decisions: []decision{{sec, 0}, {1100 * ms, 0}, {2 * sec, 0}},
			records: []record{{1100 * ms, sec, adaptive.Accepted, 0}, {1200 * ms, 1100 * ms, adaptive.Accepted, 0},
				{2100 * ms, 2 * sec, adaptive.Accepted, 0}},
			outcomes: sim.Outcomes{Arrived: 3, Success: 3},
		},
		{
			name: "stop: a firing that ran past its period is followed at once", arrivals: at(13, 0),
			cfg: sim.Config{Latency: 100 * ms, BatchSize: 12, Firing: sim.FiringStop}, decide: send,
			// Twelve calls of 100 ms: the firing of 1 s ends at 2.2 s.
			decisions: append(steps(12, sec, 100*ms), decision{2200 * ms, 0}),
			outcomes:  sim.Outcomes{Arrived: 13, Success: 13},
		},
		{
			name: "elements still queued at the end are counted", arrivals: at(2, 0),
			decide:    func(int, time.Duration) verdict { return verdict{adaptive.Postpone, time.Hour} },
			decisions: []decision{{sec, 0}},
			outcomes:  sim.Outcomes{Arrived: 2, Queued: 2},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pol := &script{decide: tc.decide}
			alg := sim.Algorithm{Name: "script", New: func(e sim.Env) adaptive.Policy {
				pol.start = e.Start
				return pol
			}}
			cfg := tc.cfg
			if cfg.FiringWait == 0 {
				cfg.FiringWait = time.Second // the whole batch interval: the cases below read more simply
			}
			cfg.Backend = sim.BackendModel{Name: "scripted", New: func(sim.Capacity, uint64) sim.Backend {
				return &scripted{answers: slices.Clone(tc.answers)}
			}}
			sc := sim.Scenario{Name: "x", Duration: 20 * time.Second, Phases: []sim.Phase{{Capacity: 1}}, Arrivals: tc.arrivals}
			r, err := sim.Run(sc, alg, cfg)
			if err != nil {
				t.Fatalf("Run error: %v", err)
			}
			if diff := cmp.Diff(tc.decisions, pol.decisions); diff != "" {
				t.Errorf("decisions (-want +got):\n%s", diff)
			}
			if tc.records != nil || len(pol.records) > len(tc.decisions) {
				if diff := cmp.Diff(tc.records, pol.records); diff != "" {
					t.Errorf("records (-want +got):\n%s", diff)
				}
			}
			if r.Outcomes != tc.outcomes {
				t.Errorf("got outcomes %+v, want %+v", r.Outcomes, tc.outcomes)
			}
		})
	}
}

// steps returns n decisions with nothing in flight, d apart from from.
func steps(n int, from, d time.Duration) []decision {
	ds := make([]decision, n)
	for i := range ds {
		ds[i] = decision{from + time.Duration(i)*d, 0}
	}
	return ds
}
