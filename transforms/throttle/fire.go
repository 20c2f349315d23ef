package throttle

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/beamthrottle/beamthrottle/internal/firing"
	"github.com/beamthrottle/beamthrottle/internal/interrupt"
	"github.com/beamthrottle/beamthrottle/internal/permits"
)

// firing is one firing of a group's timer, as the DoFn drives it: the rule
// of the firing is package firing's core; this side makes the calls, waits
// on the wall clock and routes the elements to the outputs.
//
// The throttle's clock is the timer's firing time (or the wall clock, if
// the timer fired late) plus the wall time spent in the firing, so that it
// follows the runner's processing-time clock (real or, under a test clock,
// synthetic).
//
// ProcessElement uses a firing too, to shed what a full buffer cannot take.
type driver struct {
	fn    *throttleFn
	ctx   context.Context
	key   string
	fire  time.Time        // the timer's time
	wall  time.Time        // the wall clock when the firing began
	clock func() time.Time // the wall clock: time.Now, fixed in tests
	out   emitters
	quota firing.Quota // if set, the shared quota in place of the permit pool's: in tests

	t       tally
	core    *firing.Firing  // the rule of the firing, made by begin
	env     firing.Env      // what it decides with
	requeue []item          // elements to try again on a later firing (429s, retries)
	rest    []item          // elements the policy postponed, not tried in this firing
	keys    map[string]bool // the cache keys of the elements this firing decides on (WithCache)
	waiting []item          // elements whose cache key another element of this firing holds
	settled []settled       // cache keys whose element was routed since the driver last looked

	takes   int  // times the core took from the queue (take)
	drained bool // the queue had fewer elements than the core asked for

	calls []*call // the core's calls, by number: carried, then sent
	open  []*call // the calls under way, and some answered since (collect drops them)
	flown []flown // the calls it ended with under way
}

// newFiring starts a firing of group key for the timer time fire.
func (f *throttleFn) newFiring(ctx context.Context, key string, fire time.Time, out emitters) *driver {
	if f.board == nil { // a DoFn not set up: the firing logic alone, in tests
		f.board, _ = newCallBoard()
	}
	return &driver{fn: f, ctx: ctx, key: key, fire: fire, wall: time.Now(), clock: time.Now, out: out}
}

func (fr *driver) now() time.Time { return fr.start().Add(fr.clock().Sub(fr.wall)) }

// start is the throttle's clock when the firing began: the timer's time, or
// the wall clock if the timer fired late. Groups that share a policy
// (ScopeWorker) then agree on the time however late their timers fire;
// under a synthetic clock that runs ahead of the wall clock, the timer's.
func (fr *driver) start() time.Time {
	if fr.wall.After(fr.fire) {
		return fr.wall
	}
	return fr.fire
}

// begin makes the firing's core from the DoFn's configuration.
func (fr *driver) begin() *firing.Firing {
	if fr.core != nil {
		return fr.core
	}
	f := fr.fn
	env := firing.Env{Policy: f.policy, Progress: progressOf{f.progress}, Latency: f.board.meanLatency(),
		Room: f.board.room(fr.key)}
	if f.pool != nil {
		env.Quota = &poolQuota{pool: f.pool, ctx: fr.ctx, retry: f.BatchInterval}
	}
	if fr.quota != nil {
		env.Quota = fr.quota
	}
	fr.env = env
	fr.core = firing.New(f.coreConfig(), env, fr.fire, fr.start())
	fr.core.Taking() // elements come from the queue as the core asks (drive)
	return fr.core
}

// coreConfig is the configuration of the firings' core: the core's
// settings as the options set them, with the mode and the strategy.
func (f *throttleFn) coreConfig() firing.Config {
	s := f.Settings
	s.Paced = f.Mode == ModePaced
	s.Strategy = coreStrategy(f.Strategy)
	return firing.NewConfig(s)
}

// coreStrategy is the core's spelling of a strategy: Fail for Route.
func coreStrategy(s Strategy) firing.Strategy {
	switch s {
	case Drop:
		return firing.Drop
	case Retry:
		return firing.Retry
	case Postpone:
		return firing.Postpone
	}
	return firing.Fail
}

// call is a call under way or answered; a firing's calls are numbered
// from 0, as the core numbers them (the calls carried from earlier
// firings first), and kept in that order.
type call struct {
	ctx   context.Context // the call's, within the call timeout
	n     int             // the core's number
	items []item          // its elements
	p     *pending        // on the worker's call board
	sent  time.Time       // by the throttle's clock
	res   callResult
	done  bool
}

