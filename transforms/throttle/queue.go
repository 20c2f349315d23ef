package throttle

import (
	"context"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
)

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
	// Flying are the calls under way when the last firing ended, oldest
	// first; their elements are in the Flying map state, not in the queue
	// (or Size).
	Flying []flyingCall
}

// maxScan bounds how many stored batches one firing looks at.
const maxScan = 256

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
	if err := fr.makeRoom(sp, &meta, b.Items); err != nil {
		return err
	}
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
		cfg := f.coreConfig()
		fire := now.Add(cfg.ArmDelay())
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
		if len(work) == 0 && len(b.Items) >= n && eligible(b.Items[:n], fireNs) {
			work, rest = b.Items[:n:n], b.Items[n:] // the batch read is ours: no copy
		} else {
			if work == nil {
				work = make([]item, 0, max(min(int64(n), meta.Size), 0))
			}
			work, rest = takeEligible(work, b.Items, n, fireNs)
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

// takeByTier is take for a group with priorities (WithPriority): among the
// first maxScan stored batches, it takes the eligible elements of the
// highest tier first, oldest first within a tier.
func (f *throttleFn) takeByTier(sp state.Provider, meta *queueMeta, n int, fireNs int64) ([]item, error) {
	return f.pick(sp, meta, n, []int{tierHigh, tierNormal, tierLow}, func(it *item) bool { return it.NotBefore <= fireNs })
}

// evict removes from the queue up to n elements of tiers below tier, the
// lowest tier first and the oldest first within a tier, among the first
// maxScan stored batches: room for elements of tier arriving at a full
// buffer (WithMaxBuffered).
func (f *throttleFn) evict(sp state.Provider, meta *queueMeta, n, tier int) ([]item, error) {
	var tiers []int
	for t := tierLow; t < tier; t++ {
		tiers = append(tiers, t)
	}
	return f.pick(sp, meta, n, tiers, func(*item) bool { return true })
}

// pick removes up to n elements for which ok holds from the first maxScan
// stored batches of the queue: those of tiers[0] first, then tiers[1] and
// so on, oldest first within a tier.
func (f *throttleFn) pick(sp state.Provider, meta *queueMeta, n int, tiers []int, ok func(*item) bool) ([]item, error) {
	type stored struct {
		k    int64
		b    batch
		took bool
	}
	var seen []stored
	gone := map[int64]bool{} // keys holding no batch, or none once taken from
	for k := meta.Head; k < meta.Tail && len(seen) < maxScan && len(tiers) > 0; k++ {
		b, found, err := f.Queue.Get(sp, k)
		if err != nil {
			return nil, err
		}
		if !found {
			gone[k] = true
			continue
		}
		seen = append(seen, stored{k: k, b: b})
	}
	var work []item
	for _, tier := range tiers {
		for i := range seen {
			if len(work) >= n {
				break
			}
			s := &seen[i]
			rest := s.b.Items[:0:0]
			for _, it := range s.b.Items {
				if len(work) < n && it.Tier == tier && ok(&it) {
					work = append(work, it)
					s.took = true
				} else {
					rest = append(rest, it)
				}
			}
			s.b.Items = rest
		}
	}
	for _, s := range seen {
		switch {
		case !s.took:
		case len(s.b.Items) == 0:
			if err := f.Queue.Remove(sp, s.k); err != nil {
				return nil, err
			}
			gone[s.k] = true
		default:
			if err := f.Queue.Put(sp, s.k, s.b); err != nil {
				return nil, err
			}
		}
	}
	for meta.Head < meta.Tail && gone[meta.Head] {
		meta.Head++
	}
	meta.Size -= int64(len(work))
	return work, nil
}

// eligible reports whether every item is eligible at fireNs (NotBefore).
func eligible(items []item, fireNs int64) bool {
	for i := range items {
		if items[i].NotBefore > fireNs {
			return false
		}
	}
	return true
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
