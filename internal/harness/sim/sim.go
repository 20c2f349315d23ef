// Package sim is a deterministic simulator of client-side throttling: it
// runs the batch loop of the Beam transform in transforms/throttle, with any
// [adaptive.Policy] deciding in each group, against a simulated backend, on
// a virtual clock with seeded randomness, and measures how much of the
// backend's capacity the pipeline uses, how many of the calls it sends are
// wasted on rejections, how long elements wait and how evenly the groups
// share the backend.
//
// It is meant to be extended: a [Backend] (with a [BackendModel]) adds a
// kind of service, a [Scenario] a load pattern, an [Algorithm] a policy,
// and a [Case] with a [Goal] a line of the report. [MatrixCases],
// [ClassicCases] and [PerElementCases] are the standard ones, and
// [DefaultSuite] runs them all with [Algorithms]. [CrossedCases] cross
// every capability at once (latency × limiter × headers × workers), in
// [CrossedSuite].
//
// # Evaluating a policy
//
// An [Algorithm] builds one [adaptive.Policy] per group from an [Env]
// (the group, a seeded random source, the run's start time and the loop's
// settings):
//
//	pacer := sim.Algorithm{Name: "pacer", Description: "…",
//		New: func(e sim.Env) adaptive.Policy { return newPacer(e.BatchInterval, e.Rand) }}
//	s := sim.DefaultSuite()
//	s.Algorithms = []sim.Algorithm{pacer, sim.OracleAlgorithm()}
//	results, err := s.Run()
//	// results[i].Checks: the case's goals, met or not; sim.Met, sim.Misses.
//
// Keep the oracle in the suite: the strict limiters' goal is a share of
// its utilisation. Add the algorithm to [Algorithms] for the report. With
// Config.Persist the policy is saved and restored after every firing, as
// the transform does with Beam state.
//
// # Model
//
// The backend (Config.Backend: a token bucket, a fixed window or a GCRA
// limiter, with or without Retry-After on its 429s, a server that queues
// instead of refusing, or limits on requests and tokens together) has the
// scenario's
// capacity, changing with its phases (a quota drop, an outage), and is
// shared by all groups and by an optional competitor: a Poisson client at
// Phase.Competitor × Config.Capacity that never throttles and never retries.
// With Config.Advertise every answer also carries the quota the backend
// advertises (an [Advertiser]), as rate-limit headers tell it.
//
// Elements arrive as a Poisson process at the offered rate, spread evenly
// over Config.Groups groups. Each group has a FIFO queue of elements, a
// timer and a Policy (its own, or, for an Algorithm with Shared, the one of
// its worker: Config.Workers), and runs the transform's firings: the same
// core, package internal/firing, that the transform's DoFn drives.
//
//   - An element arriving at a group whose backlog holds
//     Config.MaxBuffered elements is client-rejected at once. One arriving
//     at an empty group whose timer is not set sets it to fire
//     Config.BatchInterval later, or at once for an Algorithm that paces
//     (Paced) with calls of one element (firing.Config.ArmDelay).
//   - A firing at t takes, as it needs them, up to Config.BatchSize
//     elements eligible at t (arrived by t, and not before the Retry-After
//     of their last 429) from the head of the queue; one that waited longer
//     than Config.MaxWait is routed when it is reached (client-rejected, or
//     server-throttled if the backend rejected it) and another is taken in
//     its place. From Config.StartJitter (uniform) after t, it asks the
//     Policy about each: Decide(now, calls in flight, 1). Send sends it;
//     Reject client-rejects it (final); Postpone keeps it at the head. With
//     FiringInterval (the default, the transform) a firing decides until
//     t + Config.FiringWait: a Postpone to a time before then waits for it
//     inside the firing, one to a later time ends the decisions and sets
//     the next firing to max(Decision.RetryAt, postponement + Config.Tick).
//     With FiringStop every Postpone ends the decisions that way.
//   - A group has at most Config.CallsInFlight calls in flight: when all
//     are busy the firing waits for the earliest answer. With
//     Config.SizeCalls the bound is sized to the policy's pace at the
//     calls' latency, as the transform's paced mode sizes it, and a
//     worker's groups share an adaptive.Ceiling, fed as the transform's
//     call board feeds it: with every call sent and every answer when it
//     comes (between firings too); a firing may have the ceiling less the
//     other groups' calls under way, at least 1. An answer comes
//     Config.Latency (plus a queueing backend's wait) after its call and
//     is passed to Policy.Record at once, also while the firing waits;
//     one that would come after Config.CallTimeout comes then, as a
//     failure, and its elements are final errors. Accepted is a success.
//     Throttled (429) puts the element back at the head of the queue,
//     eligible again after the answer's Retry-After (at once if none); it
//     becomes final (server-throttled) only when it would wait longer than
//     MaxWait, or at once with Config.FinalThrottled (the per-element model
//     of the transform before postponement).
//   - A firing ends when its decisions have stopped and its calls are
//     answered, or, with calls still under way, one batch interval after
//     it started (a DoFn returns with its outputs): those calls keep their
//     elements, and the next firing carries them; an answer that comes
//     between firings waits for the next one. Past that time a firing
//     waiting for a free call ends too, unless its oldest call was sent
//     less than a tenth of a batch interval before. If the queue or the
//     calls under way are not empty the timer is then set: after a
//     Postpone as above; after a wait for a free call, when the oldest
//     call is expected back (at the firing's mean latency, within Tick and
//     a tenth of a batch interval); otherwise to the firing's
//     t + BatchInterval; a time already past fires at once.
//
// All events (arrivals, firings, answers, the competitor's requests) are
// processed in global time order, events at the same time in a random
// order, so groups and competitor share the backend as concurrent clients
// would. Arrivals, start delays, policies' random numbers, the competitor
// and that order come from separate seeded streams.
//
// # Metrics
//
// Metrics leave out the scenario's warm-up; see [Metrics] for their exact
// definitions. In short: utilisation is accepted calls divided by what a
// perfect client could have had accepted, min(offered, capacity left by the
// competitor, groups × calls in flight / latency) integrated over each
// phase; waste is backend rejections divided by calls sent; fairness is
// Jain's index of the groups' accepted calls under overload; delays are the
// queueing delays of successes; answer times are the backend's, its wait
// and the latency, of every call. [Outcomes] count every element's final
// outcome over the whole run, and always add up.
package sim

