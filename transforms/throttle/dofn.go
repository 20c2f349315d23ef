package throttle

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"reflect"
	"sync"
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
//
// The throttle's clock is the timer's firing time plus the wall time spent in
// the firing, so that it follows the runner's processing-time clock (real
// or, under a test clock, synthetic).
type throttleFn struct {
	Queue    state.Map[int64, batch] // the buffer: batches by sequence number, oldest first
	Meta     state.Value[queueMeta]
	Counters state.Value[adaptive.State]
	Flush    timers.ProcessingTime

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

	caller     reflect.Value
	invoker    *invoker
	classifier clientcall.Classifier
	thr        *adaptive.Throttler
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
	f.thr, err = adaptive.New(f.Adaptive, f.rng.Float64)
	if err != nil {
		return err
	}
	log.Infof(ctx, "throttle: caller %v ready: batches of %d every %v, K=%v, strategy %s",
		f.Caller.Type.T, f.BatchSize, f.BatchInterval, f.thr.Config().K, f.Strategy)
	return nil
}

func (f *throttleFn) Teardown(ctx context.Context) error {
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

// tally counts one firing's outcomes, added to the Beam counters at its end.
type tally struct {
	requests, accepted, clientThrottled, serverThrottled, errs, retries, dropped int64
	throttled                                                                    bool
}

// OnTimer processes one batch of the group's buffer.
func (f *throttleFn) OnTimer(ctx context.Context, ts beam.EventTime, sp state.Provider, tp timers.Provider, key string, _ timers.Context,
	emitOK func([]byte), emitCT, emitST, emitErr func(Record)) error {
	fire := ts.ToTime()
	wall := time.Now()
	now := func() time.Time { return fire.Add(time.Since(wall)) }

	meta, _, err := f.Meta.Read(sp)
	if err != nil {
		return err
	}
	items, err := f.take(sp, &meta, f.BatchSize, fire.UnixNano())
	if err != nil {
		return err
	}

	st, _, err := f.Counters.Read(sp)
	if err != nil {
		return err
	}
	if err := f.thr.SetState(st); err != nil {
		log.Warnf(ctx, "throttle: group %q: discarding unreadable throttle state: %v", key, err)
		_ = f.thr.SetState(adaptive.State{})
	}
	if f.HasSeed {
		h := fnv.New64a()
		h.Write([]byte(key))
		f.src.Seed(f.Seed^h.Sum64(), uint64(fire.UnixNano()))
	}

	var (
		t    tally
		keep []item // to retry on a later firing
	)
	work := make([]int, len(items))
	for i := range work {
		work[i] = i
	}
	for start := 0; start < len(work); start += f.CallsInFlight {
		wave := work[start:min(start+f.CallsInFlight, len(work))]
		keep = f.runWave(ctx, key, now, items, wave, keep, &t, emitOK, emitCT, emitST, emitErr)
	}

	if err := f.Counters.Write(sp, f.thr.State()); err != nil {
		return err
	}
	if len(keep) > 0 {
		if err := f.Queue.Put(sp, meta.Tail, batch{Items: keep}); err != nil {
			return err
		}
		meta.Tail++
		meta.Size += int64(len(keep))
	}
	meta.Armed = 0
	if meta.Size > 0 {
		next := fire.Add(f.BatchInterval)
		f.Flush.Set(tp, next)
		meta.Armed = next.UnixNano()
		t.throttled = true
	} else {
		meta.Head, meta.Tail = 0, 0
	}
	if err := f.Meta.Write(sp, meta); err != nil {
		return err
	}
	f.report(ctx, &t, false)
	return nil
}

// runWave decides on the items of one wave, calls the allowed ones
// concurrently (CallsInFlight at most) and routes every item. It returns keep
// with the items to retry appended.
func (f *throttleFn) runWave(ctx context.Context, key string, now func() time.Time, items []item, wave []int, keep []item, t *tally,
	emitOK func([]byte), emitCT, emitST, emitErr func(Record)) []item {
	type pending struct {
		idx int
		p   float64
		res callResult
	}
	calls := make([]pending, 0, len(wave))
	for _, idx := range wave {
		it := &items[idx]
		tnow := now()
		it.Attempts++
		if it.First == 0 {
			it.First = tnow.UnixMicro()
		}
		t.requests++
		// Calls of this wave decided before this one have not answered yet.
		allow, p := f.thr.DecideWithPending(tnow, len(calls))
		if !allow {
			it.LastOutcome, it.LastError, it.LastStatus, it.LastGRPC, it.LastProb, it.RetryAfter =
				OutcomeClientThrottled, clientThrottledMessage(p), 0, 0, p, 0
			keep = f.throttled(key, tnow, *it, 0, keep, t, emitCT, emitST)
			continue
		}
		calls = append(calls, pending{idx: idx, p: p})
	}
	if len(calls) == 1 {
		calls[0].res = f.invoker.safeCall(ctx, f.CallTimeout, items[calls[0].idx].Payload)
	} else if len(calls) > 1 {
		var wg sync.WaitGroup
		for i := range calls {
			wg.Go(func() { calls[i].res = f.invoker.safeCall(ctx, f.CallTimeout, items[calls[i].idx].Payload) })
		}
		wg.Wait()
	}
	for _, c := range calls {
		it := &items[c.idx]
		tnow := now()
		latencyMs.Update(ctx, c.res.latency.Milliseconds())
		class := f.classify(c.res.err)
		switch class {
		case clientcall.Success:
			f.thr.Record(tnow, adaptive.Accepted)
			t.accepted++
			emitOK(c.res.resp)
			continue
		case clientcall.Throttled:
			f.thr.Record(tnow, adaptive.Throttled)
			if ra, ok := clientcall.RetryAfter(c.res.err); ok {
				f.thr.RecordRetryAfter(tnow, ra)
			}
		default:
			f.thr.Record(tnow, adaptive.Failed)
		}
		code, grpc := statusOf(c.res.err)
		if class == clientcall.Throttled {
			ra, _ := clientcall.RetryAfter(c.res.err)
			msg := c.res.err.Error()
			if code != 0 {
				msg = serverStatusMessage(code)
			}
			it.LastOutcome, it.LastError, it.LastStatus, it.LastGRPC, it.LastProb, it.RetryAfter =
				OutcomeServerThrottled, msg, code, grpc, c.p, ra.Milliseconds()
			keep = f.throttled(key, tnow, *it, ra, keep, t, emitCT, emitST)
			continue
		}
		t.errs++
		emitErr(Record{
			Input: it.Payload, Error: c.res.err.Error(), Outcome: OutcomeError,
			StatusCode: code, GRPCCode: grpc, Probability: c.p, Attempts: it.Attempts, Group: key,
			FirstAttempt: it.First, LastAttempt: tnow.UnixMicro(),
		})
	}
	return keep
}

// throttled applies the strategy to an element that was throttled (its Last*
// fields say how). It returns keep, with the element appended if it is to be
// retried.
func (f *throttleFn) throttled(key string, now time.Time, it item, retryAfter time.Duration, keep []item, t *tally, emitCT, emitST func(Record)) []item {
	t.throttled = true
	switch f.Strategy {
	case Drop:
		t.dropped++
		return keep
	case Retry:
		if it.Attempts < f.MaxAttempts && now.Sub(time.UnixMicro(it.First)) < f.MaxAge {
			// Runners keep timer times in milliseconds: round down so the
			// timer set for this time finds the element eligible.
			it.NotBefore = now.Add(max(retryAfter, f.BatchInterval)).Truncate(time.Millisecond).UnixNano()
			t.retries++
			return append(keep, it)
		}
	}
	rec := Record{
		Input: it.Payload, Error: it.LastError, Outcome: it.LastOutcome,
		StatusCode: it.LastStatus, GRPCCode: it.LastGRPC, Probability: it.LastProb, Attempts: it.Attempts, Group: key,
		FirstAttempt: it.First, LastAttempt: now.UnixMicro(), RetryAfter: it.RetryAfter,
	}
	if it.LastOutcome == OutcomeClientThrottled {
		t.clientThrottled++
		emitCT(rec)
	} else {
		t.serverThrottled++
		emitST(rec)
	}
	return keep
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
	} {
		if c.n != 0 || touch {
			c.c.Inc(ctx, c.n)
		}
	}
	if t.throttled {
		throttlingMsecs.Inc(ctx, f.BatchInterval.Milliseconds())
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
