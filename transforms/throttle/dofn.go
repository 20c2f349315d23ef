package throttle

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"reflect"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"google.golang.org/grpc/status"

	"github.com/beamthrottle/beamthrottle/clientcall"
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
// bounds the backlog: elements arriving at a full buffer are shed to
// ClientThrottled at once. The throttle counters live in value state, so they survive bundle
// boundaries and moves of the key between workers.
// Each firing works through the head of the queue as the group's policy
// decides (see firing).
type throttleFn struct {
	Queue       state.Map[int64, batch] // the buffer: batches by sequence number, oldest first
	Meta        state.Value[queueMeta]
	PolicyState state.Value[[]byte] // the policy's state (adaptive.Policy.MarshalBinary)
	Flush       timers.ProcessingTime

	BatchSize     int
	BatchInterval time.Duration
	Adaptive      adaptive.Config
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
	Groups        int
	Scope         Scope
	ID            string // the transform's, for its worker-scope policy and permit pool
	Quota         QuotaConfig

	caller     reflect.Value
	invoker    *invoker
	classifier clientcall.Classifier
	policy     adaptive.Policy
	shared     bool        // policy is the worker's (ScopeWorker), not saved per group
	pool       *permitPool // the worker's permits of the shared quota; nil without one
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
	f.invoker = newInvoker(v, f.ReqType.T, f.RespType.T)
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
	log.Infof(ctx, "throttle: caller %v ready: batches of %d every %v, mode %v, strategy %s",
		f.Caller.Type.T, f.BatchSize, f.BatchInterval, f.Adaptive.Mode, f.Strategy)
	return nil
}

