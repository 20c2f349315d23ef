package throttle

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/beamthrottle/beamthrottle/internal/firing"
	"google.golang.org/grpc/status"
)

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

// tally counts one firing's outcomes, added to the Beam counters at its end.
type tally struct {
	requests, accepted, clientThrottled, serverThrottled, errs, retries, dropped, postponed int64
	interrupted                                                                             int64
	calls, cost                                                                             int64
	recalled, orphaned                                                                      int64
	cacheHits, cacheMisses, cacheErrors                                                     int64
	throttled                                                                               bool
	tiers                                                                                   [3]tierTally // with WithPriority, lowest first
}

// batching reports whether calls take several elements (CallBatch).
func (f *throttleFn) batching() bool { return f.ItemsPerCall > 1 || f.BytesPerCall > 0 }

// routed routes the element of a Route step of the core.
func (fr *driver) routed(now time.Time, items []item, s firing.Step, calls []*call) {
	it := &items[s.Elem] // routed once: its slot in items is not read again
	syncItem(it, fr.core.Elem(s.Elem))
	if s.Why == firing.Interrupted {
		fr.interrupt(now, *it) // under Drop too: it counts as interrupted
		return
	}
	if s.To == firing.Dropped {
		fr.t.dropped++
		fr.ended(it, now, false)
		fr.decided(it, nil, false)
		return
	}
	var fl failure
	switch s.Why {
	case firing.Answered:
		resp, _ := calls[s.Call].res.of(s.Pos)
		if s.To == firing.Success {
			fr.t.accepted++
			fr.ended(it, now, true)
			fr.out.ok(it, resp)
			fr.decided(it, resp, fr.remember(it, resp))
			return
		}
		fl = it.Last // classified when its answer came (answered)
	case firing.Rejected:
		fl = failure{Outcome: OutcomeClientThrottled, Error: clientThrottledMessage(s.Prob), Prob: s.Prob}
	case firing.Expired:
		fl = it.Last
		if s.To == firing.ClientThrottled {
			fl = failure{Outcome: OutcomeClientThrottled, Prob: 1, Error: fr.expiryMessage(s.Bound, s.Until)}
		}
	}
	fr.fail(now, *it, fl)
	fr.decided(it, nil, false)
}

// failureOf is the failure of an element whose call ended with err (not
// nil), classified as class, decided with the rejection probability p.
func (fr *driver) failureOf(err error, class clientcall.Class, p float64) failure {
	if err == nil {
		return failure{}
	}
	code, grpc := statusOf(err)
	fl := failure{Outcome: OutcomeError, Error: err.Error(), Status: code, GRPC: grpc, Prob: p}
	if class == clientcall.Throttled {
		ra, _ := clientcall.RetryAfter(err)
		fl.Outcome, fl.RetryAfter = OutcomeServerThrottled, ra.Milliseconds()
		if code != 0 {
			fl.Error = serverStatusMessage(code)
		}
	}
	return fl
}

// elemOf is what the core knows of it.
func elemOf(it *item) firing.Elem {
	e := firing.Elem{Attempts: it.Attempts, Cost: int(min(it.cost(), math.MaxInt32)), Size: len(it.Payload), Tier: it.Tier}
	if it.Since != 0 {
		e.Since = time.Unix(0, it.Since)
	}
	if it.NotBefore != 0 {
		e.NotBefore = time.Unix(0, it.NotBefore)
	}
	if it.First != 0 {
		e.First = time.UnixMicro(it.First)
	}
	switch it.Last.Outcome {
	case OutcomeServerThrottled:
		e.Last = firing.ServerThrottled
	case OutcomeError:
		e.Last = firing.Error
	case OutcomeClientThrottled:
		e.Last = firing.ClientThrottled
	}
	return e
}

// syncItem copies into it the bookkeeping the core kept of it.
func syncItem(it *item, e firing.Elem) {
	it.Attempts = e.Attempts
	if !e.First.IsZero() {
		it.First = e.First.UnixMicro()
	}
	if !e.NotBefore.IsZero() {
		it.NotBefore = e.NotBefore.UnixNano()
	}
	if e.Last == firing.ClientThrottled && it.Last.Outcome != OutcomeClientThrottled {
		it.Last = failure{Outcome: OutcomeClientThrottled, Prob: 1}
	}
}

