package firing

import (
	"time"

	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// Quota is a shared quota's permits, as a worker holds them: a count of
// permits, or time slots. Its methods do no I/O: a round trip to the
// quota's service is a step of the firing (AskQuota), which the driver
// carries out and reports with QuotaAnswered.
type Quota interface {
	// Permit asks for cost permits at now for a call of priority tier
	// tier, asking the service for want (at least cost) when the worker
	// holds fewer. It answers OK (Paid: the permits are reserved until
	// Settle; with slots, At is the call's slot), or, when not OK, when to
	// ask again, or Ask: a round trip first. While the service is down it
	// fails open (OK, not Paid) or closed.
	Permit(now time.Time, tier, cost, want int) Permit
	// Record records at now the answer to the round trip p asked for.
	Record(now time.Time, p Permit, a QuotaAnswer)
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
	// Ask: a round trip to the quota's service is needed, which the
	// driver makes (Step AskQuota) and reports (QuotaAnswered). Not OK,
	// the firing then asks again; OK (slots reserved ahead of need), it
	// goes on once it is answered.
	Ask bool
}

// QuotaAnswer is the answer to a round trip to the quota's service, as
// the driver reports it (QuotaAnswered).
type QuotaAnswer struct {
	Answer any   // what the service answered, for Quota.Record; nil if it did not
	Err    error // the round trip failed (an error, or no answer in time)
	// RetryAt, if set: the driver gave up on the round trip (its context
	// ended), and the call waits until then.
	RetryAt time.Time
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
//
// It reports ask when the quota needs a round trip first (see askQuota).
func (f *Firing) decide(now time.Time, tier, cost int) (d adaptive.Decision, ask bool) {
	q, pol := f.env.Quota, f.env.Policy
	if q == nil {
		return pol.Decide(now, f.inFlight, cost), false
	}
	if _, _, slotted := q.Slots(0); slotted {
		return f.decideOnSlot(now, tier, cost)
	}
	if at := f.quotaRetry; !at.IsZero() { // the driver gave up on the round trip
		f.quotaRetry = time.Time{}
		return adaptive.Decision{Verdict: adaptive.Postpone, RetryAt: at}, false
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
	switch {
	case perm.Ask:
		f.askQuota(perm)
		return adaptive.Decision{}, true
	case !perm.OK:
		return adaptive.Decision{Verdict: adaptive.Postpone, RetryAt: perm.RetryAt}, false
	}
	d = pol.Decide(now, f.inFlight, cost)
	q.Settle(perm, d.Verdict == adaptive.Send)
	return d, false
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
func (f *Firing) decideOnSlot(now time.Time, tier, cost int) (adaptive.Decision, bool) {
	q, pol := f.env.Quota, f.env.Policy
	for range 2 { // a second time after a missed slot
		if !f.slot.OK {
			if !now.Before(f.deadline) && !f.quotaDone { // after a round trip that began in time, the slot is claimed
				return adaptive.Decision{Verdict: adaptive.Postpone, RetryAt: now}, false
			}
			if at := f.quotaRetry; !at.IsZero() { // the driver gave up on the round trip
				f.quotaRetry, f.quotaDone = time.Time{}, false
				return adaptive.Decision{Verdict: adaptive.Postpone, RetryAt: at}, false
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
			f.quotaDone = false
			switch {
			case perm.Ask && !perm.OK:
				f.askQuota(perm)
				return adaptive.Decision{}, true
			case !perm.OK:
				return adaptive.Decision{Verdict: adaptive.Postpone, RetryAt: perm.RetryAt}, false
			case !perm.Paid: // the service is down: failing open
				d := pol.Decide(now, f.inFlight, cost)
				q.Settle(perm, d.Verdict == adaptive.Send)
				return d, false
			}
			f.slot = perm
			if perm.Ask { // slots reserved ahead: the call goes on after
				f.askQuota(perm)
				return adaptive.Decision{}, true
			}
		}
		at := f.slot.At
		_, tolerance, _ := q.Slots(0)
		switch {
		case now.Before(at.Add(-slotEarly)):
			return adaptive.Decision{Verdict: adaptive.Postpone, RetryAt: at}, false
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
		return d, false
	}
	return adaptive.Decision{Verdict: adaptive.Postpone, RetryAt: now.Add(time.Millisecond)}, false
}

// askQuota makes the firing wait for the round trip p asks for: Next
// returns it (AskQuota), then waits until the driver reports its answer.
func (f *Firing) askQuota(p Permit) {
	f.asking, f.ask = true, p
	f.routes = append(f.routes, Step{Action: AskQuota, Permit: p})
}

// QuotaAnswered reports at now the answer to the round trip the firing
// asked for (AskQuota): the quota records it, and the firing decides
// again.
func (f *Firing) QuotaAnswered(now time.Time, a QuotaAnswer) {
	if !f.asking {
		return
	}
	p := f.ask
	f.asking, f.ask, f.quotaDone = false, Permit{}, !p.OK
	f.env.Quota.Record(now, p, a)
	if !a.RetryAt.IsZero() && !p.OK {
		f.quotaRetry = a.RetryAt
	}
}
