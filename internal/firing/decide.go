package firing

import (
	"time"

	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// Quota is a shared quota's permits, as a worker holds them: a count of
// permits, or time slots. Its methods may do I/O (a round trip to the
// quota's service); the driver that implements it owns that.
type Quota interface {
	// Permit asks for cost permits at now for a call of priority tier
	// tier, asking the service for want (at least cost) when the worker
	// holds fewer. It answers OK (Paid:
	// the permits are reserved until Settle; with slots, At is the call's
	// slot) or, when not OK, when to ask again. While the service is down
	// it fails open (OK, not Paid) or closed.
	Permit(now time.Time, tier, cost, want int) Permit
	// Settle ends an OK permit once the call is decided: permits of a call
	// not sent go back to the worker.
	Settle(p Permit, sent bool)
	// Missed drops a slot the firing got to too late.
	Missed(p Permit)
	// Slots returns, for a quota of time slots, how many slots fall in d,
	// and how late a call may be on its slot; ok is false for a count of
	// permits.
	Slots(d time.Duration) (n int, tolerance time.Duration, ok bool)
	// WindowEnd returns when permits granted at now lapse, or the zero
	// Time if they do not or it is not known.
	WindowEnd(now time.Time) time.Time
}

// Permit is a quota's answer to a call asking for permits.
type Permit struct {
	OK      bool      // the call may be sent
	Paid    bool      // with permits reserved until Settle
	At      time.Time // with slots and Paid: the call's slot
	RetryAt time.Time // not OK: when to ask again
	Token   any       // the quota's own record of the permit
}

// Slot timing with a quota of time slots.
const (
	// slotAhead is how far ahead a firing reserves at once: the slots its
	// policy would use in that time, at least one call's. Short, so that
	// the workers sharing a quota take turns in small steps and a worker
	// whose firing ends (runners fire timers late, often one key at a
	// time) holds few slots it cannot use, which lapse unless nobody
	// reserved after them; long enough that one round trip to the quota's
	// service carries several slots at high rates. At 10 a second, it is
	// one call's slot per round trip.
	slotAhead = 50 * time.Millisecond
	// slotEarly is how early a call may go on its slot: a timer that
	// wakes a hair early sends rather than waiting again.
	slotEarly = 500 * time.Microsecond
)

// decide asks the policy about the next call, of the given cost, after the
// quota's permits for it if there is a quota: without them the call is
// postponed until the quota has more. The permits asked for at once are
// what the policy would send until the end of the firing's wait, or of the
// quota's window if it ends sooner, at most left, the cost of the calls
// remaining.
func (f *Firing) decide(now time.Time, tier, cost int) adaptive.Decision {
	q, pol := f.env.Quota, f.env.Policy
	if q == nil {
		return pol.Decide(now, f.inFlight, cost)
	}
	if _, _, slotted := q.Slots(0); slotted {
		return f.decideOnSlot(now, tier, cost)
	}
	want := f.remaining()
	until := laterOf(f.deadline, now.Add(f.cfg.Wait))
	if end := q.WindowEnd(now); !end.IsZero() && end.Before(until) {
		until = end // the permits lapse then
	}
	if n := pol.Budget(now, until); n >= 0 {
		want = min(want, max(n, cost))
	}
	perm := q.Permit(now, tier, cost, want)
	if !perm.OK {
		return adaptive.Decision{Verdict: adaptive.Postpone, RetryAt: perm.RetryAt}
	}
	d := pol.Decide(now, f.inFlight, cost)
	q.Settle(perm, d.Verdict == adaptive.Send)
	return d
}

// decideOnSlot is decide with a quota of time slots: the call claims its
// slot first, and the firing waits for it (Postpone until the slot, the
// claim kept meanwhile). At the slot the policy decides; a slot the policy
// does not use goes back to the quota. A slot the firing gets to later
// than the tolerance is dropped, and the call claims the next. The slots
// asked for at once are those of the next slotAhead (one call's when the
// firing ends sooner), no more than the policy would send then, at most
// left and at least the call's cost. Past the firing's deadline no slot is
// claimed (the firing would not wait for it): the firing ends, and its
// timer is set for now.
func (f *Firing) decideOnSlot(now time.Time, tier, cost int) adaptive.Decision {
	q, pol := f.env.Quota, f.env.Policy
	for range 2 { // a second time after a missed slot
		if !f.slot.OK {
			if !now.Before(f.deadline) {
				return adaptive.Decision{Verdict: adaptive.Postpone, RetryAt: now}
			}
			n, _, _ := q.Slots(slotAhead)
			want := min(f.remaining(), n)
			if !now.Add(slotAhead).Before(f.deadline) {
				want = cost // slots beyond the firing would lapse
			}
			if b := pol.Budget(now, now.Add(slotAhead)); b >= 0 {
				want = min(want, b)
			}
			perm := q.Permit(now, tier, cost, max(want, cost))
			if !perm.OK {
				return adaptive.Decision{Verdict: adaptive.Postpone, RetryAt: perm.RetryAt}
			}
			if !perm.Paid { // the service is down: failing open
				d := pol.Decide(now, f.inFlight, cost)
				q.Settle(perm, d.Verdict == adaptive.Send)
				return d
			}
			f.slot = perm
		}
		at := f.slot.At
		_, tolerance, _ := q.Slots(0)
		switch {
		case now.Before(at.Add(-slotEarly)):
			return adaptive.Decision{Verdict: adaptive.Postpone, RetryAt: at}
		case now.After(at.Add(tolerance)):
			q.Missed(f.slot)
			f.slot = Permit{}
			continue
		}
		// The policy is asked at the slot's time, within the tolerance of
		// now: a pacer at the quota's rate then spaces its sends as the
		// slots are spaced, instead of carrying each wake-up's lateness
		// into the next call and postponing it past its slot.
		d := pol.Decide(at, f.inFlight, cost)
		if d.Verdict == adaptive.Postpone && !d.RetryAt.After(now) && now.After(at) {
			d = pol.Decide(now, f.inFlight, cost) // it would send now
		}
		q.Settle(f.slot, d.Verdict == adaptive.Send)
		f.slot = Permit{}
		return d
	}
	return adaptive.Decision{Verdict: adaptive.Postpone, RetryAt: now.Add(time.Millisecond)}
}
