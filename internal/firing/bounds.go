package firing

import "time"

// due returns when element k runs out of waiting, and which bound says so:
// MaxWait after it joined its group's queue, or MaxStall after the later
// of that and the last progress, whichever comes first. Without either
// bound (or a join time) it returns the zero Time.
func (f *Firing) due(k int) (time.Time, Bound) {
	e := &f.elems[k]
	if e.Since.IsZero() {
		return time.Time{}, NoBound
	}
	var at time.Time
	bound := NoBound
	if f.cfg.MaxWait > 0 {
		at, bound = e.Since.Add(f.cfg.MaxWait), BoundWait
	}
	if f.cfg.MaxStall > 0 {
		from := e.Since
		if f.env.Progress != nil {
			from = laterOf(from, f.env.Progress.Last())
		}
		if s := from.Add(f.cfg.MaxStall); at.IsZero() || s.Before(at) {
			at, bound = s, BoundStall
		}
	}
	return at, bound
}

// Expired reports whether element i ran out of waiting by now.
func (f *Firing) Expired(now time.Time, i int) bool {
	at, _ := f.due(i)
	return !at.IsZero() && now.After(at)
}

// expire routes element k, which ran out of waiting, or, if next is not
// zero, which cannot be sent before next, after it runs out: as its last
// attempt failed if it was throttled by the server or failed, else as
// client-throttled.
func (f *Firing) expire(k int, next time.Time) {
	kind := f.elems[k].Last
	if kind != ServerThrottled && kind != Error {
		kind = ClientThrottled
	}
	_, bound := f.due(k)
	f.route(k, kind, Step{Why: Expired, Bound: bound, Until: next, Prob: 1})
}

// Timer returns, at now at the end of the firing, when the group's timer
// fires next if its queue is not empty: one batch interval after this
// firing's timer, or, if the policy postponed, startLead before the time
// it asked for (Tick from now at the soonest), but no later than the first
// element left queued runs out of waiting; if it ended waiting for a slot of
// CallsInFlight (Detach), when its oldest call is expected to be answered
// (Tick from now at the soonest, a tenth of a batch interval at the
// latest); always after the firing's timer.
func (f *Firing) Timer(now time.Time) time.Time {
	next := f.fire.Add(f.cfg.BatchInterval)
	if f.stopped && !f.retryAt.IsZero() {
		// Runners keep timer times in milliseconds: round up, so that a
		// firing without a lead (startLead) does not come before the time
		// it waits for; one with a lead waits for it inside itself.
		next = laterOf(f.retryAt.Add(-f.startLead()), f.postponedAt.Add(f.cfg.Tick)).Add(time.Millisecond - 1).Truncate(time.Millisecond)
		// A long postponement (a quota spent for the day) does not hold
		// back the elements MaxWait would route.
		if due := f.expiryDue(now); !due.IsZero() && due.Before(next) {
			next = due
		}
	}
	if f.full {
		// Every slot of CallsInFlight was taken: the next firing comes
		// when the oldest call under way is expected to be answered (at
		// the mean latency of the firing's answers), Tick from now at the
		// soonest and a tenth of a batch interval at the latest.
		at := now.Add(f.cfg.BatchInterval / 10)
		if f.answered > 0 {
			if exp := f.oldestSent().Add(f.latency / time.Duration(f.answered)); exp.Before(at) {
				at = exp
			}
		}
		next = laterOf(at, now.Add(f.cfg.Tick)).Add(time.Millisecond - 1).Truncate(time.Millisecond)
	}
	if !next.After(f.fire) {
		next = f.fire.Add(time.Millisecond)
	}
	return next
}

// startLead is how long before the time a firing stopped at (a slot of
// the policy) the next firing starts: a tenth of Wait, at most
// maxStartLead; none without a Wait (a firing that ends at its first
// postponement, having nothing to wait for the slot inside). The
// next firing waits inside itself for the slot, so its start-up (the
// runner's timer, the state it reads) comes before the slot, not after it:
// a pacer spaces the next slot from a late send, so a late first send at
// every firing would cost its lateness once a firing.
func (f *Firing) startLead() time.Duration {
	return min(f.cfg.Wait/10, maxStartLead)
}

// maxStartLead bounds startLead.
const maxStartLead = 100 * time.Millisecond

// expiryDue returns when the first element the firing leaves queued runs
// out of waiting (just after, in whole milliseconds), or the zero Time
// without MaxWait or MaxStall. Elements behind those in the queue are
// newer; if the firing leaves none, it is one bound from now.
func (f *Firing) expiryDue(now time.Time) time.Time {
	if f.cfg.MaxWait <= 0 && f.cfg.MaxStall <= 0 {
		return time.Time{}
	}
	var due time.Time
	for _, list := range [][]int{f.rest, f.requeue} {
		for _, k := range list {
			if at, _ := f.due(k); !at.IsZero() && (due.IsZero() || at.Before(due)) {
				due = at
			}
		}
	}
	if due.IsZero() {
		bound := f.cfg.MaxWait
		if bound <= 0 || f.cfg.MaxStall > 0 && f.cfg.MaxStall < bound {
			bound = f.cfg.MaxStall
		}
		return now.Add(bound)
	}
	return due.Add(time.Millisecond).Truncate(time.Millisecond).Add(time.Millisecond)
}
