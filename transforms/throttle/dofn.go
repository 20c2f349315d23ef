package throttle

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"google.golang.org/grpc/status"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/beamthrottle/beamthrottle/internal/interrupt"
	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// throttleFn is the stateful step: per group key it buffers elements in
// state and, on a processing-time timer every batch interval while the
// buffer is non-empty, decides on and calls up to BatchSize of them, oldest
// first.
//
// The buffer is a queue in map state: each incoming batch is stored under
// the next sequence number, and a firing reads only the batches it needs
// from the head, so the work and memory of a firing are proportional to the
// batch size, not to the buffer (a runner with persistent state, such as
// Dataflow, holds the backlog outside the worker's memory). MaxBuffered
// bounds the backlog: elements arriving at a full buffer are shed at once,
// client-throttled (to ClientThrottled, or dropped under Drop). The policy's
// state lives in value state, so it survives bundle boundaries and moves of
// the key between workers. Batches are coded by encodeBatch.
// Each firing works through the head of the queue as the group's policy
// decides (see firing).
type throttleFn struct {
	Queue       state.Map[int64, batch] // the buffer: batches by sequence number, oldest first
	Meta        state.Value[queueMeta]
	PolicyState state.Value[[]byte] // the policy's state (adaptive.Policy.MarshalBinary)
	Flush       timers.ProcessingTime

	BatchSize     int
	BatchInterval time.Duration
	Mode          Mode
	Adaptive      adaptive.SREConfig
	Strategy      Strategy
	MaxAttempts   int
	MaxAge        time.Duration
	CallTimeout   time.Duration
	CallsInFlight int
	Caller        userValue
	Classifier    userValue
	ReqType       beam.EncodedType
	RespType      beam.EncodedType
	Seed          uint64
	HasSeed       bool
	MaxBuffered   int
	MaxWait       time.Duration
	MaxStall      time.Duration
	Groups        int
	Scope         Scope
	ID            string // the transform's, for its worker-scope policy and permit pool
	Quota         QuotaConfig
	Messages      bool // the input is Message: Success is Reply
	ItemsPerCall  int  // elements per call at most (WithItemsPerCall)
	BytesPerCall  int  // payload bytes per call at most, 0 for no bound (WithBytesPerCall)
	CostPerCall   bool // WithCost(CallCost{}): every call costs 1

	caller     reflect.Value
	invoker    *invoker
	classifier clientcall.Classifier
	policy     adaptive.Policy
	shared     bool          // policy is the worker's (ScopeWorker), not saved per group
	pool       *permitPool   // the worker's permits of the shared quota; nil without one
	progress   *progressMark // the transform's last progress on this worker (MaxStall)
	src        *rand.PCG
	rng        *rand.Rand
}

func (f *throttleFn) Setup(ctx context.Context) error {
	v, err := f.Caller.instantiate()
	if err != nil {
		return err
	}
	if s, ok := v.Interface().(clientcall.Setupper); ok {
		if err := s.Setup(ctx); err != nil {
			return err
		}
	}
	f.caller = v
	f.invoker = newInvoker(v, f.ReqType.T, f.RespType.T, f.batching())
	if f.Classifier.set() {
		cv, err := f.Classifier.instantiate()
		if err != nil {
			return err
		}
		c, ok := cv.Interface().(clientcall.Classifier)
		if !ok {
			return errors.New("throttle: classifier does not implement clientcall.Classifier")
		}
		f.classifier = c
	}
	f.src = rand.NewPCG(rand.Uint64(), rand.Uint64())
	f.rng = rand.New(f.src)
	if f.Scope == ScopeWorker {
		if f.policy, err = workerPolicies.acquire(f.ID, f.newWorkerPolicy); err != nil {
			return err
		}
		f.shared = true
	} else if f.policy, err = f.newPolicy(f.rng.Float64, max(f.Groups, 1)); err != nil {
		return err
	}
	if f.Quota.enabled() {
		if f.pool, err = acquirePool(f.ID, f.Quota); err != nil {
			return err
		}
	}
	if f.progress, err = workerProgress.acquire(f.ID, newProgressMark); err != nil {
		return err
	}
	log.Infof(ctx, "throttle: caller %v ready: batches of %d every %v, mode %v, strategy %s",
		f.Caller.Type.T, f.BatchSize, f.BatchInterval, f.Mode, f.Strategy)
	return nil
}

// newPolicy makes a policy for the mode: the pacer (for groups pacers
// sharing the backend), or the SRE throttle drawing from rnd (which
// postpones by a batch interval under the Postpone strategy instead of
// rejecting).
func (f *throttleFn) newPolicy(rnd func() float64, groups int) (adaptive.Policy, error) {
	if f.Mode == ModePaced {
		return adaptive.NewPacer(adaptive.PacerConfig{Groups: groups, Rate: f.Quota.knownRate()})
	}
	var postpone time.Duration
	if f.Strategy == Postpone {
		postpone = f.BatchInterval
	}
	return adaptive.NewSRE(f.Adaptive, rnd, postpone)
}

