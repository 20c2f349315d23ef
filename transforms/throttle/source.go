package throttle

import (
	"slices"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
)

// source gives a firing up to n eligible elements from the head of the
// group's queue, removing them from it, as the firing's core asks for them
// (firing.Take); fewer than n when the queue has no more.
type source func(n int) ([]item, error)

// maxTakes bounds how many times a firing takes from its queue: the first
// take fills its batch, and the later ones replace elements that ran out
// of waiting (MaxWait) or were answered by the cache, so that a backlog of expired elements does not eat the
// batches of the live ones behind it, nor one firing route all of it.
const maxTakes = 16

// take gives the core the elements src has for a Take step asking for n
// (none once src had fewer than asked, or after maxTakes), and returns
// items with them.
func (fr *driver) take(items []item, src source, n int) ([]item, error) {
	if src == nil || fr.drained || fr.takes >= maxTakes {
		fr.core.Taken()
		return items, nil
	}
	fr.takes++
	got, err := src(n)
	if err != nil {
		return items, err
	}
	fr.drained = len(got) < n
	if len(got) == 0 {
		fr.core.Taken()
		return items, nil
	}
	got = fr.fromCache(got)
	now := fr.now()
	fr.core.Grow(len(got))
	for i := range got {
		fr.core.Add(now, elemOf(&got[i]))
	}
	if len(items) == 0 {
		return slices.Clip(got), nil // a later take appends to a copy, not to src's array
	}
	return append(slices.Grow(items, n), got...), nil // room for the later takes too: the core asks for no more than n in all
}

// queueSource is the source of a firing of the group whose queue is in sp
// (meta its bookkeeping): the eligible elements at the timer's time fire,
// by tier first with priorities (see take and takeByTier).
func (f *throttleFn) queueSource(sp state.Provider, meta *queueMeta, fire time.Time) source {
	take := f.take
	if f.Priorities {
		take = f.takeByTier
	}
	return func(n int) ([]item, error) { return take(sp, meta, n, fire.UnixNano()) }
}

// run works through items as the group's queue: the core takes them as
// it needs them (see drive), up to its batch size, and what it does not
// take goes to rest. Afterwards requeue and rest hold what goes back to
// the queue. Tests use it to drive a firing without Beam state.
func (fr *driver) run(items []item) {
	queue := items
	fr.drive(nil, func(n int) ([]item, error) {
		got := queue[:min(n, len(queue))]
		queue = queue[len(got):]
		return got, nil
	})
	fr.rest = append(fr.rest, queue...)
}