import (
	"container/heap"
	"fmt"
	"math"
	"time"

	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// inf is +Inf.
var inf = math.Inf(1)

// epoch is the wall-clock time at which every simulated run starts, as
// seen by the policies (Env.Start).
var epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// Series holds per-second counts of a run, indexed by second since the
// start. Elements are counted in the second they arrive (Offered), are
// sent, rejected or postponed, or become final.
type Series struct {
	Offered         []int64
	Sent            []int64
	Accepted        []int64
	BackendRejected []int64
	// ClientRejected counts elements rejected by the client (final): by a
	// Reject, MaxBuffered or MaxWait.
	ClientRejected []int64
	// ServerThrottled counts elements final after a 429 (MaxWait or
	// Config.FinalThrottled).
	ServerThrottled []int64
	// Postponed counts Postpone decisions.
	Postponed []int64
	// TimedOut counts elements sent in calls that outlived
	// Config.CallTimeout: neither Accepted nor BackendRejected, as the
	// client never saw the backend's answer.
	TimedOut           []int64
	CompetitorSent     []int64
	CompetitorAccepted []int64
	// Limit is min(offered rate, capacity − competitor accepted, groups ×
	// calls in flight / latency) in requests per second, the capacity and
	// offered rate being the phase's nominal ones: what a perfect client
	// could have had accepted that second.
	Limit []float64
}

// Outcomes are the final outcomes of every element of a run, from its
// start to its end: Arrived = Success + ClientRejected + ServerThrottled +
// Errors + Queued.
type Outcomes struct {
	Arrived, Success, ClientRejected, ServerThrottled int64
	// Errors counts the elements whose call timed out (Config.CallTimeout).
	Errors int64
	// Queued counts the elements not final at the end: in a queue or in
	// flight.
	Queued int64
}

// Balanced reports whether every element that arrived is counted once.
func (o Outcomes) Balanced() bool {
	return o.Arrived == o.Success+o.ClientRejected+o.ServerThrottled+o.Errors+o.Queued
}

// Result is the outcome of one run.
type Result struct {
	// Case is the name of the Case of the run (empty for Run).
	Case      string
	Scenario  string
	Backend   string
	Algorithm string
	Groups    int
	Series    Series
	Metrics   Metrics
	Outcomes  Outcomes
	// Limits is what the run took of each limit of a backend with several
	// (TokenLimits), in the backend's order; nil for the others.
	Limits []LimitUse
	// Checks are the Case's goals against the run (set by Suite.Run).
	Checks []Check
}

// run is the state of one simulation.
type run struct {
	sc         *Scenario
	alg        Algorithm
	cfg        Config
	start      time.Time
	end        time.Duration
	warm       time.Duration
	arm        time.Duration // from an idle group's first element to its firing (firing.Config.ArmDelay)
	backend    Backend
	series     Series
	out        Outcomes
	cohort     Outcomes // of the elements arriving after the warm-up
	lastFinal  time.Duration
	lastOK     time.Duration // when the last call the backend accepted was sent
	overloaded []bool        // per second, after the warm-up
	delays     []time.Duration
	answers    []time.Duration // the backend's time to answer each call sent after the warm-up
}

// outcome is an element's final outcome.
type outcome int

const (
	success outcome = iota
	clientRejected
	serverThrottled
	failed // an error: the call timed out
)

// final counts the final outcome o, at time at, of an element that arrived
// at arrived.
func (r *run) final(arrived, at time.Duration, o outcome) {
	r.out.add(o)
	r.lastFinal = max(r.lastFinal, at)
	if r.cfg.OnFinal != nil {
		r.cfg.OnFinal(arrived, [...]string{success: "success", clientRejected: "client-rejected", serverThrottled: "server-throttled",
			failed: "error"}[o])
	}
	if arrived >= r.warm {
		r.cohort.add(o)
	}
	switch o {
	case clientRejected:
		r.series.ClientRejected[r.second(at)]++
	case serverThrottled:
		r.series.ServerThrottled[r.second(at)]++
	}
}

// add counts one final outcome o.
func (c *Outcomes) add(o outcome) {
	switch o {
	case success:
		c.Success++
	case clientRejected:
		c.ClientRejected++
	case serverThrottled:
		c.ServerThrottled++
	case failed:
		c.Errors++
	}
}

// second returns the index of the second holding t.
func (r *run) second(t time.Duration) int { return int(t / time.Second) }

// Run simulates scenario sc with algorithm alg.
func Run(sc Scenario, alg Algorithm, cfg Config) (Result, error) {
	if err := sc.Validate(); err != nil {
		return Result{}, err
	}
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return Result{}, err
	}
	secs := int(sc.Duration / time.Second)
	r := &run{
		sc: &sc, alg: alg, cfg: cfg, start: epoch, end: sc.Duration, warm: sc.WarmUp,
		backend: cfg.Backend.New(NewCapacity(cfg.Capacity, sc.Phases), cfg.Seed),
	}
	core := cfg.coreConfig(alg.Paced)
	r.arm = core.ArmDelay()
	s := &r.series
	for _, p := range []*[]int64{&s.Offered, &s.Sent, &s.Accepted, &s.BackendRejected, &s.ClientRejected,
		&s.ServerThrottled, &s.Postponed, &s.TimedOut, &s.CompetitorSent, &s.CompetitorAccepted} {
		*p = make([]int64, secs)
	}
	r.overloaded = make([]bool, secs)
	for i := range secs {
		at := time.Duration(i) * time.Second
		r.overloaded[i] = at >= sc.WarmUp && sc.Phases[sc.phaseAt(at)].overloaded()
	}

	q := actors{rnd: stream(cfg.Seed, 0, streamOrder)}
	groups := make([]*group, cfg.Groups)
	perGroup := cfg.Capacity / float64(cfg.Groups)
	next := r.backend.NextAvailable
	shared := make([]adaptive.Policy, cfg.Workers)
	boards := make([]*board, cfg.Workers)
	if cfg.SizeCalls {
		for i := range boards {
			b, err := newBoard(cfg.CallsInFlight)
			if err != nil {
				return Result{}, fmt.Errorf("sim: %w", err)
			}
			boards[i] = b
		}
	}
	for i := range groups {
		env := Env{
			Group: i, Groups: cfg.Groups, Worker: i % cfg.Workers, Workers: cfg.Workers,
			Rand: stream(cfg.Seed, i, streamPolicy).Float64, Start: epoch,
			BatchInterval: cfg.BatchInterval, CallsInFlight: cfg.CallsInFlight, Tick: cfg.Tick,
			NextAvailable: next,
		}
		var pol adaptive.Policy
		switch {
		case !alg.Shared:
			pol = alg.New(env)
		case shared[env.Worker] == nil:
			shared[env.Worker] = alg.New(env)
			fallthrough
		default:
			pol = shared[env.Worker]
		}
		g := &group{r: r, id: i, env: env, pol: pol, jitter: stream(cfg.Seed, i, streamJitter), board: boards[env.Worker]}
		if g.sigma = lognormalSigma(cfg.Latency, cfg.LatencyP99); g.sigma > 0 {
			g.latency = stream(cfg.Seed, i, streamLatency)
		}
		if sc.Arrivals != nil {
			var ts []time.Duration
			for j := i; j < len(sc.Arrivals); j += cfg.Groups {
				ts = append(ts, sc.Arrivals[j])
			}
			g.arrivals = &listClock{times: ts}
		} else {
			g.arrivals = &poissonClock{rnd: stream(cfg.Seed, i, streamArrivals), sc: &sc,
				rate: func(p Phase) float64 { return p.Offered * perGroup }}
		}
		g.nextArrival = g.arrivals.next(0)
		groups[i] = g
		q.add(g)
	}
	if sc.hasCompetitor() {
		c := &competitor{r: r, clock: poissonClock{rnd: stream(cfg.Seed, 0, streamCompetitor), sc: &sc,
			rate: func(p Phase) float64 { return p.Competitor * cfg.Capacity }}}
		c.at = c.clock.next(0)
		q.add(c)
	}
	heap.Init(&q)
	for q.at[0] < r.end {
		if err := q.a[0].step(); err != nil {
			return Result{}, err
		}
		q.reschedule()
	}

	for _, g := range groups {
		r.out.Queued += g.backlog
	}
	c := &r.cohort
	c.Queued = c.Arrived - c.Success - c.ClientRejected - c.ServerThrottled - c.Errors
	r.limit()
	accepted := make([]int64, len(groups))
	for i, g := range groups {
		accepted[i] = g.accepted
	}
	res := Result{
		Scenario: sc.Name, Backend: cfg.Backend.Name, Algorithm: alg.Name, Groups: cfg.Groups,
		Series: r.series, Outcomes: r.out,
	}
	res.Metrics = measure(r, accepted)
	if l, ok := r.backend.(limiter); ok {
		res.Limits = l.limitUse(r.end)
	}
	return res, nil
}

// limit fills Series.Limit.
func (r *run) limit() {
	s := &r.series
	s.Limit = make([]float64, len(s.Sent))
	ceiling := r.cfg.ceiling()
	for i := range s.Limit {
		p := r.sc.Phases[r.sc.phaseAt(time.Duration(i)*time.Second)]
		left := max(0, p.capacity()*r.cfg.Capacity-float64(s.CompetitorAccepted[i]))
		offered := p.Offered * r.cfg.Capacity
		if r.sc.Arrivals != nil {
			offered = float64(s.Offered[i])
		}
		s.Limit[i] = min(offered, left, ceiling)
	}
}
