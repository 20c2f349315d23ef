// Package firing is the rule of one firing of a group's timer, written once
// as a state machine with no I/O of its own: no goroutines, no clock, no
// network. The transform's DoFn drives it with the wall clock and real
// calls; the simulator drives the same type with virtual time and simulated
// latency.
//
// A driver adds the elements it took from the head of the group's queue
// (Add), then asks for the next action (Next) with the time now, and
// carries it out: make a call (Call), route an element (Route), wait until
// a time or until an answer comes (Wait), make a round trip to the shared
// quota's service (AskQuota), or end the firing (Done). It feeds each
// call's answer back with Answered, and the quota's with QuotaAnswered.
// After Done, Requeue and Rest are the elements that go back to the head
// of the queue, and Timer is when the group's timer fires next if the
// queue is not empty.
//
// With Config.Detach, a firing does not wait for slow calls: it ends with
// calls under way (Flying), which the driver keeps (the elements stay in
// the group's state) and hands to a later firing of the same group
// (Carry), answered or not. That firing routes their answers as its own.
//
// Decisions follow the policy (Env.Policy), after the shared quota's
// permits or time slots if there is one (Env.Quota). Batching, costs,
// calls in flight, the bounds of an element's wait and the strategy for
// throttled elements are all here.
package firing