// newWorkerPolicy makes the worker's policy (ScopeWorker): one pacer for
// all the groups of the worker, or an SRE throttle with a random source of
// its own (used only under the policy's lock).
func (f *throttleFn) newWorkerPolicy() (adaptive.Policy, error) {
	seed := rand.Uint64()
	if f.HasSeed {
		seed = f.Seed
	}
	p, err := f.newPolicy(rand.New(rand.NewPCG(seed, 0x5ca1ab1e)).Float64, 1)
	if err != nil {
		return nil, err
	}
	return adaptive.NewShared(p), nil
}

func (f *throttleFn) Teardown(ctx context.Context) error {
	if f.shared {
		workerPolicies.release(f.ID)
		f.shared = false
	}
	if f.pool != nil {
		releasePool(f.ID)
		f.pool = nil
	}
	if f.progress != nil {
		workerProgress.release(f.ID)
		f.progress = nil
	}
	if f.caller.IsValid() {
		if t, ok := f.caller.Interface().(clientcall.Teardowner); ok {
			return t.Teardown(ctx)
		}
	}
	return nil
}

// queueMeta is the bookkeeping of a group's queue: batches are stored
// under sequence numbers [Head, Tail) (with holes where batches were taken
// from the middle), Size elements in all, and Armed is the firing time (unix
// nanos) of the pending timer, 0 if none.
type queueMeta struct {
	Head, Tail int64
	Size       int64
	Armed      int64
	// Skew is the throttle's clock minus the wall clock at the last firing
	// (nanos): the runner's processing time may run ahead of the wall
	// clock (a synthetic clock in tests). Elements joining the queue are
	// stamped with the wall clock plus Skew.
	Skew int64
}

// maxScan bounds how many stored batches one firing looks at.
const maxScan = 256

// emitters are the four outputs of the stateful step.
type emitters struct {
	ok           func(it *item, resp []byte)
	ct, st, errs func(Record)
}

// outputs are the emitters of the stateful step's outputs: Success is the
// response, or the Reply of a Message input.
func (f *throttleFn) outputs(emitOK func(beam.Z), emitCT, emitST, emitErr func(Record)) emitters {
	ok := func(_ *item, resp []byte) { emitOK(resp) }
	if f.Messages {
		ok = func(it *item, resp []byte) { emitOK(Reply{Input: it.message(), Response: resp}) }
	}
	return emitters{ok: ok, ct: emitCT, st: emitST, errs: emitErr}
}

// ProcessElement adds a batch to the group's queue and arms the timer if it
// is not armed yet. Elements beyond MaxBuffered are shed: they fail at once
// as client-throttled, and the strategy decides where they go.
func (f *throttleFn) ProcessElement(ctx context.Context, sp state.Provider, tp timers.Provider, key string, b batch,
	emitOK func(beam.Z), emitCT, emitST, emitErr func(Record)) error {
	meta, _, err := f.Meta.Read(sp)
	if err != nil {
		return err
	}
	now := time.Now()
	fr := f.newFiring(ctx, key, now, f.outputs(emitOK, emitCT, emitST, emitErr))
	b.Items = fr.shed(now, b.Items, meta.Size)
	if interrupted() {
		for _, it := range b.Items {
			fr.interrupt(now, it)
		}
		b.Items = nil
	}
	f.report(ctx, &fr.t, true)
	if len(b.Items) == 0 {
		return nil
	}
	since := now.UnixNano() + meta.Skew
	for i := range b.Items {
		b.Items[i].Since = since
	}
	if err := f.Queue.Put(sp, meta.Tail, b); err != nil {
		return err
	}
	meta.Tail++
	meta.Size += int64(len(b.Items))
	bufferedCounter.Inc(ctx, int64(len(b.Items)))
	if meta.Armed == 0 {
		fire := now.Add(f.BatchInterval)
		f.Flush.Set(tp, fire)
		meta.Armed = fire.UnixNano()
	}
	return f.Meta.Write(sp, meta)
}

// take removes up to n elements that are eligible at fireNs from the head
// of the queue, oldest first, leaving the others in place.
func (f *throttleFn) take(sp state.Provider, meta *queueMeta, n int, fireNs int64) ([]item, error) {
	var work []item
	scanned := 0
	for k := meta.Head; k < meta.Tail && len(work) < n && scanned < maxScan; k++ {
		scanned++
		b, ok, err := f.Queue.Get(sp, k)
		if err != nil {
			return nil, err
		}
		if !ok {
			if k == meta.Head {
				meta.Head++
			}
			continue
		}
		var rest []item
		work, rest = takeEligible(work, b.Items, n, fireNs)
		switch {
		case len(rest) == 0:
			if err := f.Queue.Remove(sp, k); err != nil {
				return nil, err
			}
			if k == meta.Head {
				meta.Head++
			}
		case len(rest) < len(b.Items):
			if err := f.Queue.Put(sp, k, batch{Items: rest}); err != nil {
				return nil, err
			}
		}
	}
	meta.Size -= int64(len(work))
	return work, nil
}

// takeEligible appends to work, in order, the items of from that are
// eligible at fireNs (NotBefore), until work holds n; it returns work and
// the items of from it left.
func takeEligible(work, from []item, n int, fireNs int64) (taken, rest []item) {
	for i := range from {
		if len(work) < n && from[i].NotBefore <= fireNs {
			work = append(work, from[i])
		} else {
			rest = append(rest, from[i])
		}
	}
	return work, rest
}

