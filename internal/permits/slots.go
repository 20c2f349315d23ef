package permits

import (
	"time"

	"github.com/beamthrottle/beamthrottle/transforms/throttle/quota"
)

// Sending on the shared quota's time slots (a quota that is a
// quota.Reserver: Redis without a burst, or the local known rate). How far
// ahead a firing reserves, and how early it may send, are the firing
// core's (internal/firing).
const (
	// minTolerance and maxTolerance bound how late a call may still be
	// sent on its slot (see tolerance).
	minTolerance = 5 * time.Millisecond
	maxTolerance = 20 * time.Millisecond
)

// tolerance returns how late a call may still be sent on a slot of the
// given spacing: a twelfth of the spacing, within [minTolerance,
// maxTolerance]. A later call leaves less than the spacing before the next
// slot, perhaps another worker's, which a strict limiter (a GCRA with no
// burst) refuses once it is less than the API's own spacing; with the
// quota at 90 % of the API's rate (the advice in docs/operations.md) the
// slots are a ninth wider than the API needs, so a twelfth of the spacing
// late still leaves the next call clear. A slot missed by more is not used
// late but dropped (ratelimit-slots-missed), and the call takes the next
// one. Go's timers wake within a millisecond on an idle machine but
// several milliseconds late on a busy one (three pipeline processes on two
// cores), so the tolerance is never under minTolerance: above about 20
// calls a second, a strict limiter then needs a quota further below its
// rate than 90 %.
func tolerance(spacing time.Duration) time.Duration {
	return min(max(spacing/12, minTolerance), maxTolerance)
}

// Claim is one call's slot: units slots of the quota from at on,
// reserved for tier.
type Claim struct {
	at    time.Time
	units int
	tier  int
}

// slotRun is the unclaimed part of a reservation for tier: left units
// whose slots start at next, spacing apart.
type slotRun struct {
	res  quota.Reservation // as granted, or as extended by the contiguous reservations after it
	next time.Time
	left int
	tier int
}

// slotLedger holds the slots a worker reserved and has not handed to a
// call yet, for all the groups of a transform on the worker (a permit
// pool's, under its lock). Slots are handed out in time order; a slot that
// passed more than the tolerance ago without a call lapses. The zero value
// is empty, with the least tolerance.
type slotLedger struct {
	runs     []slotRun     // by time
	back     []Claim       // claims given back unused, by time
	capacity int           // the most units one reservation can grant; 0 means no bound
	late     time.Duration // the tolerance (see tolerance); 0 means minTolerance
}

// add records the slots of a reservation for tier. A reservation for the
// same tier that starts where the last one ended on the quota's clock
// (nobody reserved in between) extends it, so that a call may take slots
// from both.
func (l *slotLedger) add(res quota.Reservation, tier int) {
	if res.Granted <= 0 {
		return
	}
	if n := len(l.runs); n > 0 {
		last := &l.runs[n-1]
		if last.res.Stamp == res.Stamp-int64(res.Granted)*int64(res.Spacing) && last.res.Spacing == res.Spacing && last.tier == tier {
			last.res.Granted += res.Granted
			last.res.Stamp = res.Stamp
			last.left += res.Granted
			return
		}
	}
	l.runs = append(l.runs, slotRun{res: res, next: res.First, left: res.Granted, tier: tier})
}

// tolerance is how late a slot may still be used.
func (l *slotLedger) tolerance() time.Duration { return max(l.late, minTolerance) }

// expire drops the slots that started more than the tolerance before now,
// and returns how many units lapsed.
func (l *slotLedger) expire(now time.Time) (lapsed int) {
	cut := now.Add(-l.tolerance())
	keep := l.back[:0]
	for _, c := range l.back {
		if c.at.Before(cut) {
			lapsed += c.units
			continue
		}
		keep = append(keep, c)
	}
	l.back = keep
	runs := l.runs[:0]
	for _, r := range l.runs {
		if r.next.Before(cut) && r.left > 0 {
			k := min(int((cut.Sub(r.next)+r.res.Spacing-1)/r.res.Spacing), r.left)
			r.next = r.next.Add(time.Duration(k) * r.res.Spacing)
			r.left -= k
			lapsed += k
		}
		if r.left > 0 {
			runs = append(runs, r)
		}
	}
	l.runs = runs
	return lapsed
}

// claim hands out the earliest slots for a call of the given cost and
// tier, among those reserved for its tier or a lower one (a lower tier's
// reservation was held to the limits of the tiers above it, so any call
// may use it; a higher tier's was not): a claim given back that is large
// enough, or the next cost units of a run. A call costing more than one
// reservation can ever grant takes that many. It reports false if the
// ledger has no such slots: reserve more.
func (l *slotLedger) claim(cost, tier int) (Claim, bool) {
	units := max(cost, 1)
	if l.capacity > 0 {
		units = min(units, l.capacity)
	}
	bi := -1
	for i, c := range l.back {
		if c.units >= units && c.tier <= tier {
			bi = i
			break
		}
	}
	for i := range l.runs {
		r := &l.runs[i]
		if r.left < units || r.tier > tier {
			continue
		}
		if bi >= 0 && !l.back[bi].at.After(r.next) {
			break
		}
		c := Claim{at: r.next, units: units, tier: r.tier}
		r.next = r.next.Add(time.Duration(units) * r.res.Spacing)
		r.left -= units
		if r.left == 0 {
			l.runs = append(l.runs[:i], l.runs[i+1:]...)
		}
		return c, true
	}
	if bi >= 0 {
		c := l.back[bi]
		l.back = append(l.back[:bi], l.back[bi+1:]...)
		return c, true
	}
	return Claim{}, false
}

// giveBack returns a claim a call did not use, for the next call.
func (l *slotLedger) giveBack(c Claim) {
	i := len(l.back)
	for i > 0 && l.back[i-1].at.After(c.at) {
		i--
	}
	l.back = append(l.back, Claim{})
	copy(l.back[i+1:], l.back[i:])
	l.back[i] = c
}

// tail removes and returns the last run if its unclaimed slots are still
// ahead of now: the units that giving back to the quota can return (only a
// reservation's tail can be, and only while nobody reserved after it).
// Claims given back that end where the run's unclaimed slots begin join it
// first.
func (l *slotLedger) tail(now time.Time) (slotRun, bool) {
	n := len(l.runs)
	if n == 0 {
		return slotRun{}, false
	}
	r := l.runs[n-1]
	for k := len(l.back) - 1; k >= 0; k-- {
		c := l.back[k]
		if c.tier != r.tier || !c.at.Add(time.Duration(c.units)*r.res.Spacing).Equal(r.next) {
			break
		}
		r.next, r.left = c.at, r.left+c.units
		l.back = l.back[:k]
	}
	l.runs[n-1] = r
	if !r.next.After(now) {
		return slotRun{}, false
	}
	l.runs = l.runs[:n-1]
	return r, true
}

// empty reports whether the ledger holds no slot.
func (l *slotLedger) empty() bool { return len(l.runs) == 0 && len(l.back) == 0 }

// At returns when the slot begins.
func (c Claim) At() time.Time { return c.at }

// Units returns how many of the quota's slots the call takes.
func (c Claim) Units() int { return c.units }
