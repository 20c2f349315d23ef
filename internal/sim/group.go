package sim

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// elem is an element waiting in a group's queue.
type elem struct {
	arrived   time.Duration
	notBefore time.Duration // not eligible before (after a 429)
}

// call is a call in flight.
type call struct {
	arrived time.Duration
	sent    time.Duration
	answer  time.Duration // sent + latency
	ok      bool
	ra      time.Duration
}

// group is one group of the transform: a queue, a batch loop with a timer
// and a Policy. See the package documentation for the loop.
type group struct {
	r        *run
	id       int
	env      Env
	pol      adaptive.Policy
	arrivals clock
	jitter   *rand.Rand

	nextArrival time.Duration
	// The queue: fresh holds the arrival times of elements never sent, in
	// order (fresh[head:]); held the elements the backend rejected, by
	// arrival. Every element of held has been throttled at least once.
	fresh   []time.Duration
	head    int
	held    []elem
	backlog int64 // elements not final: queued, in a firing or in flight

	armed bool
	timer time.Duration

	// The current firing.
	firing    bool
	fireAt    time.Duration // its timer
	deadline  time.Duration // FiringInterval: no wait for a Postpone beyond it
	now       time.Duration // time of its last event
	resume    time.Duration // earliest time of its next decision (a start jitter, a wait)
	budget    int           // decisions left
	deciding  bool          // false once it stopped deciding
	postponed bool
	rearmAt   time.Duration // after a Postpone
	ready     []elem        // eligible held elements, by arrival; ready[ri:] not decided yet
	ri        int
	flight    []call // in order of answer: flight[fh:]
	fh        int
	returned  []elem // throttled in this firing, by arrival
	scratch   []elem // for merging

	accepted int64 // accepted in overloaded seconds after the warm-up (fairness)
}

// next returns the time of the group's next event.
func (g *group) next() time.Duration { return min(g.nextArrival, g.wake()) }

// wake returns the time of the group's next event other than an arrival.
func (g *group) wake() time.Duration {
	switch {
	case g.firing:
		w := Never
		if g.fh < len(g.flight) {
			w = g.flight[g.fh].answer
		}
		if g.deciding && g.inFlight() < g.r.cfg.CallsInFlight {
			w = min(w, g.resume)
		}
		return w
	case g.armed:
		return g.timer
	}
	return Never
}

// step handles the group's next event.
func (g *group) step() error {
	if g.nextArrival <= g.wake() {
		g.arrive(g.nextArrival)
		return nil
	}
	t := g.wake()
	if g.firing {
		g.answer(t)
	} else {
		g.startFiring(t)
	}
	if err := g.decide(); err != nil {
		return err
	}
	if g.firing && !g.deciding && g.inFlight() == 0 {
		return g.endFiring()
	}
	return nil
}

// inFlight returns the number of calls in flight.
func (g *group) inFlight() int { return len(g.flight) - g.fh }

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
		g.armed, g.timer = true, t+r.cfg.BatchInterval
	}
}

// startFiring begins a firing whose timer went off at t.
func (g *group) startFiring(t time.Duration) {
	r := g.r
	g.armed = false
	g.firing, g.fireAt, g.now, g.resume = true, t, t, t
	g.deadline = t + r.cfg.FiringWait
	g.deciding, g.postponed = true, false
	g.budget = r.cfg.BatchSize
	g.expire(t)
	// Split the eligible held elements off.
	g.ready, g.ri = g.ready[:0], 0
	keep := g.held[:0]
	for _, e := range g.held {
		if e.notBefore <= t {
			g.ready = append(g.ready, e)
		} else {
			keep = append(keep, e)
		}
	}
	g.held = keep
	if r.cfg.StartJitter > 0 && (g.head < len(g.fresh) || len(g.ready) > 0) {
		g.resume += time.Duration(g.jitter.Float64() * float64(r.cfg.StartJitter))
	}
}

// expire rejects the elements that have waited longer than MaxWait at t.
func (g *group) expire(t time.Duration) {
	r := g.r
	if r.cfg.MaxWait <= 0 {
		return
	}
	for g.head < len(g.fresh) && t-g.fresh[g.head] > r.cfg.MaxWait {
		r.final(g.fresh[g.head], t, clientRejected)
		g.head++
		g.backlog--
	}
	keep := g.held[:0]
	for _, e := range g.held {
		if t-e.arrived > r.cfg.MaxWait {
			r.final(e.arrived, t, serverThrottled)
			g.backlog--
			continue
		}
		keep = append(keep, e)
	}
	g.held = keep
}

// peek returns the next eligible element of the firing, in order of
// arrival: the oldest of the fresh elements that arrived by the firing's
// timer and the eligible held ones. fromFresh says which; ok is false if
// there is none.
func (g *group) peek() (arrived time.Duration, fromFresh, ok bool) {
	f := g.head < len(g.fresh) && g.fresh[g.head] <= g.fireAt
	h := g.ri < len(g.ready)
	switch {
	case f && (!h || g.fresh[g.head] <= g.ready[g.ri].arrived):
		return g.fresh[g.head], true, true
	case h:
		return g.ready[g.ri].arrived, false, true
	}
	return 0, false, false
}