// putBack stores items at the head of the queue, in order, in batches of at
// most BatchSize, so that the next firing reads and removes whole batches
// instead of rewriting one large remainder.
func (f *throttleFn) putBack(sp state.Provider, meta *queueMeta, items []item) error {
	size := max(f.BatchSize, 1)
	for end := len(items); end > 0; end -= size {
		meta.Head--
		if err := f.Queue.Put(sp, meta.Head, batch{Items: items[max(end-size, 0):end]}); err != nil {
			return err
		}
	}
	meta.Size += int64(len(items))
	return nil
}

// maxExpireRounds bounds how many times a firing takes from the queue again
// to replace elements that expired (MaxWait) while they waited.
const maxExpireRounds = 16

// takeLive takes up to BatchSize eligible elements from the head of the
// queue for the firing fr. Elements that waited longer than MaxWait are
// routed at once (see firing.expire) and do not count: the firing takes
// more in their place, so a backlog of expired elements does not eat the
// batches of the live ones behind it.
func (fr *firing) takeLive(sp state.Provider, meta *queueMeta) ([]item, error) {
	f := fr.fn
	var live []item
	for range maxExpireRounds {
		got, err := f.take(sp, meta, f.BatchSize-len(live), fr.fire.UnixNano())
		if err != nil || len(got) == 0 {
			return live, err
		}
		n := len(live)
		live = fr.dropExpired(live, got)
		if len(live)-n == len(got) || len(live) >= f.BatchSize {
			break
		}
	}
	return live, nil
}

// dropExpired routes the elements of got that waited longer than MaxWait
// (see expire) and appends the others to live.
func (fr *firing) dropExpired(live, got []item) []item {
	now := fr.now()
	for i := range got {
		if fr.expired(now, &got[i]) {
			fr.expire(now, got[i], time.Time{})
			continue
		}
		live = append(live, got[i])
	}
	return live
}

// tally counts one firing's outcomes, added to the Beam counters at its end.
type tally struct {
	requests, accepted, clientThrottled, serverThrottled, errs, retries, dropped, postponed int64
	interrupted                                                                             int64
	calls, cost                                                                             int64
	throttled                                                                               bool
}

// OnTimer runs one firing of the group (see firing).
func (f *throttleFn) OnTimer(ctx context.Context, ts beam.EventTime, sp state.Provider, tp timers.Provider, key string, _ timers.Context,
	emitOK func(beam.Z), emitCT, emitST, emitErr func(Record)) error {
	fr := f.newFiring(ctx, key, ts.ToTime(), f.outputs(emitOK, emitCT, emitST, emitErr))
	f.progress.started(fr.start())
	if f.pool != nil {
		f.pool.begin()
		defer func() { f.pool.end(ctx, fr.now(), fr.slot) }()
	}
	meta, _, err := f.Meta.Read(sp)
	if err != nil {
		return err
	}
	if interrupted() {
		if err := fr.drain(sp, &meta); err != nil {
			return err
		}
		meta.Armed = 0
		if err := f.Meta.Write(sp, meta); err != nil {
			return err
		}
		f.report(ctx, &fr.t, false)
		return nil
	}
	items, err := fr.takeLive(sp, &meta)
	if err != nil {
		return err
	}
	if !f.shared {
		saved, _, err := f.PolicyState.Read(sp)
		if err != nil {
			return err
		}
		if err := f.policy.UnmarshalBinary(saved); err != nil {
			log.Warnf(ctx, "throttle: group %q: discarding unreadable throttle state: %v", key, err)
		}
	}
	if f.HasSeed {
		h := fnv.New64a()
		h.Write([]byte(key))
		f.src.Seed(f.Seed^h.Sum64(), uint64(fr.fire.UnixNano()))
	}

	fr.run(items)

	if !f.shared {
		b, err := f.policy.MarshalBinary()
		if err != nil {
			return err
		}
		if err := f.PolicyState.Write(sp, b); err != nil {
			return err
		}
	}
	// What goes back keeps its place at the head of the queue, oldest
	// first: it is older than everything behind it. If the pipeline was
	// interrupted meanwhile, the queue is routed instead.
	back := append(fr.requeue, fr.rest...)
	if interrupted() {
		now := fr.now()
		for _, it := range back {
			fr.interrupt(now, it)
		}
		back = nil
		if err := fr.drain(sp, &meta); err != nil {
			return err
		}
	}
	if len(back) > 0 {
		if err := f.putBack(sp, &meta, back); err != nil {
			return err
		}
		fr.t.postponed += int64(len(fr.rest))
	}
	meta.Armed = 0
	meta.Skew = fr.start().UnixNano() - fr.wall.UnixNano()
	if meta.Size > 0 {
		next := fr.next()
		f.Flush.Set(tp, next)
		meta.Armed = next.UnixNano()
		fr.t.throttled = true
	} else {
		meta.Head, meta.Tail = 0, 0
	}
	if err := f.Meta.Write(sp, meta); err != nil {
		return err
	}
	f.report(ctx, &fr.t, false)
	return nil
}