import (
	"math"
	"slices"
	"time"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// call is a call under way or answered.
type call struct {
	elems []int
	sent  time.Time
	prob  float64
	done  bool
}

// Firing is one firing of a group's timer. It is not safe for concurrent
// use: a driver feeds it from one goroutine.
type Firing struct {
	cfg      Config
	env      Env
	fire     time.Time // the timer's time
	deadline time.Time // no postponement is waited for past it

	elems       []Elem
	work        []int // the live elements, in order; work[cursor:] not decided yet
	cursor      int
	left        int // the cost of work[cursor:]
	calls       []call
	open        []int // numbers of the calls under way, and of some answered since (see oldestSent)
	inFlight    int
	routes      []Step // routes, in order; routes[rhead:] not returned yet
	rhead       int
	requeue     []int
	rest        []int
	retryAt     time.Time // the policy's postponement that ended the firing; zero if none
	postponedAt time.Time // when it did
	paced       bool      // the policy postponed an element (waited for its slot, or stopped)
	stopped     bool      // no more decisions
	interrupt   bool
	throttled   bool
	slot        Permit    // a slot of the quota claimed for the next call and not used yet
	asking      bool      // a round trip to the quota's service is under way (AskQuota)
	ask         Permit    // the permit that asked for it
	quotaRetry  time.Time // the driver gave up on it: the next call waits until then
	quotaDone   bool      // it was answered, and the firing has not asked the quota since
	waitUntil   time.Time // a postponement within the firing: no decision before then
	attempts    int
	live        int           // live elements added
	taking      bool          // the driver adds elements as the firing asks (Take)
	full        bool          // the firing ended past its deadline waiting for a slot of CallsInFlight
	limit       int           // the bound on calls under way when it was last checked
	latency     time.Duration // the summed latency of the calls answered, over answered
	answered    int
}

// New starts a firing whose timer was set for fire and which starts at
// start (the later of fire and the time its driver got to it).
func New(cfg Config, env Env, fire, start time.Time) *Firing {
	f := new(Firing)
	f.Reset(cfg, env, fire, start)
	return f
}

// Reset makes f a new firing, as New does, keeping its memory.
func (f *Firing) Reset(cfg Config, env Env, fire, start time.Time) {
	cfg.CallsInFlight = max(cfg.CallsInFlight, 1)
	*f = Firing{
		cfg: cfg, env: env, fire: fire, deadline: start.Add(cfg.Wait),
		elems: f.elems[:0], work: f.work[:0], calls: f.calls[:0], routes: f.routes[:0],
		requeue: f.requeue[:0], rest: f.rest[:0],
	}
}

// Taking makes the firing ask for its elements as it needs them (Take),
// until Taken: a driver then reads no more of its queue than the firing
// decides on, and takes more in place of elements that ran out of
// waiting. Both of the project's drivers (the transform's DoFn and the
// simulator) call it; a driver may instead add its elements up front.
func (f *Firing) Taking() { f.taking = true }

// Taken tells the firing that no more elements are eligible.
func (f *Firing) Taken() { f.taking = false }

// Add adds an element taken from the queue at now, and returns its index.
// An element that ran out of waiting is routed at once (see Expired) and
// reported not live: a driver takes another in its place. A driver may add
// elements while the firing runs (between steps); one added once the
// firing has stopped deciding (a postponement) goes to Rest.
func (f *Firing) Add(now time.Time, e Elem) (i int, live bool) {
	e.Cost = max(e.Cost, 1)
	i = len(f.elems)
	f.elems = append(f.elems, e)
	if f.Expired(now, i) {
		f.expire(i, time.Time{})
		return i, false
	}
	if f.stopped {
		f.live++
		f.hold(i, f.retryAt)
		return i, true
	}
	f.work = append(f.work, i)
	f.left += e.Cost
	f.live++
	return i, true
}

// Grow makes room for n more elements, so that adding them does not
// copy the firing's bookkeeping as it grows.
func (f *Firing) Grow(n int) {
	f.elems = slices.Grow(f.elems, n)
	f.work = slices.Grow(f.work, n)
}

// Carry adds a call that an earlier firing of the group sent at sent and
// ended with (see Flying): elems are its elements, in order, as that
// firing left them (Elem), and prob the policy's rejection probability
// when it decided. It returns the call's number, for Answered; its
// elements get indices as added ones do but are not live. A driver carries
// before the firing's first Next; the call counts in CallsInFlight until
// it is answered, and its answer is routed as any call's.
func (f *Firing) Carry(sent time.Time, elems []Elem, prob float64) (c int) {
	ks := make([]int, len(elems))
	for i, e := range elems {
		e.Cost = max(e.Cost, 1)
		ks[i] = len(f.elems)
		f.elems = append(f.elems, e)
	}
	f.calls = append(f.calls, call{elems: ks, sent: sent, prob: prob})
	f.open = append(f.open, len(f.calls)-1)
	f.inFlight++
	return len(f.calls) - 1
}

// Flying returns, once the firing is done, its calls still under way (by
// number, in the order they were sent or carried): with Config.Detach, the
// driver keeps them for a later firing to carry.
func (f *Firing) Flying() []int {
	var out []int
	for c := range f.calls {
		if !f.calls[c].done {
			out = append(out, c)
		}
	}
	return out
}

// CallSent returns when call c was sent.
func (f *Firing) CallSent(c int) time.Time { return f.calls[c].sent }

// Paced reports whether the policy postponed an element in this firing:
// the pace, not the calls under way or the input, held it.
func (f *Firing) Paced() bool { return f.paced }

// Live returns how many live elements were added.
func (f *Firing) Live() int { return f.live }

// Elem returns the element i, with its bookkeeping (attempts, first
// attempt, not-before) as the firing left it.
func (f *Firing) Elem(i int) Elem { return f.elems[i] }

// Interrupt stops the firing's calls: every element not yet sent is routed
// as interrupted; calls under way finish and are routed as usual, and
// nothing is requeued.
func (f *Firing) Interrupt() { f.interrupt = true }

// Next returns what to do at now.
func (f *Firing) Next(now time.Time) Step {
	for {
		if f.rhead < len(f.routes) {
			s := f.routes[f.rhead]
			f.rhead++
			if f.rhead == len(f.routes) {
				f.routes, f.rhead = f.routes[:0], 0
			}
			return s
		}
		if f.asking {
			return Step{Action: Wait} // for the quota's answer
		}
		if f.stopped {
			break
		}
		if f.cursor >= len(f.work) {
			if f.taking && (f.cfg.BatchSize <= 0 || f.live < f.cfg.BatchSize) {
				n := 1 << 30
				if f.cfg.BatchSize > 0 {
					n = f.cfg.BatchSize - f.live
				}
				return Step{Action: Take, N: n}
			}
			break
		}
		if !f.interrupt && now.Before(f.waitUntil) {
			return Step{Action: Wait, Until: f.waitUntil}
		}
		i := f.work[f.cursor]
		if f.interrupt {
			f.interrupted(i)
			f.advance(f.cursor + 1)
			continue
		}
		if f.Expired(now, i) {
			f.expire(i, time.Time{})
			f.advance(f.cursor + 1)
			continue
		}
		if f.limit = f.callLimit(now); f.inFlight >= f.limit {
			if !f.cfg.Detach || f.interrupt {
				return Step{Action: Wait}
			}
			// A slot comes with an answer: past the deadline, waited for
			// only while the oldest call under way is younger than a tenth
			// of a batch interval, as a fast API's calls are.
			by := laterOf(f.answersBy(), f.oldestSent().Add(f.cfg.BatchInterval/10))
			if !now.Before(by) {
				f.stopFull()
				break
			}
			return Step{Action: Wait, Until: by}
		}
		j := f.pack(now)
		cost := f.costOf(f.work[f.cursor:j])
		d, ask := f.decide(now, f.elems[i].Tier, cost)
		if ask {
			continue // AskQuota, from the routes
		}
		switch d.Verdict {
		case adaptive.Send:
			return f.send(now, j, cost, d.Probability)
		case adaptive.Postpone:
			f.paced = true
			onSlot := f.slot.OK && d.RetryAt.Equal(f.slot.At)
			if (d.RetryAt.Before(f.deadline) || onSlot) && now.Before(f.deadline) {
				f.waitUntil = laterOf(d.RetryAt, now.Add(f.cfg.MinWait))
				return Step{Action: Wait, Until: f.waitUntil, Postponed: !onSlot}
			}
			f.postpone(now, d.RetryAt)
		default: // Reject: the whole call
			for _, k := range f.work[f.cursor:j] {
				f.attempt(now, k)
				why := Step{Why: Rejected, Prob: d.Probability}
				if f.cfg.FinalRejects {
					f.throttled = true
					f.elems[k].Last = ClientThrottled
					f.route(k, ClientThrottled, why)
					continue
				}
				f.throttledAt(now, k, ClientThrottled, 0, why)
			}
			f.advance(j)
		}
	}
	if f.inFlight > 0 && !f.detached(now) {
		return Step{Action: Wait, Until: f.answerBy(now)}
	}
	return Step{Action: Done}
}

// detached reports whether the firing ends at now without waiting for its
// calls under way: with Detach, not interrupted, at or past its deadline
// for answers.
func (f *Firing) detached(now time.Time) bool {
	return f.cfg.Detach && !f.interrupt && !now.Before(f.answersBy())
}

// answerBy is how long a wait for an answer lasts: until the deadline for
// answers with Detach (then the firing ends), else until the answer
// (zero).
func (f *Firing) answerBy(time.Time) time.Time {
	if f.cfg.Detach && !f.interrupt {
		return f.answersBy()
	}
	return time.Time{}
}

// answersBy is, with Detach, when the firing stops waiting for answers
// and for slots of CallsInFlight: its deadline, or one batch interval from
// its start if that is later.
func (f *Firing) answersBy() time.Time {
	return laterOf(f.deadline, f.deadline.Add(f.cfg.BatchInterval-f.cfg.Wait))
}

// callLimit returns the bound on calls under way at now (see
// Config.SizeCalls).
func (f *Firing) callLimit(now time.Time) int {
	if !f.cfg.SizeCalls {
		return f.cfg.CallsInFlight
	}
	w := f.env.Latency
	switch {
	case w > 0:
	case f.answered > 0: // this firing's answers
		w = f.latency / time.Duration(f.answered)
	default: // not known yet: a batch interval, so the first firing is not one call
		w = f.cfg.BatchInterval
	}
	if o := f.oldestSent(); !o.IsZero() {
		w = max(w, now.Sub(o))
	}
	pol := f.env.Policy
	n := pol.Budget(now, now.Add(w))
	switch {
	case n < 0:
		n = f.cfg.CallsInFlight
	case w <= fastLatency:
		// The API is fast: one call at a time, as before calls were
		// sized (a fast API's latency bounds the pace below limits a
		// pacer finds only by hitting them, such as fixed windows
		// without Retry-After).
		return 1
	case n <= 1:
		// A slow API, and the pace allows one call in a latency or none:
		// a probe after a cut, a Retry-After, a slow rate. The policy
		// spaces that call; the calls under way were sent at the pace
		// before, and a bound of one would hold it back until all of
		// them are answered, a latency of silence (a tail latency's).
		n = min(f.inFlight+1, f.cfg.CallsInFlight)
	default:
		n = min(pol.Budget(now, now.Add(2*w)), f.cfg.CallsInFlight)
	}
	if f.env.Room > 0 {
		n = min(n, f.env.Room)
	}
	return n
}

// fastLatency is the latency up to which SizeCalls keeps one call at a
// time.
const fastLatency = 100 * time.Millisecond

// oldestSent returns when the oldest call under way was sent.
// It drops the answered calls from f.open as it goes, so each step costs
// the calls under way, not every call the firing made.
func (f *Firing) oldestSent() time.Time {
	var t time.Time
	open := f.open[:0]
	for _, i := range f.open {
		c := &f.calls[i]
		if c.done {
			continue
		}
		open = append(open, i)
		if t.IsZero() || c.sent.Before(t) {
			t = c.sent
		}
	}
	f.open = open
	return t
}

// Full returns the bound on calls under way when the firing ended waiting
// for a free call under it (see Config.Detach), 0 if it did not.
func (f *Firing) Full() int {
	if !f.full {
		return 0
	}
	return f.limit
}

// stopFull ends the firing's decisions past its deadline, every slot of
// CallsInFlight taken: the elements not decided stay queued.
func (f *Firing) stopFull() {
	f.rest = append(f.rest, f.work[f.cursor:]...)
	f.advance(len(f.work))
	f.stopped, f.full = true, true
}

// remaining returns the cost of the elements not decided yet.
func (f *Firing) remaining() int {
	if f.cfg.CostPerCall {
		per := max(f.cfg.ItemsPerCall, 1)
		return (len(f.work) - f.cursor + per - 1) / per
	}
	return f.left
}

// advance moves the cursor to j, past elements decided.
func (f *Firing) advance(j int) {
	for _, k := range f.work[f.cursor:j] {
		f.left -= f.elems[k].Cost
	}
	f.cursor = j
}

// send starts the call of work[cursor:j].
func (f *Firing) send(now time.Time, j, cost int, p float64) Step {
	elems := f.work[f.cursor:j:j]
	for _, k := range elems {
		f.attempt(now, k)
	}
	f.calls = append(f.calls, call{elems: elems, sent: now, prob: p})
	f.open = append(f.open, len(f.calls)-1)
	f.inFlight++
	f.advance(j)
	return Step{Action: Call, Call: len(f.calls) - 1, Elems: elems, Cost: cost, Prob: p}
}

// postpone ends the firing's decisions on a postponement to retryAt: what
// cannot be sent before its bound runs out is routed now rather than held
// until then; the rest stays queued.
func (f *Firing) postpone(now, retryAt time.Time) {
	for _, k := range f.work[f.cursor:] {
		f.hold(k, retryAt)
	}
	f.advance(len(f.work))
	f.retryAt, f.postponedAt = retryAt, now
	f.stopped = true
}

// hold keeps element k for a later firing, once the firing's decisions
// stopped on a postponement to retryAt: to Rest, or routed now if it cannot
// be sent before its bound runs out.
func (f *Firing) hold(k int, retryAt time.Time) {
	if due, _ := f.due(k); !due.IsZero() && retryAt.After(due) {
		f.expire(k, retryAt)
		return
	}
	f.rest = append(f.rest, k)
}

// attempt counts an attempt at element k.
func (f *Firing) attempt(now time.Time, k int) {
	f.attempts++
	e := &f.elems[k]
	e.Attempts++
	if e.First.IsZero() {
		e.First = now
	}
}

// Answered records at now the answer to call c, one result per element of
// the call: the policy learns it once for the call (throttled if any of
// its elements was, else accepted if any was, else failed), and each
// element is routed or requeued.
func (f *Firing) Answered(now time.Time, c int, results []Result) {
	f.AnsweredAt(now, now, c, results)
}

// AnsweredAt is Answered for an answer that came at arrived, before now
// (a call that outlived its firing, collected by this one): the latency is
// the call's to arrived.
func (f *Firing) AnsweredAt(now, arrived time.Time, c int, results []Result) {
	cl := &f.calls[c]
	if cl.done {
		return
	}
	cl.done = true
	f.inFlight--
	arrived = laterOf(cl.sent, earlierOf(arrived, now))
	f.latency += arrived.Sub(cl.sent)
	f.answered++
	ans := adaptive.Answer{Sent: cl.sent, Outcome: adaptive.Failed, Received: arrived}
	if len(results) > 0 {
		ans.Quota = results[0].Quota
	}
	progressed := false
	for _, r := range results {
		switch r.Class {
		case clientcall.Success:
			progressed = true
			if ans.Outcome == adaptive.Failed {
				ans.Outcome = adaptive.Accepted
			}
		case clientcall.Throttled:
			ans.Outcome = adaptive.Throttled
			ans.RetryAfter = max(ans.RetryAfter, r.RetryAfter)
		case clientcall.Unreachable:
			ans.Outcome = adaptive.Throttled
		}
	}
	if progressed && f.env.Progress != nil {
		f.env.Progress.Progressed(now)
	}
	f.env.Policy.Record(now, ans)
	for pos, k := range cl.elems {
		r := results[pos]
		why := Step{Why: Answered, Call: c, Pos: pos, Prob: cl.prob}
		switch r.Class {
		case clientcall.Success:
			f.route(k, Success, why)
		case clientcall.Throttled:
			f.throttledAt(now, k, ServerThrottled, r.RetryAfter, why)
		case clientcall.Unreachable:
			// Not the element's fault: tried again as a throttled one
			// would be, and an error only when the strategy gives up.
			f.throttledAt(now, k, Error, 0, why)
		default:
			f.route(k, Error, why)
		}
	}
}

// throttledAt applies the strategy to element k, whose attempt at now
// failed as kind: Retry and Postpone requeue it (Retry within its bounds,
// Postpone unless it could not be tried again before its wait runs out),
// no sooner than retryAfter; otherwise it is routed.
func (f *Firing) throttledAt(now time.Time, k int, kind Kind, retryAfter time.Duration, why Step) {
	f.throttled = true
	e := &f.elems[k]
	e.Last = kind
	switch f.cfg.Strategy {
	case Retry:
		if e.Attempts < f.cfg.MaxAttempts && now.Sub(e.First) < f.cfg.MaxAge {
			f.again(now, k, max(retryAfter, f.cfg.BatchInterval))
			return
		}
	case Postpone:
		if due, _ := f.due(k); !due.IsZero() && now.Add(retryAfter).After(due) {
			break // routed now rather than when its wait runs out
		}
		f.again(now, k, retryAfter)
		return
	}
	f.route(k, kind, why)
}

// again requeues element k, to be tried no sooner than after wait.
func (f *Firing) again(now time.Time, k int, wait time.Duration) {
	// Runners keep timer times in milliseconds: round down, so that the
	// timer set for this time finds the element eligible.
	f.elems[k].NotBefore = now.Add(wait).Truncate(time.Millisecond)
	f.requeue = append(f.requeue, k)
}

// route routes element k as kind (Dropped instead under Drop, unless it
// is an error), for the reason in why.
func (f *Firing) route(k int, kind Kind, why Step) {
	if f.cfg.Strategy == Drop && kind != Error && kind != Success {
		kind = Dropped
	}
	why.Action, why.Elem, why.To = Route, k, kind
	f.routes = append(f.routes, why)
}

// interrupted routes element k, not sent because the pipeline is
// interrupted: as its last attempt failed if it was throttled by the
// server, else as client-throttled.
func (f *Firing) interrupted(k int) {
	kind := ClientThrottled
	if f.elems[k].Last == ServerThrottled {
		kind = ServerThrottled
	}
	f.route(k, kind, Step{Why: Interrupted, Prob: 1})
}

// pack returns the end j of the call that starts at the cursor: one
// element, or, when batching, as many as fit in ItemsPerCall and
// BytesPerCall (at least one), stopping before an element that ran out of
// waiting by now.
func (f *Firing) pack(now time.Time) int {
	i := f.cursor
	if !f.cfg.batching() {
		return i + 1
	}
	bytes := f.elems[f.work[i]].Size
	j := i + 1
	for ; j < len(f.work) && j-i < max(f.cfg.ItemsPerCall, 1); j++ {
		k := f.work[j]
		n := f.elems[k].Size
		if f.cfg.BytesPerCall > 0 && bytes+n > f.cfg.BytesPerCall || f.Expired(now, k) {
			break
		}
		bytes += n
	}
	return j
}

// costOf returns what a call of the elements costs: the sum of their
// costs, or one unit per ItemsPerCall elements under CostPerCall.
func (f *Firing) costOf(elems []int) int {
	if f.cfg.CostPerCall {
		per := max(f.cfg.ItemsPerCall, 1)
		return (len(elems) + per - 1) / per
	}
	var c int64
	for _, k := range elems {
		c += int64(f.elems[k].Cost)
	}
	return int(min(c, math.MaxInt32))
}

// CallElems returns the elements of call c, in order.
func (f *Firing) CallElems(c int) []int { return f.calls[c].elems }

// CallProb returns the policy's rejection probability when it decided to
// send call c.
func (f *Firing) CallProb(c int) float64 { return f.calls[c].prob }

// Attempts returns the attempts made so far: elements sent or rejected.
func (f *Firing) Attempts() int { return f.attempts }

// Throttled reports whether an attempt of the firing was throttled.
func (f *Firing) Throttled() bool { return f.throttled }

// Requeue returns the elements to try again on a later firing (see
// Elem's NotBefore), and Rest those the firing did not decide on; both go
// back to the head of the queue, Requeue first.
func (f *Firing) Requeue() []int { return f.requeue }

// Rest returns the elements the firing left undecided (see Requeue).
func (f *Firing) Rest() []int { return f.rest }

// Held returns the slot of the quota the firing claimed and did not use,
// for the driver to give back when the firing ends.
func (f *Firing) Held() (Permit, bool) { return f.slot, f.slot.OK && f.slot.Paid }

// earlierOf returns the earlier of a and b.
func earlierOf(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// laterOf returns the later of a and b.
func laterOf(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