// drive carries out the core's steps until it is done; items are the
// elements the core was given before (carried calls'), by index, and src
// gives it more as it asks (take). The calls, at most CallsInFlight at once,
// each run in a goroutine of their own within the call timeout (a call
// that outlives it is abandoned with its goroutine, and answered with a
// timeoutError) and post their answers to the worker's call board; the
// waits are on the wall clock, woken early by an answer. A call may
// outlive the firing (the core's Detach): a later firing of the group
// collects its answer.
func (fr *driver) drive(items []item, src source) error {
	core := fr.begin()
	grp := fr.fn.board.group(fr.key)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		if interrupted() {
			core.Interrupt()
		}
		now := fr.now()
		s := core.Next(now)
		switch s.Action {
		case firing.Done:
			fr.end(items)
			return nil
		case firing.Take:
			var err error
			if items, err = fr.take(items, src, s.N); err != nil {
				return err
			}
		case firing.Call:
			wall := time.Now()
			c := &call{n: s.Call, items: callItems(items, s.Elems), sent: now,
				ctx: fr.fn.deadlines.next(fr.fn.board.ctx, wall, fr.fn.CallTimeout),
				p:   fr.fn.board.start(fr.key, wall, wall.Add(fr.fn.CallTimeout))}
			fr.calls = append(fr.calls, c)
			fr.open = append(fr.open, c)
			fr.t.calls++
			fr.t.cost += int64(s.Cost)
			go fr.invoke(c)
		case firing.AskQuota:
			fr.askQuota(now, s)
		case firing.Route:
			fr.routed(now, items, s, fr.calls)
			items = fr.release(now, items)
		case firing.Wait:
			runtime.Gosched() // a call that answers at once (a cache, a local caller) needs no wake-up
			if fr.collect(items) == 0 {
				fr.wait(s, items, grp.wake, timer)
			}
		}
	}
}

// callItems returns the items of a call.
func callItems(items []item, elems []int) []item {
	if len(elems) == 1 {
		return items[elems[0] : elems[0]+1]
	}
	out := make([]item, len(elems))
	for i, k := range elems {
		out[i] = items[k]
	}
	return out
}

// invoke makes call c within its context (the call timeout, see
// deadlines) and posts its answer to the worker's call board. A call that
// fails once its context's deadline passed ends with a timeoutError. It uses the worker's context, not the bundle's: the
// call may outlive the bundle that made it.
func (fr *driver) invoke(c *call) {
	f, ctx := fr.fn, c.ctx
	var adv advertised
	start := time.Now()
	res := f.invoker.invoke(adv.context(ctx), c.items)
	end := time.Now()
	res.latency, res.quota = end.Sub(start), adv.quota()
	if res.failed() && errors.Is(ctx.Err(), context.DeadlineExceeded) && f.board.ctx.Err() == nil {
		// It failed because its time ran out (a caller that honours its
		// context returns as the driver gives up on it): a timeout.
		res = callResult{err: &timeoutError{Timeout: f.CallTimeout}, latency: res.latency}
	}
	f.board.finish(c.p, res, end)
}

// collect gives the core the answers that came to its calls, and returns
// how many.
func (fr *driver) collect(items []item) int {
	n := 0
	open := fr.open[:0]
	for _, c := range fr.open {
		if c.done {
			continue
		}
		if res, at, ok := fr.fn.board.answer(c.p); ok {
			fr.answered(items, c, res, at)
			n++
			continue
		}
		open = append(open, c)
	}
	fr.open = open
	return n
}

// wait waits as s says, for at most until its time: until an answer comes
// (collected), a call under way outlives its timeout (answered with a
// timeoutError), or the pipeline is interrupted. t is the driver's timer,
// stopped.
func (fr *driver) wait(s firing.Step, items []item, wake <-chan struct{}, t *time.Timer) {
	var d time.Duration = -1 // no timer
	if !s.Until.IsZero() {
		d = max(s.Until.Sub(fr.now()), 0)
	}
	var first *call // the call under way whose timeout comes first
	for _, c := range fr.open {
		if !c.done && (first == nil || c.p.timeout.Before(first.p.timeout)) {
			first = c
		}
	}
	if first != nil {
		if t := max(time.Until(first.p.timeout), 0); d < 0 || t < d {
			d = t
		}
	}
	var timer <-chan time.Time
	if d >= 0 {
		t.Reset(d)
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-wake:
		fr.collect(items)
	case <-timer:
		if first != nil && !time.Now().Before(first.p.timeout) {
			res := callResult{err: &timeoutError{Timeout: fr.fn.CallTimeout}, latency: fr.fn.CallTimeout}
			fr.fn.board.finish(first.p, res, time.Now()) // a late answer is ignored
			fr.collect(items)
		}
	case <-interrupt.Done():
	}
}

