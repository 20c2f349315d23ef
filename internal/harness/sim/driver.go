package sim

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/beamthrottle/beamthrottle/internal/firing"
	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// queued is an element in a group's queue, or taken by its firing.
type queued struct {
	arrived time.Duration
	e       firing.Elem
	taken   bool // by the firing under way
}

// group is one group of the transform: a queue, a timer and a Policy. Its
// firings are package firing's core, driven on the virtual clock; see the
// package documentation for the model.
type group struct {
	r        *run
	id       int
	env      Env
	pol      adaptive.Policy
	arrivals clock
	jitter   *rand.Rand
	latency  *rand.Rand // with Config.LatencyP99; else nil
	sigma    float64    // of the lognormal latency
	board    *board     // its worker's, with Config.SizeCalls; else nil

	nextArrival time.Duration
	// The queue: held (elements that went back after a firing, in queue
	// order) before fresh[head:] (arrival times of elements never taken).
	held    []queued
	fresh   []time.Duration
	head    int
	backlog int64 // elements not final: queued, in a firing or in flight

	armed bool
	timer time.Duration

	// The current firing.
	firing bool
	fireAt time.Duration  // its timer
	hi     int            // held[hi:] not looked at by it yet
	core   *firing.Firing // kept between firings for its memory
	taken  []queued       // its elements, by the core's index
	resume time.Duration  // when to ask it again (Never: for an answer only)
	quota  firing.Quota   // its shared quota; nil if none
	asking bool           // a round trip to the quota's service is under way (firing.AskQuota)
	askEnd time.Duration  // when its answer comes
	answer firing.QuotaAnswer
	flight []flight // in order of answer
	posted int      // flight[:posted] are answered on the board

	accepted int64 // accepted in overloaded seconds after the warm-up (fairness)
	err      error // a verdict the policy should not have given
}

// checked is a policy whose verdicts are checked: an unknown one is
// taken as a Reject and reported in err.
type checked struct {
	firing.Policy
	err *error
}

func (c checked) Decide(now time.Time, inFlight, cost int) adaptive.Decision {
	d := c.Policy.Decide(now, inFlight, cost)
	switch d.Verdict {
	case adaptive.Send, adaptive.Postpone, adaptive.Reject:
	default:
		if *c.err == nil {
			*c.err = fmt.Errorf("Decide returned verdict %v", d.Verdict)
		}
		d.Verdict = adaptive.Reject
	}
	return d
}

// MinWait is the shortest wait inside a firing after a Postpone (with
// FiringInterval): a policy postponing to a time less than MinWait away
// waits MinWait.
const MinWait = time.Millisecond

// next returns the time of the group's next event.
func (g *group) next() time.Duration { return min(g.nextArrival, g.wake()) }

// wake returns the time of the group's next event other than an arrival:
// with a board, an answer between firings is one, for the board.
func (g *group) wake() time.Duration {
	if g.firing {
		w := g.resume
		if len(g.flight) > 0 {
			w = min(w, g.flight[0].answer)
		}
		if g.asking {
			w = min(w, g.askEnd)
		}
		return w
	}
	w := Never
	if g.armed {
		w = g.timer
	}
	if g.board != nil && g.posted < len(g.flight) {
		w = min(w, g.flight[g.posted].answer)
	}
	return w
}

// step handles the group's next event.
func (g *group) step() error {
	if g.nextArrival <= g.wake() {
		g.arrive(g.nextArrival)
		return nil
	}
	t := g.wake()
	g.post(t)
	if !g.firing {
		if !g.armed || t < g.timer {
			return nil // answers for the board only
		}
		g.startFiring(t)
	}
	for len(g.flight) > 0 && g.flight[0].answer <= t {
		f := g.flight[0]
		g.flight = g.flight[1:]
		g.posted = max(g.posted-1, 0)
		g.core.AnsweredAt(g.r.start.Add(t), g.r.start.Add(f.answer), f.call, f.results)
		g.resume = min(g.resume, t) // the core may have routes to give
	}
	if g.asking && g.askEnd <= t {
		g.asking = false
		g.core.QuotaAnswered(g.r.start.Add(t), g.answer)
		g.resume = min(g.resume, t)
	}
	if t >= g.resume {
		return g.drive(t)
	}
	return nil
}

