package throttle

import (
	"context"
	"hash/fnv"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"
)

// OnTimer runs one firing of the group (see firing).
func (f *throttleFn) OnTimer(ctx context.Context, ts beam.EventTime, sp state.Provider, tp timers.Provider, key string, _ timers.Context,
	emitOK func(beam.Z), emitCT, emitST, emitErr func(Record)) error {
	fr := f.newFiring(ctx, key, ts.ToTime(), f.outputs(emitOK, emitCT, emitST, emitErr))
	f.progress.started(fr.start())
	if f.pool != nil {
		f.pool.begin()
		defer func() { f.pool.end(ctx, fr.now(), fr.held()) }()
	}
	meta, _, err := f.Meta.Read(sp)
	if err != nil {
		return err
	}
	if interrupted() && len(meta.Flying) == 0 {
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
	items, err := fr.carry(sp, &meta)
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

	if err := fr.drive(items, f.queueSource(sp, &meta, fr.fire)); err != nil {
		return err
	}

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
	back := fr.rest
	if len(fr.requeue)+len(fr.waiting) > 0 {
		back = slices.Concat(fr.requeue, fr.rest, fr.waiting)
	}
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
		fr.t.postponed += int64(len(fr.rest) + len(fr.waiting))
		if f.Priorities {
			for _, list := range [][]item{fr.rest, fr.waiting} {
				for _, it := range list {
					fr.t.tiers[tierOf(it.Tier)-tierLow].postponed++
				}
			}
		}
	}
	if err := fr.storeFlying(sp, &meta); err != nil {
		return err
	}
	meta.Armed = 0
	meta.Skew = fr.start().UnixNano() - fr.wall.UnixNano()
	if meta.Size > 0 || len(meta.Flying) > 0 {
		// A call under way keeps the timer armed: its answer is routed
		// by the group's next firing.
		next := fr.core.Timer(fr.now())
		f.Flush.Set(tp, next)
		meta.Armed = next.UnixNano()
		fr.t.throttled = fr.t.throttled || meta.Size > 0
	}
	if meta.Size == 0 {
		meta.Head, meta.Tail = 0, 0
	}
	if err := f.Meta.Write(sp, meta); err != nil {
		return err
	}
	f.report(ctx, &fr.t, false)
	return nil
}