// firingWait is how long a firing waits for the policy's slots: one batch
// interval. Then it ends and sets its timer for the next slot. Runners fire
// a stage's timers late and, like Prism, often one key at a time (100 to
// 600 ms late, measured under make livebench), so a firing that waited only
// a tenth of the interval left the backend idle much of the time (74 %
// utilisation instead of 81 % on livebench's quota-rise, 91 % instead of
// 95 % on steady); a firing that waits a whole interval delays new input to
// its stage by that much at most.
func firingWait(batchInterval time.Duration) time.Duration { return batchInterval }

// firing is one firing of a group's timer: it works through the elements
// taken from the head of the queue, oldest first. For each it asks the
// policy: Send calls it (CallsInFlight at most at once, answers recorded as
// they come); Postpone to a time within the firing's wait (firingWait)
// waits for it inside the firing; Postpone beyond it ends the firing, and
// the timer is set for that time, so sends are spread at the policy's pace,
// not sent back to back; Reject applies the strategy (see throttled).
//
// The throttle's clock is the timer's firing time (or the wall clock, if
// the timer fired late) plus the wall time spent in the firing, so that it
// follows the runner's processing-time clock (real or, under a test clock,
// synthetic).
//
// ProcessElement uses a firing too, to shed what a full buffer cannot take.
type firing struct {
	fn    *throttleFn
	ctx   context.Context
	key   string
	fire  time.Time        // the timer's time
	wall  time.Time        // the wall clock when the firing began
	clock func() time.Time // the wall clock: time.Now, fixed in tests
	out   emitters

	t       tally
	requeue []item     // elements to try again on a later firing (429s, retries)
	rest    []item     // elements the policy postponed, not tried in this firing
	retryAt time.Time  // when the policy wants to be asked again; zero if it did not postpone
	slot    permission // a slot of the shared quota claimed for the next call and not used yet

	calls  int64        // calls made inline (callInline), numbering them
	active atomic.Int64 // the number of the inline call under way, 0 if none or abandoned
}

// newFiring starts a firing of group key for the timer time fire.
func (f *throttleFn) newFiring(ctx context.Context, key string, fire time.Time, out emitters) *firing {
	return &firing{fn: f, ctx: ctx, key: key, fire: fire, wall: time.Now(), clock: time.Now, out: out}
}

// answer is the result of one call, for the elements [from, to) of the
// firing's items.
type answer struct {
	from, to int
	sent     time.Time
	p        float64
	res      callResult
}

func (fr *firing) now() time.Time { return fr.start().Add(fr.clock().Sub(fr.wall)) }

// start is the throttle's clock when the firing began: the timer's time, or
// the wall clock if the timer fired late. Groups that share a policy
// (ScopeWorker) then agree on the time however late their timers fire;
// under a synthetic clock that runs ahead of the wall clock, the timer's.
func (fr *firing) start() time.Time {
	if fr.wall.After(fr.fire) {
		return fr.wall
	}
	return fr.fire
}

// next is when the group's timer fires again after this firing, which
// left elements queued: one batch interval on, or, if the policy postponed,
// at its slot, but no later than the first element's max wait runs out.
func (fr *firing) next() time.Time {
	next := fr.fire.Add(fr.fn.BatchInterval)
	if !fr.retryAt.IsZero() {
		// Runners keep timer times in milliseconds: round up, so the
		// firing does not come before the slot it waits for.
		next = fr.retryAt.Add(time.Millisecond - 1).Truncate(time.Millisecond)
		// But no later than the first element's max wait runs out, so
		// that a long postponement (a quota spent for the day) does not
		// hold back the elements MaxWait would route.
		if due := fr.expiryDue(); !due.IsZero() && due.Before(next) {
			next = due
		}
	}
	if !next.After(fr.fire) {
		next = fr.fire.Add(time.Millisecond)
	}
	return next
}

// run works through items. The work runs in a goroutine of its own: with
// one call in flight (CallsInFlight 1) the calls are made in it, one after
// the other, without handing each to a goroutine of its own (which cost
// more than the whole rest of the transform with a fast backend); a call
// that outlives its timeout is abandoned with that goroutine, and run
// carries on with the next element in a new one.
func (fr *firing) run(items []item) {
	deadline := fr.start().Add(firingWait(fr.fn.BatchInterval))
	for i := range items {
		if items[i].Since == 0 { // queued by an older version
			items[i].Since = fr.fire.UnixNano()
		}
	}
	for from := 0; ; {
		stuck := make(chan answer, 1)
		done := make(chan any, 1)
		go func() {
			defer func() { done <- recover() }()
			fr.work(items, from, deadline, stuck)
		}()
		select {
		case p := <-done:
			if p != nil {
				panic(p) // in the bundle's goroutine, where Beam fails the bundle
			}
			return
		case a := <-stuck:
			a.res = callResult{err: &TimeoutError{Timeout: fr.fn.CallTimeout}, latency: fr.fn.CallTimeout}
			fr.answered(items[a.from:a.to], a)
			from = a.to
		}
	}
}