// expiryMessage is the error text of a client-throttled element that ran
// out of waiting under bound, or that could not be sent before next after
// it runs out.
func (fr *driver) expiryMessage(bound firing.Bound, next time.Time) string {
	name, d := "max wait", fr.fn.MaxWait
	if bound == firing.BoundStall {
		name, d = "max stall", fr.fn.MaxStall
	}
	switch {
	case !next.IsZero():
		return fmt.Sprintf("Throttled by Client. Cannot be sent before %s, after the %s (%v) runs out",
			next.UTC().Format(time.RFC3339), name, d)
	case bound == firing.BoundStall:
		return fmt.Sprintf("Throttled by Client. Waited longer than the max stall (%v) with no call accepted", d)
	}
	return fmt.Sprintf("Throttled by Client. Waited longer than the max wait (%v)", d)
}

// makeRoom makes room, in a full buffer of a group with priorities
// (WithMaxBuffered, WithPriority), for arriving items of a higher tier than
// some of those queued: the queued elements of the lowest tiers are shed
// (as shed sheds, the lowest tier and the oldest first) so that what
// arrives is shed only when nothing below its tier is queued.
func (fr *driver) makeRoom(sp state.Provider, meta *queueMeta, items []item) error {
	limit := int64(fr.fn.MaxBuffered)
	if !fr.fn.Priorities || limit <= 0 {
		return nil
	}
	over := min(meta.Size+int64(len(items))-limit, int64(len(items)))
	if over <= 0 {
		return nil
	}
	// The arriving items shed otherwise, the lowest over of them, by tier:
	// for each, a queued element of a lower tier goes instead, if any.
	byTier := slices.Clone(items)
	slices.SortStableFunc(byTier, func(a, b item) int { return cmp.Compare(b.Tier, a.Tier) })
	fl := failure{
		Outcome: OutcomeClientThrottled, Prob: 1,
		Error: fmt.Sprintf("Throttled by Client. Group buffer full (%d elements): shed for a higher-priority element", limit),
	}
	shed := byTier[int64(len(byTier))-over:]
	for len(shed) > 0 && shed[0].Tier > tierLow {
		n := 1
		for n < len(shed) && shed[n].Tier == shed[0].Tier {
			n++
		}
		got, err := fr.fn.evict(sp, meta, n, shed[0].Tier)
		if err != nil {
			return err
		}
		now := fr.now()
		for _, it := range got {
			if it.First == 0 {
				it.First = now.UnixMicro()
			}
			fr.fail(now, it, fl)
		}
		shed = shed[n:]
	}
	return nil
}

// shed fails, as client-throttled, the items beyond what a buffer of MaxBuffered
// holding size elements has room for, and returns the others.
func (fr *driver) shed(now time.Time, items []item, size int64) []item {
	limit := int64(fr.fn.MaxBuffered)
	if limit <= 0 || size+int64(len(items)) <= limit {
		return items
	}
	room := max(limit-size, 0)
	if fr.fn.Priorities { // the lowest tiers are shed first
		slices.SortStableFunc(items, func(a, b item) int { return cmp.Compare(b.Tier, a.Tier) })
	}
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

// fail ends an element with the failure fl: its Record goes to the output
// of its outcome, except that the Drop strategy discards throttled elements.
func (fr *driver) fail(now time.Time, it item, fl failure) {
	fr.ended(&it, now, false)
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

// report adds one firing's tally to the Beam counters.
//
// Every bundle reports every counter, zeros included (touch): Prism keeps
// only the last payload of a metric it has not yet looked up, so the
// first bundles of a stage must make all metrics known before counts flow.
func (f *throttleFn) report(ctx context.Context, t *tally, touch bool) {
	type count struct {
		c beam.Counter
		n int64
	}
	counts := []count{
		{requestsCounter, t.requests}, {acceptedCounter, t.accepted},
		{clientThrottledCounter, t.clientThrottled}, {serverThrottledCounter, t.serverThrottled},
		{errorsCounter, t.errs}, {retriesCounter, t.retries}, {droppedCounter, t.dropped},
		{postponedCounter, t.postponed}, {callsCounter, t.calls}, {costCounter, t.cost},
		{interruptedCounter, t.interrupted}, {recalledCounter, t.recalled}, {orphanedCounter, t.orphaned},
	}
	if f.cache != nil {
		counts = append(counts, count{cacheHitsCounter, t.cacheHits}, count{cacheMissesCounter, t.cacheMisses},
			count{cacheErrorsCounter, t.cacheErrors})
	}
	for _, c := range counts {
		if c.n != 0 || touch {
			c.c.Inc(ctx, c.n)
		}
	}
	if t.throttled {
		throttlingMsecs.Inc(ctx, f.BatchInterval.Milliseconds())
	}
	if f.Priorities {
		t.reportTiers(ctx, touch)
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