// arrive adds an element arriving at t.
func (g *group) arrive(t time.Duration) {
	r := g.r
	r.series.Offered[r.second(t)]++
	r.out.Arrived++
	if t >= r.warm {
		r.cohort.Arrived++
	}
	g.nextArrival = g.arrivals.next(t)
	if r.cfg.MaxBuffered > 0 && g.backlog >= int64(r.cfg.MaxBuffered) {
		r.final(t, t, clientRejected)
		return
	}
	g.fresh = append(g.fresh, t)
	g.backlog++
	if !g.firing && !g.armed {
		g.armed, g.timer = true, t+r.arm
	}
}

// coreConfig is the configuration of the core, as the transform would set
// it from the run's Config for a policy that paces or not.
func (c *Config) coreConfig(paced bool) firing.Config {
	s := firing.Settings{
		Paced: paced, BatchInterval: c.BatchInterval, Wait: c.FiringWait, MinWait: MinWait, Tick: c.Tick, BatchSize: c.BatchSize,
		CallsInFlight: c.CallsInFlight, ItemsPerCall: c.ItemsPerCall, MaxWait: c.MaxWait, Strategy: firing.Postpone,
		FinalRejects: true,
	}
	if c.SizeCalls {
		s.CallsInFlight, s.MaxCalls, s.Paced = 0, c.CallsInFlight, true
	}
	if c.Firing == FiringStop {
		s.Wait = -1
	}
	if c.FinalThrottled {
		s.Strategy = firing.Fail
	}
	return firing.NewConfig(s)
}

// startFiring begins a firing whose timer went off at t. The firing takes
// its elements as it needs them (see take): eligible at t, from the head
// of the queue, as the transform does.
func (g *group) startFiring(t time.Duration) {
	r := g.r
	g.armed = false
	at := r.start.Add(t)
	if g.core == nil {
		g.core = new(firing.Firing)
	}
	env := firing.Env{Policy: checked{g.pol, &g.err}}
	if r.cfg.Quota != nil {
		env.Quota = r.cfg.Quota(g.id)
	}
	g.quota, g.asking = env.Quota, false
	if g.board != nil { // as the transform's firing begins
		env.Latency, env.Room = g.board.latency, g.board.room(len(g.flight)-g.posted)
	}
	g.core.Reset(r.cfg.coreConfig(r.alg.Paced), env, at, at)
	g.core.Taking()
	g.firing, g.fireAt, g.hi = true, t, 0
	g.taken = g.taken[:0]
	for i := range g.flight { // the calls earlier firings left under way
		f := &g.flight[i]
		es := make([]firing.Elem, len(f.elems))
		for j, q := range f.elems {
			es[j] = q.e
		}
		f.call = g.core.Carry(f.sent, es, f.prob)
		g.taken = append(g.taken, f.elems...)
	}
	g.resume = t
	if r.cfg.StartJitter > 0 && (len(g.held) > 0 || g.head < len(g.fresh) && g.fresh[g.head] <= t) {
		g.resume += time.Duration(g.jitter.Float64() * float64(r.cfg.StartJitter))
	}
}

// take adds to the firing, at t, elements eligible at its timer from the
// head of the queue until n are live (an element that ran out of waiting
// is routed by the core and not counted), or tells it there are no more.
func (g *group) take(t time.Duration, n int) {
	r := g.r
	at, now := r.start.Add(g.fireAt), r.start.Add(t)
	live := 0
	for ; g.hi < len(g.held); g.hi++ {
		q := &g.held[g.hi]
		if q.e.NotBefore.After(at) {
			continue
		}
		q.taken = true
		if live += g.add(now, *q); live == n {
			g.hi++
			return
		}
	}
	for g.head < len(g.fresh) && g.fresh[g.head] <= g.fireAt {
		arrived := g.fresh[g.head]
		q := queued{arrived: arrived, e: firing.Elem{Since: r.start.Add(arrived)}}
		if r.cfg.CostOf != nil {
			q.e.Cost = r.cfg.CostOf(arrived)
		}
		g.head++
		if live += g.add(now, q); live == n {
			return
		}
	}
	g.core.Taken()
}

// add gives q to the firing's core at at and returns 1 if it is live.
func (g *group) add(at time.Time, q queued) int {
	g.taken = append(g.taken, q)
	if _, live := g.core.Add(at, q.e); live {
		return 1
	}
	return 0
}