// work works through items from the index from on, a call at a time: one
// element, or, when batching, the elements pack takes. With one call in
// flight it makes each call itself (see callInline) and returns at once if
// a call was abandoned, its answer sent on stuck.
func (fr *firing) work(items []item, from int, deadline time.Time, stuck chan<- answer) {
	f := fr.fn
	answers := make(chan answer, f.CallsInFlight)
	inFlight := 0
	collect := func(a answer) {
		inFlight--
		fr.answered(items[a.from:a.to], a)
	}
	left := fr.costOf(items[from:]) // the cost of what is left, for the permits asked at once
	for i := from; i < len(items); {
		it := &items[i]
		now := fr.now()
		if interrupted() {
			fr.interrupt(now, *it)
			left -= fr.costOf(items[i : i+1])
			i++
			continue
		}
		if fr.expired(now, it) {
			fr.expire(now, *it, time.Time{})
			left -= fr.costOf(items[i : i+1])
			i++
			continue
		}
		for inFlight >= f.CallsInFlight {
			collect(<-answers)
		}
		now = fr.now()
		j := fr.pack(items, i, now)
		cost := fr.costOf(items[i:j])
		d := fr.decide(now, inFlight, cost, left, deadline)
		switch d.Verdict {
		case adaptive.Send:
			for k := i; k < j; k++ {
				fr.attempt(now, &items[k])
			}
			fr.t.calls++
			fr.t.cost += int64(cost)
			a := answer{from: i, to: j, sent: now, p: d.Probability}
			call := items[i:j]
			if f.CallsInFlight == 1 {
				res, ok := fr.callInline(a, call, stuck)
				if !ok {
					return // abandoned: run goes on without this goroutine
				}
				a.res = res
				fr.answered(call, a)
			} else {
				inFlight++
				go func() {
					a.res = f.invoker.safeCall(fr.ctx, f.CallTimeout, call)
					answers <- a
				}()
			}
			left -= cost
			i = j
		case adaptive.Postpone:
			// A slot of the shared quota claimed before the deadline is
			// waited for even past it (by the quota's horizon at most):
			// given back, it would lapse before the next firing.
			onSlot := fr.slot.ok && d.RetryAt.Equal(fr.slot.slot.at)
			if (d.RetryAt.Before(deadline) || onSlot) && now.Before(deadline) {
				// Wait for the slot, taking answers meanwhile.
				wait := time.NewTimer(d.RetryAt.Sub(now))
			waiting:
				for {
					select {
					case a := <-answers:
						collect(a)
					case <-wait.C:
						break waiting
					case <-interrupt.Done():
						wait.Stop()
						break waiting
					}
				}
				continue
			}
			// What cannot be sent before its bound runs out is routed
			// now rather than held until then.
			for k := i; k < len(items); k++ {
				if due, _ := fr.deadline(&items[k]); !due.IsZero() && d.RetryAt.After(due) {
					fr.expire(now, items[k], d.RetryAt)
					continue
				}
				fr.rest = append(fr.rest, items[k])
			}
			fr.retryAt = d.RetryAt
			i = len(items)
		default: // Reject: the whole call
			for k := i; k < j; k++ {
				fr.attempt(now, &items[k])
				fr.throttled(now, items[k], failure{
					Outcome: OutcomeClientThrottled, Error: clientThrottledMessage(d.Probability), Prob: d.Probability,
				}, 0)
			}
			left -= cost
			i = j
		}
	}
	for inFlight > 0 {
		collect(<-answers)
	}
}

// batching reports whether calls take several elements (CallBatch).
func (f *throttleFn) batching() bool { return f.ItemsPerCall > 1 || f.BytesPerCall > 0 }

// pack returns the end j of the call that starts with items[i]: items[i:j]
// is one element, or, when batching, as many of the elements from i on as
// fit in ItemsPerCall and BytesPerCall (at least one), stopping before an
// element that waited longer than MaxWait by now.
func (fr *firing) pack(items []item, i int, now time.Time) int {
	f := fr.fn
	if !f.batching() {
		return i + 1
	}
	bytes := len(items[i].Payload)
	j := i + 1
	for ; j < len(items) && j-i < max(f.ItemsPerCall, 1); j++ {
		n := len(items[j].Payload)
		if f.BytesPerCall > 0 && bytes+n > f.BytesPerCall || fr.expired(now, &items[j]) {
			break
		}
		bytes += n
	}
	return j
}

// costOf returns what a call of items costs: the sum of their costs, or
// one call's worth per ItemsPerCall elements under CostPerCall.
func (fr *firing) costOf(items []item) int {
	if fr.fn.CostPerCall {
		per := max(fr.fn.ItemsPerCall, 1)
		return (len(items) + per - 1) / per
	}
	var c int64
	for i := range items {
		c += items[i].cost()
	}
	return int(min(c, math.MaxInt32))
}

// callInline makes the call of a in the calling goroutine, within the call
// timeout. If the timeout runs out first, the call is abandoned: a is sent
// on stuck at once, and when the call returns at last, callInline reports
// false and its goroutine must leave the firing alone.
func (fr *firing) callInline(a answer, call []item, stuck chan<- answer) (callResult, bool) {
	f := fr.fn
	fr.calls++
	tok := fr.calls
	fr.active.Store(tok)
	ctx, cancel := context.WithTimeout(fr.ctx, f.CallTimeout)
	defer cancel()
	stop := context.AfterFunc(ctx, func() {
		if fr.active.CompareAndSwap(tok, 0) {
			stuck <- a
		}
	})
	start := time.Now()
	res := f.invoker.invoke(ctx, call)
	res.latency = time.Since(start)
	stop()
	if !fr.active.CompareAndSwap(tok, 0) {
		return callResult{}, false
	}
	return res, true
}