// MinWait is the shortest wait inside a firing after a Postpone (with
// FiringInterval): a policy postponing to a time less than MinWait away
// waits MinWait.
const MinWait = time.Millisecond

// decide makes the firing's decisions, at g.now, until it waits (for a call
// slot, or for the time a Postpone asked for) or stops.
func (g *group) decide() error {
	r := g.r
	interval := r.cfg.Firing == FiringInterval
	for g.firing && g.deciding && g.inFlight() < r.cfg.CallsInFlight && g.resume <= g.now {
		if g.budget == 0 {
			g.deciding = false
			break
		}
		arrived, fromFresh, ok := g.peek()
		if !ok {
			g.deciding = false
			break
		}
		d := g.pol.Decide(r.start.Add(g.now), g.inFlight(), 1)
		if d.Verdict == adaptive.Postpone {
			r.series.Postponed[r.second(g.now)]++
			retry := d.RetryAt.Sub(r.start)
			if interval && retry < g.deadline && g.now < g.deadline {
				g.resume = max(retry, g.now+MinWait)
				continue
			}
			g.deciding, g.postponed = false, true
			g.rearmAt = max(retry, g.now+r.cfg.Tick)
			break
		}
		if fromFresh {
			g.head++
		} else {
			g.ri++
		}
		g.budget--
		sec := r.second(g.now)
		switch d.Verdict {
		case adaptive.Send:
			ok, ra := r.backend.Take(g.now)
			r.series.Sent[sec]++
			if ok {
				r.series.Accepted[sec]++
				if g.now >= r.warm && r.overloaded[sec] {
					g.accepted++
				}
				if g.now >= r.warm {
					r.delays = append(r.delays, g.now-arrived)
				}
			} else {
				r.series.BackendRejected[sec]++
			}
			g.flight = append(g.flight, call{arrived: arrived, sent: g.now, answer: g.now + r.cfg.Latency, ok: ok, ra: ra})
		case adaptive.Reject:
			g.backlog--
			r.final(arrived, g.now, clientRejected)
		default:
			return fmt.Errorf("sim: algorithm %s: Decide returned verdict %v", r.alg.Name, d.Verdict)
		}
	}
	return nil
}

// answer records the answers due at t (calls sent at the same time are
// answered together).
func (g *group) answer(t time.Duration) {
	g.now = max(g.now, t)
	for g.fh < len(g.flight) && g.flight[g.fh].answer <= t {
		g.record(g.flight[g.fh])
		g.fh++
	}
	if g.fh == len(g.flight) {
		g.flight, g.fh = g.flight[:0], 0
	}
}

// record records the answer to call c.
func (g *group) record(c call) {
	r := g.r
	a := adaptive.Answer{Outcome: adaptive.Accepted, Sent: r.start.Add(c.sent)}
	if !c.ok {
		a.Outcome, a.RetryAfter = adaptive.Throttled, c.ra
	}
	g.pol.Record(r.start.Add(c.answer), a)
	switch {
	case c.ok:
		g.backlog--
		r.final(c.arrived, c.answer, success)
	case r.cfg.FinalThrottled:
		g.backlog--
		r.final(c.arrived, c.answer, serverThrottled)
	default:
		g.returned = append(g.returned, elem{arrived: c.arrived, notBefore: c.answer + c.ra})
	}
}

// endFiring ends the firing at g.now, when its last call is answered: the
// elements left and those throttled go back to the queue, and the timer is
// set if the queue is not empty.
func (g *group) endFiring() error {
	r := g.r
	g.firing = false
	if rest := g.ready[g.ri:]; len(rest) > 0 || len(g.returned) > 0 {
		g.scratch = merge(g.scratch[:0], g.held, rest)
		g.held = merge(g.held[:0], g.scratch, g.returned)
		g.returned = g.returned[:0]
	}
	g.ready, g.ri = g.ready[:0], 0
	if g.head > 1024 && g.head > len(g.fresh)/2 {
		g.fresh = append(g.fresh[:0], g.fresh[g.head:]...)
		g.head = 0
	}
	if r.cfg.Persist && !r.alg.Shared {
		if err := g.persist(); err != nil {
			return err
		}
	}
	if g.head == len(g.fresh) && len(g.held) == 0 {
		return nil
	}
	at := g.rearmAt
	if !g.postponed {
		at = g.fireAt + r.cfg.BatchInterval
		if g.head == len(g.fresh) {
			earliest := Never
			for _, e := range g.held {
				earliest = min(earliest, e.notBefore)
			}
			at = max(at, earliest)
		}
	}
	g.armed, g.timer = true, max(at, g.now)
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

// merge appends to dst the elements of a and b, both in order of arrival,
// in order of arrival (a first on ties). dst must not share memory with a
// or b beyond its length.
func merge(dst, a, b []elem) []elem {
	for len(a) > 0 && len(b) > 0 {
		if b[0].arrived < a[0].arrived {
			dst, b = append(dst, b[0]), b[1:]
		} else {
			dst, a = append(dst, a[0]), a[1:]
		}
	}
	dst = append(dst, a...)
	return append(dst, b...)
}