// newPolicy makes a policy for the mode: the pacer (for groups pacers
// sharing the backend), or the SRE throttle drawing from rnd (which
// postpones by a batch interval under the Postpone strategy instead of
// rejecting).
func (f *throttleFn) newPolicy(rnd func() float64, groups int) (adaptive.Policy, error) {
	if f.Adaptive.Mode == adaptive.ModePaced {
		return adaptive.NewPacer(adaptive.PacerConfig{Groups: groups})
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

// ProcessElement adds a batch to the group's queue and arms the timer if it
// is not armed yet. Elements beyond MaxBuffered are shed to ClientThrottled.
func (f *throttleFn) ProcessElement(ctx context.Context, sp state.Provider, tp timers.Provider, key string, b batch,
	_ func([]byte), emitCT, _, _ func(Record)) error {
	f.report(ctx, &tally{}, true)
	meta, _, err := f.Meta.Read(sp)
	if err != nil {
		return err
	}
	if f.MaxBuffered > 0 && meta.Size+int64(len(b.Items)) > int64(f.MaxBuffered) {
		room := max(int64(f.MaxBuffered)-meta.Size, 0)
		now := time.Now()
		for _, it := range b.Items[room:] {
			emitCT(Record{
				Input: it.Payload, Outcome: OutcomeClientThrottled, Group: key, Probability: 1,
				Error:        fmt.Sprintf("Throttled by Client. Group buffer full (%d elements)", f.MaxBuffered),
				FirstAttempt: now.UnixMicro(), LastAttempt: now.UnixMicro(),
			})
		}
		clientThrottledCounter.Inc(ctx, int64(len(b.Items))-room)
		b.Items = b.Items[:room]
		if len(b.Items) == 0 {
			return nil
		}
	}
	since := time.Now().UnixNano() + meta.Skew
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
		fire := time.Now().Add(f.BatchInterval)
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
		for _, it := range b.Items {
			if len(work) < n && it.NotBefore <= fireNs {
				work = append(work, it)
			} else {
				rest = append(rest, it)
			}
		}
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
		expired := 0
		now := fr.now()
		for i := range got {
			if f.MaxWait > 0 && got[i].Since != 0 && now.Sub(time.Unix(0, got[i].Since)) > f.MaxWait {
				fr.expire(now, &got[i])
				expired++
				continue
			}
			live = append(live, got[i])
		}
		if expired == 0 || len(live) >= f.BatchSize {
			break
		}
	}
	return live, nil
}

// tally counts one firing's outcomes, added to the Beam counters at its end.
type tally struct {
	requests, accepted, clientThrottled, serverThrottled, errs, retries, dropped, postponed int64
	throttled                                                                               bool
}

// OnTimer runs one firing of the group (see firing).
func (f *throttleFn) OnTimer(ctx context.Context, ts beam.EventTime, sp state.Provider, tp timers.Provider, key string, _ timers.Context,
	emitOK func([]byte), emitCT, emitST, emitErr func(Record)) error {
	fr := &firing{
		fn: f, ctx: ctx, key: key, fire: ts.ToTime(), wall: time.Now(),
		emitOK: emitOK, emitCT: emitCT, emitST: emitST, emitErr: emitErr,
	}
	meta, _, err := f.Meta.Read(sp)
	if err != nil {
		return err
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
	// first: it is older than everything behind it.
	if back := append(fr.requeue, fr.rest...); len(back) > 0 {
		meta.Head--
		if err := f.Queue.Put(sp, meta.Head, batch{Items: back}); err != nil {
			return err
		}
		meta.Size += int64(len(back))
		fr.t.postponed += int64(len(fr.rest))
	}
	meta.Armed = 0
	meta.Skew = fr.start().UnixNano() - fr.wall.UnixNano()
	if meta.Size > 0 {
		next := fr.fire.Add(f.BatchInterval)
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
// they come); Postpone to a time within a tenth of the batch interval waits
// for it inside the firing; Postpone beyond it ends the firing, and the
// timer is set for that time, so sends are spread at the policy's pace, not
// sent back to back; Reject applies the strategy.
//
// The throttle's clock is the timer's firing time (or the wall clock, if
// the timer fired late) plus the wall time spent in the firing, so that it
// follows the runner's processing-time clock (real or, under a test clock,
// synthetic).
type firing struct {
	fn                      *throttleFn
	ctx                     context.Context
	key                     string
	fire, wall              time.Time
	emitOK                  func([]byte)
	emitCT, emitST, emitErr func(Record)

	t       tally
	requeue []item    // elements to try again on a later firing (429s, retries)
	rest    []item    // elements the policy postponed, not tried in this firing
	retryAt time.Time // when the policy wants to be asked again; zero if it did not postpone
}

// answer is the result of one call.
type answer struct {
	idx  int
	sent time.Time
	p    float64
	res  callResult
}

func (fr *firing) now() time.Time { return fr.start().Add(time.Since(fr.wall)) }

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

// run works through items.
func (fr *firing) run(items []item) {
	f := fr.fn
	deadline := fr.start().Add(firingWait(f.BatchInterval))
	answers := make(chan answer, f.CallsInFlight)
	for i := range items {
		if items[i].Since == 0 { // queued by an older version
			items[i].Since = fr.fire.UnixNano()
		}
	}
	inFlight := 0
	collect := func(a answer) {
		inFlight--
		fr.route(&items[a.idx], a)
	}
	for i := 0; i < len(items); {
		it := &items[i]
		now := fr.now()
		if f.MaxWait > 0 && now.Sub(time.Unix(0, it.Since)) > f.MaxWait {
			fr.expire(now, it)
			i++
			continue
		}
		for inFlight >= f.CallsInFlight {
			collect(<-answers)
		}
		now = fr.now()
		d := fr.decide(now, inFlight, len(items)-i, deadline)
		switch d.Verdict {
		case adaptive.Send:
			fr.attempt(now, it)
			inFlight++
			go func(idx int, sent time.Time, p float64, payload []byte) {
				answers <- answer{idx: idx, sent: sent, p: p, res: f.invoker.safeCall(fr.ctx, f.CallTimeout, payload)}
			}(i, now, d.Probability, it.Payload)
			i++
		case adaptive.Postpone:
			if d.RetryAt.Before(deadline) && now.Before(deadline) {
				// Wait for the slot, taking answers meanwhile.
				wait := time.NewTimer(d.RetryAt.Sub(now))
			waiting:
				for {
					select {
					case a := <-answers:
						collect(a)
					case <-wait.C:
						break waiting
					}
				}
				continue
			}
			fr.rest = append(fr.rest, items[i:]...)
			fr.retryAt = d.RetryAt
			i = len(items)
		default: // Reject
			fr.attempt(now, it)
			it.LastOutcome, it.LastError, it.LastStatus, it.LastGRPC, it.LastProb, it.RetryAfter =
				OutcomeClientThrottled, clientThrottledMessage(d.Probability), 0, 0, d.Probability, 0
			fr.throttled(now, *it, 0)
			i++
		}
	}
	for inFlight > 0 {
		collect(<-answers)
	}
}

// expiryDue returns when the first element this firing leaves queued runs
// out of MaxWait (just after), or the zero Time without MaxWait. Elements
// behind those in the queue are newer; if the firing leaves none, it is one
// MaxWait from now.
func (fr *firing) expiryDue() time.Time {
	f := fr.fn
	if f.MaxWait <= 0 {
		return time.Time{}
	}
	oldest := int64(0)
	for _, it := range append(fr.rest[:len(fr.rest):len(fr.rest)], fr.requeue...) {
		if it.Since != 0 && (oldest == 0 || it.Since < oldest) {
			oldest = it.Since
		}
	}
	if oldest == 0 {
		return fr.now().Add(f.MaxWait)
	}
	return time.Unix(0, oldest).Add(f.MaxWait + time.Millisecond).Truncate(time.Millisecond).Add(time.Millisecond)
}

// decide asks the policy about the next of remaining elements, after a
// permit of the shared quota, if there is one: without a permit the element
// is postponed until the quota has more. The permits asked for at once are
// what the policy would send until the end of the firing's wait (Budgeter),
// or of the quota's window if it ends sooner, at most the elements
// remaining.
func (fr *firing) decide(now time.Time, inFlight, remaining int, deadline time.Time) adaptive.Decision {
	f := fr.fn
	if f.pool == nil {
		return f.policy.Decide(now, inFlight)
	}
	want := remaining
	if b, ok := f.policy.(adaptive.Budgeter); ok {
		until := deadline
		if wait := now.Add(firingWait(f.BatchInterval)); wait.After(until) {
			until = wait
		}
		if end := f.pool.windowEnd(now); !end.IsZero() && end.Before(until) {
			until = end // the permits lapse then
		}
		if n := b.Budget(now, until); n >= 0 {
			want = min(want, max(n, 1))
		}
	}
	ok, retryAt := f.pool.permit(fr.ctx, now, want, firingWait(f.BatchInterval))
	if !ok {
		return adaptive.Decision{Verdict: adaptive.Postpone, RetryAt: retryAt}
	}
	d := f.policy.Decide(now, inFlight)
	if d.Verdict != adaptive.Send {
		f.pool.unspend()
	}
	return d
}

// attempt counts an attempt at it.
func (fr *firing) attempt(now time.Time, it *item) {
	fr.t.requests++
	it.Attempts++
	if it.First == 0 {
		it.First = now.UnixMicro()
	}
}

// expire routes an element that waited longer than MaxWait.
func (fr *firing) expire(now time.Time, it *item) {
	if it.LastOutcome != OutcomeServerThrottled {
		it.LastOutcome, it.LastStatus, it.LastGRPC, it.LastProb, it.RetryAfter = OutcomeClientThrottled, 0, 0, 1, 0
		it.LastError = fmt.Sprintf("Throttled by Client. Waited longer than the max wait (%v)", fr.fn.MaxWait)
	}
	fr.fn.route(fr, now, *it)
}

// route routes the answer to a call and tells the policy.
func (fr *firing) route(it *item, a answer) {
	f := fr.fn
	now := fr.now()
	latencyMs.Update(fr.ctx, a.res.latency.Milliseconds())
	class := f.classify(a.res.err)
	ans := adaptive.Answer{Sent: a.sent}
	switch class {
	case clientcall.Success:
		ans.Outcome = adaptive.Accepted
	case clientcall.Throttled:
		ans.Outcome = adaptive.Throttled
		ans.RetryAfter, _ = clientcall.RetryAfter(a.res.err)
	default:
		ans.Outcome = adaptive.Failed
	}
	f.policy.Record(now, ans)
	switch class {
	case clientcall.Success:
		fr.t.accepted++
		fr.emitOK(a.res.resp)
		return
	case clientcall.Throttled:
		code, grpc := statusOf(a.res.err)
		msg := a.res.err.Error()
		if code != 0 {
			msg = serverStatusMessage(code)
		}
		it.LastOutcome, it.LastError, it.LastStatus, it.LastGRPC, it.LastProb, it.RetryAfter =
			OutcomeServerThrottled, msg, code, grpc, a.p, ans.RetryAfter.Milliseconds()
		fr.throttled(now, *it, ans.RetryAfter)
		return
	}
	code, grpc := statusOf(a.res.err)
	fr.t.errs++
	fr.emitErr(Record{
		Input: it.Payload, Error: a.res.err.Error(), Outcome: OutcomeError,
		StatusCode: code, GRPCCode: grpc, Probability: a.p, Attempts: it.Attempts, Group: fr.key,
		FirstAttempt: it.First, LastAttempt: now.UnixMicro(),
	})
}

// throttled applies the strategy to an element that was throttled (its
// Last* fields say how): it goes back to the queue, or to its output.
func (fr *firing) throttled(now time.Time, it item, retryAfter time.Duration) {
	f := fr.fn
	fr.t.throttled = true
	switch f.Strategy {
	case Drop:
		fr.t.dropped++
		return
	case Retry:
		if it.Attempts < f.MaxAttempts && now.Sub(time.UnixMicro(it.First)) < f.MaxAge {
			fr.again(now, it, max(retryAfter, f.BatchInterval))
			return
		}
	case Postpone:
		fr.again(now, it, retryAfter)
		return
	}
	f.route(fr, now, it)
}

// again puts it back in the queue, to be tried no sooner than after wait.
func (fr *firing) again(now time.Time, it item, wait time.Duration) {
	// Runners keep timer times in milliseconds: round down so the timer set
	// for this time finds the element eligible.
	it.NotBefore = now.Add(wait).Truncate(time.Millisecond).UnixNano()
	fr.t.retries++
	fr.requeue = append(fr.requeue, it)
}

// route emits a throttled element to its output with its record.
func (f *throttleFn) route(fr *firing, now time.Time, it item) {
	rec := Record{
		Input: it.Payload, Error: it.LastError, Outcome: it.LastOutcome,
		StatusCode: it.LastStatus, GRPCCode: it.LastGRPC, Probability: it.LastProb, Attempts: it.Attempts, Group: fr.key,
		FirstAttempt: it.First, LastAttempt: now.UnixMicro(), RetryAfter: it.RetryAfter,
	}
	if it.LastOutcome == OutcomeServerThrottled {
		fr.t.serverThrottled++
		fr.emitST(rec)
		return
	}
	fr.t.clientThrottled++
	fr.emitCT(rec)
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
		{postponedCounter, t.postponed},
	} {
		if c.n != 0 || touch {
			c.c.Inc(ctx, c.n)
		}
	}
	if t.throttled {
		throttlingMsecs.Inc(ctx, f.BatchInterval.Milliseconds())
	}
	if touch && f.pool != nil {
		for _, c := range []beam.Counter{quotaRequests, quotaAllowed, quotaLimited, quotaErrors, quotaPermits} {
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