// expiryDue returns when the first element this firing leaves queued runs
// out of waiting (just after: see deadline), or the zero Time without
// MaxWait or MaxStall. Elements behind those in the queue are newer; if the
// firing leaves none, it is one bound from now.
func (fr *firing) expiryDue() time.Time {
	f := fr.fn
	if f.MaxWait <= 0 && f.MaxStall <= 0 {
		return time.Time{}
	}
	var due time.Time
	for _, list := range [][]item{fr.rest, fr.requeue} {
		for i := range list {
			if at, _ := fr.deadline(&list[i]); !at.IsZero() && (due.IsZero() || at.Before(due)) {
				due = at
			}
		}
	}
	if due.IsZero() {
		bound := f.MaxWait
		if bound <= 0 || f.MaxStall > 0 && f.MaxStall < bound {
			bound = f.MaxStall
		}
		return fr.now().Add(bound)
	}
	return due.Add(time.Millisecond).Truncate(time.Millisecond).Add(time.Millisecond)
}

// decide asks the policy about the next call, of the given cost, after
// permits of the shared quota for its cost, if there is one: without them
// the call is postponed until the quota has more. The permits asked for at
// once are what the policy would send until the end of the firing's wait
// (Budgeter), or of the quota's window if it ends sooner, at most left, the
// cost of the calls remaining. While the quota's service is down, the pool
// fails open or closed at once (see permitPool).
func (fr *firing) decide(now time.Time, inFlight, cost, left int, deadline time.Time) adaptive.Decision {
	f := fr.fn
	if f.pool == nil {
		return f.policy.Decide(now, inFlight, cost)
	}
	if f.pool.r != nil {
		return fr.decideOnSlot(now, inFlight, cost, left, deadline)
	}
	want := left
	if b, ok := f.policy, true; ok { // every Policy has a Budget now
		until := deadline
		if wait := now.Add(firingWait(f.BatchInterval)); wait.After(until) {
			until = wait
		}
		if end := f.pool.windowEnd(now); !end.IsZero() && end.Before(until) {
			until = end // the permits lapse then
		}
		if n := b.Budget(now, until); n >= 0 {
			want = min(want, max(n, cost))
		}
	}
	perm := f.pool.permit(fr.ctx, now, cost, want, firingWait(f.BatchInterval))
	if !perm.ok {
		return adaptive.Decision{Verdict: adaptive.Postpone, RetryAt: perm.retryAt}
	}
	d := f.policy.Decide(now, inFlight, cost)
	f.pool.settle(fr.ctx, perm, d.Verdict == adaptive.Send)
	return d
}

// decideOnSlot is decide with a quota of time slots: the call claims its
// slot first, and the firing waits for it (Postpone until the slot; the
// claim is kept meanwhile, fr.slot). At the slot the policy decides; a
// slot the policy does not use goes back to the pool. A slot the firing
// gets to later than the tolerance is dropped, and the call claims the
// next. The slots asked for at once are those of the next slotAhead at the
// quota's rate (one call's when the firing ends sooner), no more than the
// policy would send then, at most left, the cost of the calls remaining,
// and at least the call's cost. Past the firing's deadline no slot is
// claimed (the firing would not wait for it): the firing ends, and its
// timer is set for now.
func (fr *firing) decideOnSlot(now time.Time, inFlight, cost, left int, deadline time.Time) adaptive.Decision {
	f := fr.fn
	for range 2 { // a second time after a missed slot
		if !fr.slot.ok {
			if !now.Before(deadline) {
				return adaptive.Decision{Verdict: adaptive.Postpone, RetryAt: now}
			}
			want := min(left, f.pool.slotsWithin(slotAhead))
			if !now.Add(slotAhead).Before(deadline) {
				want = cost // slots beyond the firing would lapse
			}
			if b, ok := f.policy, true; ok { // every Policy has a Budget now
				if n := b.Budget(now, now.Add(slotAhead)); n >= 0 {
					want = min(want, n)
				}
			}
			perm := f.pool.permit(fr.ctx, now, cost, max(want, cost), firingWait(f.BatchInterval))
			if !perm.ok {
				return adaptive.Decision{Verdict: adaptive.Postpone, RetryAt: perm.retryAt}
			}
			if !perm.paid { // the service is down: failing open
				d := f.policy.Decide(now, inFlight, cost)
				f.pool.settle(fr.ctx, perm, d.Verdict == adaptive.Send)
				return d
			}
			fr.slot = perm
		}
		at := fr.slot.slot.at
		switch {
		case now.Before(at.Add(-slotEarly)):
			return adaptive.Decision{Verdict: adaptive.Postpone, RetryAt: at}
		case now.After(at.Add(f.pool.slots.tolerance())):
			f.pool.missed(fr.slot)
			fr.slot = permission{}
			continue
		}
		// The policy is asked at the slot's time, within the tolerance of
		// now: a pacer at the quota's rate then spaces its sends as the
		// slots are spaced, instead of carrying each wake-up's lateness
		// into the next call and postponing it past its slot.
		d := f.policy.Decide(at, inFlight, cost)
		if d.Verdict == adaptive.Postpone && !d.RetryAt.After(now) && now.After(at) {
			d = f.policy.Decide(now, inFlight, cost) // it would send now
		}
		f.pool.settle(fr.ctx, fr.slot, d.Verdict == adaptive.Send)
		fr.slot = permission{}
		return d
	}
	return adaptive.Decision{Verdict: adaptive.Postpone, RetryAt: now.Add(time.Millisecond)}
}