// answered gives the core the answer res to call c, which came at at by
// the wall clock.
func (fr *driver) answered(items []item, c *call, res callResult, at time.Time) {
	if c.done {
		return
	}
	c.done, c.res = true, res
	c.p.collected = true
	latencyMs.Update(fr.ctx, res.latency.Milliseconds())
	results := make([]firing.Result, len(c.items))
	elems := fr.core.CallElems(c.n)
	for k := range c.items {
		_, err := res.of(k)
		class := fr.fn.classify(err) // once: the failure below carries it to the route
		results[k] = firing.Result{Class: class}
		if class == clientcall.Success {
			continue
		}
		if class == clientcall.Throttled {
			results[k].RetryAfter, _ = clientcall.RetryAfter(err)
		}
		fl := fr.failureOf(err, class, fr.core.CallProb(c.n))
		// The failure is kept with the element: it is its record when it is
		// routed, or if it later runs out of waiting.
		items[elems[k]].Last = fl
	}
	if len(results) > 0 {
		results[0].Quota = onClock(res.quota, time.Until(fr.now()))
	}
	fr.core.AnsweredAt(fr.now(), fr.start().Add(at.Sub(fr.wall)), c.n, results)
}

// end ends the firing: requeue and rest take what goes back to the queue.
func (fr *driver) end(items []item) {
	core := fr.core
	fr.requeue = slices.Grow(fr.requeue, len(core.Requeue()))
	fr.rest = slices.Grow(fr.rest, len(core.Rest()))
	for _, k := range core.Requeue() {
		it := items[k]
		syncItem(&it, core.Elem(k))
		fr.requeue = append(fr.requeue, it)
	}
	for _, k := range core.Rest() {
		it := items[k]
		syncItem(&it, core.Elem(k))
		fr.rest = append(fr.rest, it)
	}
	fr.flying(items)
	fr.t.requests += int64(core.Attempts())
	fr.t.retries += int64(len(fr.requeue))
	fr.t.throttled = fr.t.throttled || core.Throttled()
	if n := core.Full(); n > 0 {
		fr.boundWarning(n)
	}
	if core.Paced() {
		fr.paceWarning()
	}
}

// paceWarned paces the log of what binds the pace.
var paceWarned minutely

// paceWarning logs, now and then, that elements waited for the policy's
// pace and what binds it (adaptive.Pacer.Binding): the curve, a refusal's
// Retry-After, a limit the API advertises.
func (fr *driver) paceWarning() {
	b, ok := fr.fn.policy.(interface {
		Binding(time.Time) (string, string)
	})
	if !ok {
		return
	}
	if !paceWarned.due() {
		return
	}
	if _, says := b.Binding(fr.now()); says != "" {
		log.Infof(fr.ctx, "throttle: group %q: elements wait for the pace, bound by %s (logged once a minute)", fr.key, says)
	}
}

// boundWarned paces the log of calls held at their bound.
var boundWarned minutely

// boundWarning logs, now and then, that a firing ended with its elements
// waiting for a free call under the bound of n calls under way: what
// holds the rate below the pace when an API is slow.
func (fr *driver) boundWarning(n int) {
	if !boundWarned.due() {
		return
	}
	why := "--calls_in_flight"
	if fr.fn.CallsInFlight == 0 {
		why = "the pace at the calls' latency, under the worker's ceiling (the latency's climb; at most 256)"
	}
	log.Infof(fr.ctx, "throttle: group %q: elements wait for a free call: %d calls under way, bound by %s; mean latency %v (logged once a minute)",
		fr.key, n, why, fr.fn.board.meanLatency().Round(time.Millisecond))
}

// progressOf is the transform's progress mark as the core reads it.
type progressOf struct{ m *progressMark }

func (p progressOf) Last() time.Time {
	if ns := p.m.last(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Time{}
}

func (p progressOf) Progressed(at time.Time) { p.m.progressed(at) }

// held returns the slot the firing claimed and did not use, for the pool
// to take back when the firing ends.
func (fr *driver) held() permits.Permission {
	if fr.core == nil {
		return permits.Permission{}
	}
	if p, ok := fr.core.Held(); ok {
		return p.Token.(permits.Permission)
	}
	return permits.Permission{}
}