// drive carries out the core's steps at t until it waits or is done.
func (g *group) drive(t time.Duration) error {
	r := g.r
	now := r.start.Add(t)
	for {
		s := g.core.Next(now)
		if g.err != nil {
			return fmt.Errorf("sim: algorithm %s: %w", r.alg.Name, g.err)
		}
		switch s.Action {
		case firing.Call:
			g.send(t, s)
		case firing.Route:
			g.route(t, s)
		case firing.AskQuota:
			g.askQuota(t, s)
		case firing.Take:
			// One element, or a call's worth when calls take several: the
			// core packs a call from the elements it holds, and the
			// transform's firing holds its whole batch.
			g.take(t, min(s.N, max(r.cfg.ItemsPerCall, 1)))
		case firing.Wait:
			if s.Postponed {
				r.series.Postponed[r.second(t)]++
			}
			g.resume = Never
			if !s.Until.IsZero() {
				g.resume = s.Until.Sub(r.start)
			}
			return nil
		case firing.Done:
			return g.endFiring(t)
		default:
			return fmt.Errorf("sim: algorithm %s: unknown step %v", r.alg.Name, s.Action)
		}
	}
}

// askQuota makes at t the round trip to the shared quota's service that
// step s asks for, through the quota (a QuotaService): its answer comes
// to the firing after the round trip's latency, at once if there is none.
func (g *group) askQuota(t time.Duration, s firing.Step) {
	var (
		a   firing.QuotaAnswer
		lat time.Duration
	)
	if svc, ok := g.quota.(QuotaService); ok {
		a, lat = svc.RoundTrip(g.r.start.Add(t), s.Permit)
	}
	if lat <= 0 {
		g.core.QuotaAnswered(g.r.start.Add(t), a)
		return
	}
	g.asking, g.askEnd, g.answer = true, t+lat, a
}

// route makes the element of step s final at t.
func (g *group) route(t time.Duration, s firing.Step) {
	o := clientRejected
	switch s.To {
	case firing.Success:
		o = success
	case firing.ServerThrottled:
		o = serverThrottled
	case firing.Error:
		o = failed
	}
	g.backlog--
	g.r.final(g.taken[s.Elem].arrived, t, o)
}

// endFiring ends the firing at t: the elements requeued and those left go
// back to the head of the queue, the calls still under way keep their
// elements for the next firing, and the timer is set if the queue or the
// calls are not empty. Answers that come before the next firing wait for
// it, as they wait for the transform's next firing.
func (g *group) endFiring(t time.Duration) error {
	r, core := g.r, g.core
	var back []queued
	for _, list := range [][]int{core.Requeue(), core.Rest()} {
		for _, k := range list {
			back = append(back, queued{arrived: g.taken[k].arrived, e: core.Elem(k)})
		}
	}
	if len(core.Rest()) > 0 {
		r.series.Postponed[r.second(t)]++
	}
	keep := g.held[:0]
	for _, q := range g.held {
		if !q.taken {
			keep = append(keep, q)
		}
	}
	g.held = append(back, keep...)
	if g.head > 1024 && g.head > len(g.fresh)/2 {
		g.fresh = append(g.fresh[:0], g.fresh[g.head:]...)
		g.head = 0
	}
	next := core.Timer(r.start.Add(t)).Sub(r.start)
	for i := range g.flight { // calls that outlive the firing
		f := &g.flight[i]
		f.sent, f.prob = core.CallSent(f.call), core.CallProb(f.call)
		f.elems = f.elems[:0]
		for _, k := range core.CallElems(f.call) {
			f.elems = append(f.elems, queued{arrived: g.taken[k].arrived, e: core.Elem(k)})
		}
	}
	g.firing = false
	if r.cfg.Persist && !r.alg.Shared {
		if err := g.persist(); err != nil {
			return err
		}
	}
	if len(g.held) == 0 && g.head == len(g.fresh) && len(g.flight) == 0 {
		return nil
	}
	g.armed, g.timer = true, max(next, t)
	return nil
}

// persist saves the Policy and restores it into a new one.
func (g *group) persist() error {
	data, err := g.pol.MarshalBinary()
	if err != nil {
		return fmt.Errorf("sim: algorithm %s: MarshalBinary: %w", g.r.alg.Name, err)
	}
	p := g.r.alg.New(g.env)
	if err := p.UnmarshalBinary(data); err != nil {
		return fmt.Errorf("sim: algorithm %s: UnmarshalBinary: %w", g.r.alg.Name, err)
	}
	g.pol = p
	return nil
}