// attempt counts an attempt at it.
func (fr *firing) attempt(now time.Time, it *item) {
	fr.t.requests++
	it.Attempts++
	if it.First == 0 {
		it.First = now.UnixMicro()
	}
}

// The bounds of an element's wait (see deadline).
const (
	boundWait  = iota + 1 // MaxWait
	boundStall            // MaxStall
)

// deadline returns when it runs out of waiting, and which bound says so:
// MaxWait after it joined its group's queue, or MaxStall after the later
// of that and the transform's last progress on this worker, whichever
// comes first. Without either bound (or a join time) it returns the zero
// Time.
func (fr *firing) deadline(it *item) (time.Time, int) {
	f := fr.fn
	if it.Since == 0 {
		return time.Time{}, 0
	}
	var at time.Time
	bound := 0
	if f.MaxWait > 0 {
		at, bound = time.Unix(0, it.Since).Add(f.MaxWait), boundWait
	}
	if f.MaxStall > 0 {
		s := time.Unix(0, max(it.Since, f.progress.last())).Add(f.MaxStall)
		if at.IsZero() || s.Before(at) {
			at, bound = s, boundStall
		}
	}
	return at, bound
}

// expired reports whether it ran out of waiting by now (see deadline).
func (fr *firing) expired(now time.Time, it *item) bool {
	at, _ := fr.deadline(it)
	return !at.IsZero() && now.After(at)
}

// expire fails an element that ran out of waiting, or, if next is not
// zero, one that cannot be sent before next, after it runs out: as its last
// attempt failed if it was answered 429 or could not reach the API, else as
// client-throttled.
func (fr *firing) expire(now time.Time, it item, next time.Time) {
	fl := it.Last
	if fl.Outcome != OutcomeServerThrottled && fl.Outcome != OutcomeError {
		fl = failure{Outcome: OutcomeClientThrottled, Prob: 1, Error: fr.expiryMessage(&it, next)}
	}
	fr.fail(now, it, fl)
}

// expiryMessage is the error text of a client-throttled element that ran
// out of waiting (see expire).
func (fr *firing) expiryMessage(it *item, next time.Time) string {
	_, bound := fr.deadline(it)
	name, d := "max wait", fr.fn.MaxWait
	if bound == boundStall {
		name, d = "max stall", fr.fn.MaxStall
	}
	switch {
	case !next.IsZero():
		return fmt.Sprintf("Throttled by Client. Cannot be sent before %s, after the %s (%v) runs out",
			next.UTC().Format(time.RFC3339), name, d)
	case bound == boundStall:
		return fmt.Sprintf("Throttled by Client. Waited longer than the max stall (%v) with no call accepted", d)
	}
	return fmt.Sprintf("Throttled by Client. Waited longer than the max wait (%v)", d)
}

// shed fails, as client-throttled, the items beyond what a buffer of MaxBuffered
// holding size elements has room for, and returns the others.
func (fr *firing) shed(now time.Time, items []item, size int64) []item {
	limit := int64(fr.fn.MaxBuffered)
	if limit <= 0 || size+int64(len(items)) <= limit {
		return items
	}
	room := max(limit-size, 0)
	fl := failure{
		Outcome: OutcomeClientThrottled, Prob: 1,
		Error: fmt.Sprintf("Throttled by Client. Group buffer full (%d elements)", limit),
	}
	for _, it := range items[room:] {
		it.First = now.UnixMicro()
		fr.fail(now, it, fl)
	}
	return items[:room]
}

// answered routes the answer to a call, element by element, and tells the
// policy once for the call: throttled if any of its elements was, else
// accepted if any was, else failed.
func (fr *firing) answered(call []item, a answer) {
	f := fr.fn
	now := fr.now()
	latencyMs.Update(fr.ctx, a.res.latency.Milliseconds())
	ans := adaptive.Answer{Sent: a.sent, Outcome: adaptive.Failed}
	progressed := false
	for k := range call {
		_, err := a.res.of(k)
		switch f.classify(err) {
		case clientcall.Success:
			progressed = true
			if ans.Outcome == adaptive.Failed {
				ans.Outcome = adaptive.Accepted
			}
		case clientcall.Throttled:
			ans.Outcome = adaptive.Throttled
			ra, _ := clientcall.RetryAfter(err)
			ans.RetryAfter = max(ans.RetryAfter, ra)
		default:
			if clientcall.Unreachable(err) { // the policy backs off, as from a 429
				ans.Outcome = adaptive.Throttled
			}
		}
	}
	if progressed {
		f.progress.progressed(now)
	}
	f.policy.Record(now, ans)
	for k := range call {
		fr.route(now, call[k], a, k)
	}
}

// route routes the k-th element of the call a answered.
func (fr *firing) route(now time.Time, it item, a answer, k int) {
	f := fr.fn
	resp, err := a.res.of(k)
	class := f.classify(err)
	code, grpc := statusOf(err)
	switch class {
	case clientcall.Success:
		fr.t.accepted++
		fr.out.ok(&it, resp)
	case clientcall.Throttled:
		ra, _ := clientcall.RetryAfter(err)
		msg := err.Error()
		if code != 0 {
			msg = serverStatusMessage(code)
		}
		fr.throttled(now, it, failure{
			Outcome: OutcomeServerThrottled, Error: msg, Status: code, GRPC: grpc, Prob: a.p,
			RetryAfter: ra.Milliseconds(),
		}, ra)
	default:
		fl := failure{Outcome: OutcomeError, Error: err.Error(), Status: code, GRPC: grpc, Prob: a.p}
		if clientcall.Unreachable(err) {
			// Not the element's fault: tried again as a throttled one
			// would be, and an error only when the strategy gives up.
			fr.throttled(now, it, fl, 0)
			return
		}
		fr.fail(now, it, fl)
	}
}

// throttled applies the strategy to an element whose attempt was throttled
// (or could not reach the API) as fl says: Retry and Postpone put it back in
// the queue (Retry within its bounds, Postpone unless it could not be tried
// again before its wait runs out), no sooner than retryAfter; otherwise it
// fails.
func (fr *firing) throttled(now time.Time, it item, fl failure, retryAfter time.Duration) {
	f := fr.fn
	fr.t.throttled = true
	it.Last = fl
	switch f.Strategy {
	case Retry:
		if it.Attempts < f.MaxAttempts && now.Sub(time.UnixMicro(it.First)) < f.MaxAge {
			fr.again(now, it, max(retryAfter, f.BatchInterval))
			return
		}
	case Postpone:
		if due, _ := fr.deadline(&it); !due.IsZero() && now.Add(retryAfter).After(due) {
			break // routed now rather than when its wait runs out
		}
		fr.again(now, it, retryAfter)
		return
	}
	fr.fail(now, it, fl)
}

// again puts it back in the queue, to be tried no sooner than after wait.
func (fr *firing) again(now time.Time, it item, wait time.Duration) {
	// Runners keep timer times in milliseconds: round down so the timer set
	// for this time finds the element eligible.
	it.NotBefore = now.Add(wait).Truncate(time.Millisecond).UnixNano()
	fr.t.retries++
	fr.requeue = append(fr.requeue, it)
}

// fail ends an element with the failure fl: its Record goes to the output
// of its outcome, except that the Drop strategy discards throttled elements.
func (fr *firing) fail(now time.Time, it item, fl failure) {
	switch {
	case fl.Outcome == OutcomeError:
		fr.t.errs++
		fr.out.errs(fl.record(it, fr.key, now))
	case fr.fn.Strategy == Drop:
		fr.t.dropped++
	case fl.Outcome == OutcomeServerThrottled:
		fr.t.serverThrottled++
		fr.out.st(fl.record(it, fr.key, now))
	default:
		fr.t.clientThrottled++
		fr.out.ct(fl.record(it, fr.key, now))
	}
}

func (f *throttleFn) classify(err error) clientcall.Class {
	if f.classifier != nil {
		return f.classifier.Classify(err)
	}
	return clientcall.Classify(err)
}

// report adds one firing's tally to the Beam counters.
//
// Every bundle reports every counter, zeros included (touch): Prism keeps
// only the last payload of a metric it has not yet looked up, so the
// first bundles of a stage must make all metrics known before counts flow.
func (f *throttleFn) report(ctx context.Context, t *tally, touch bool) {
	for _, c := range []struct {
		c beam.Counter
		n int64
	}{
		{requestsCounter, t.requests}, {acceptedCounter, t.accepted},
		{clientThrottledCounter, t.clientThrottled}, {serverThrottledCounter, t.serverThrottled},
		{errorsCounter, t.errs}, {retriesCounter, t.retries}, {droppedCounter, t.dropped},
		{postponedCounter, t.postponed}, {callsCounter, t.calls}, {costCounter, t.cost},
		{interruptedCounter, t.interrupted},
	} {
		if c.n != 0 || touch {
			c.c.Inc(ctx, c.n)
		}
	}
	if t.throttled {
		throttlingMsecs.Inc(ctx, f.BatchInterval.Milliseconds())
	}
	if touch && f.pool != nil {
		for _, c := range []beam.Counter{quotaRequests, quotaAllowed, quotaLimited, quotaErrors, quotaPermits, quotaDown, quotaFailedOpen} {
			c.Inc(ctx, 0)
		}
	}
}

// statusOf extracts the HTTP status and gRPC code of an error, 0 if none.
func statusOf(err error) (httpCode, grpcCode int) {
	var se *clientcall.StatusError
	if errors.As(err, &se) {
		return se.StatusCode, int(se.GRPCCode)
	}
	if s, ok := status.FromError(err); ok && s != nil && err != nil {
		return 0, int(s.Code())
	}
	return 0, 0
}
