package adaptive

import (
	"math"
	"time"
)

// Tuning of ModePaced that is not configurable. It was chosen on the
// simulator in package sim (docs/sim/results.md), for one group and for
// eight groups sharing a backend.
const (
	// gain is the integral gain: at the end of every control interval in
	// which the pace limited or the backend rejected more than the target
	// share, the log of the rate moves by gain·(TargetWaste − w), where w is
	// the share of answers that the backend rejected. A clean interval thus
	// grows the rate by gain·TargetWaste (6.25 % by default), and the share
	// of rejected requests settles near the target, for one group or
	// several sharing a backend (each group's average share of rejected
	// answers per interval settles at the target).
	gain = 2.5
	// An interval may cut the rate to a quarter at most. With several
	// groups sharing a backend, a group whose batch comes when the backend
	// has run dry may see most of its calls rejected, and a bound of a half
	// left that signal partly unanswered: the share rejected settled above
	// the target (by 0.25 to 0.7 percentage points with eight groups on the
	// simulator). The price is that one group undershoots after capacity
	// halves at once (on the simulator it is back at 90 % of the new
	// capacity after 7 s rather than 1 s).
	maxCut = 0.25
	// A run of clean limited intervals is taken as a sign that capacity
	// grew once it would be unlikely under the old capacity: when
	// (1 − h)^streak ≤ accelSurprise, h being the group's share of recent
	// limited intervals with a rejection (averaged over about hitMemory
	// intervals, as it was when the run began) and streak the run's length,
	// at least accelAfter. The log of the rate then grows by accelBase at
	// the interval the run became unlikely, doubling every interval up to
	// maxProbe, but never by less than the integral step: by default by
	// 0.0625, 0.08, then 0.12 per interval. A group that usually sees a
	// rejection (one group alone: h ≈ 0.9) accelerates after accelAfter
	// clean intervals; a small group among several, whose rejections are
	// sparse (h ≈ 0.1 to 0.4), after 5 to 22. The probe is gentle because
	// with several groups a long clean run is often luck (the group's
	// batches come just after the backend refilled, while the others take
	// the rejections), and every false probe raises the share of calls the
	// backend rejects.
	hitMemory     float64 = 8
	accelAfter    int64   = 3
	accelSurprise         = 0.1
	accelBase             = 0.04
	maxProbe              = 0.12
	// After darkIntervals intervals in a row in which the backend accepted
	// nothing (an outage), the rate climbs back to the pace the backend
	// coped with before, recoveryFactor times higher per interval.
	darkIntervals  int64   = 3
	recoveryFactor float64 = 8
	// goodDecay is how much the remembered pace fades per interval in which
	// the backend rejected more than the target share but accepted some.
	goodDecay = 0.9
	// demandMemory is the number of intervals the demand average spans; a
	// demand below half of it, and lower by more than three Poisson
	// standard deviations, ends limiting.
	demandMemory = 8.0
	// maxStreak bounds the count of clean intervals in a row.
	maxStreak int64 = 1 << 20
	// maxRate bounds the paced rate (requests per second) and MinRate.
	maxRate = 1e12
)

// pacer is the ModePaced state of a Throttler. Its fields mirror those of
// State; times are Unix nanoseconds, rates requests per second.
type pacer struct {
	limited bool    // false until the backend first rejects more than the target
	rate    float64 // paced rate while limited
	tokens  float64 // token bucket level
	last    int64   // time of the last refill
	good    float64 // pace the backend coped with before it went dark
	streak  int64   // limited intervals in a row without a rejection
	hit     float64 // share of recent limited intervals with a rejection
	runHit  float64 // hit when the current clean run began
	demand  float64 // average decisions per second, recent
	climb   bool    // climbing back to good after the backend went dark
	dark    int64   // intervals in a row in which the backend accepted nothing
	blocked int64   // Retry-After: no request is sent before this time

	ivStart   int64 // start of the current control interval
	sent      int64 // in the current interval: requests allowed,
	rejected  int64 // requests rejected locally,
	accepted  int64 // answers counted as accepted,
	throttled int64 // answers counted as rejected by the backend.

	prevDecisions int64 // decisions of the previous interval, for p
	prevRejected  int64 // local rejections of the previous interval, for p
}

// pacedStart starts the pacer at the Throttler's first event.
func (t *Throttler) pacedStart(n int64) {
	t.pc = pacer{ivStart: n, last: n}
}

// pacedAdvance ends the current control interval if it has lasted long
// enough, adjusting the rate from what was observed in it.
func (t *Throttler) pacedAdvance(n int64) {
	pc := &t.pc
	if n < pc.ivStart {
		return
	}
	el := uint64(n) - uint64(pc.ivStart)
	if el < t.minInterval {
		return
	}
	dt := float64(el) / 1e9
	t.adjust(dt)
	if el < 2*t.paceInterval {
		pc.prevDecisions, pc.prevRejected = pc.sent+pc.rejected, pc.rejected
	} else {
		pc.prevDecisions, pc.prevRejected = 0, 0
	}
	pc.sent, pc.rejected, pc.accepted, pc.throttled = 0, 0, 0, 0
	pc.ivStart = n
}

// adjust updates the rate at the end of an interval of dt seconds.
//
// Apart from the first limit, it uses only the share of answers that the
// backend rejected, never rates measured over the interval: in a batch loop
// an interval may hold one batch and a half, or half of one.
func (t *Throttler) adjust(dt float64) {
	pc := &t.pc
	defer t.noteDemand(dt)
	answers := pc.accepted + pc.throttled
	if answers == 0 {
		return // nothing learnt
	}
	target := t.cfg.TargetWaste
	w := float64(pc.throttled) / float64(answers) // share rejected by the backend
	overloaded := w > target
	switch {
	case !pc.limited:
		if overloaded {
			// Start at the rate that would have wasted just the target share.
			pc.limited = true
			pc.rate = t.clampRate(float64(pc.accepted) / dt / (1 - target))
			pc.tokens = t.bucketDepth() // the next batch may go out at once
			pc.streak, pc.hit, pc.runHit, pc.climb, pc.dark = 0, 1, 1, false, 0
		}
	case overloaded:
		pc.rate = t.clampRate(max(pc.rate*math.Exp(gain*(target-w)), pc.rate*maxCut))
		pc.climb = false
		if pc.accepted > 0 {
			pc.good *= goodDecay
			pc.dark = 0
		} else {
			pc.dark = min(pc.dark+1, maxStreak)
		}
		t.noteInterval(true)
	case t.demandDropped(dt):
		// The load fell sharply: whatever limited it may be over. Stop
		// limiting; the next overloaded interval limits again, after at
		// most the new, lower demand was sent.
		pc.limited, pc.climb, pc.dark, pc.streak = false, false, 0, 0
	case pc.rejected > 0:
		// The pace limited and the backend coped.
		t.noteInterval(pc.throttled > 0)
		if w == 0 && (pc.climb || pc.dark >= darkIntervals) && pc.rate < pc.good {
			// Climb back to the pace the backend coped with before it
			// went dark.
			pc.rate = t.clampRate(min(recoveryFactor*pc.rate, pc.good))
			pc.climb, pc.dark = true, 0
			break
		}
		pc.good = max(pc.good, pc.rate)
		pc.climb, pc.dark = false, 0
		step := gain * (target - w)
		if first, ok := t.surprised(); w == 0 && ok {
			step = max(step, min(maxProbe, accelBase*math.Exp2(float64(min(pc.streak-first, 32)))))
		}
		pc.rate = t.clampRate(pc.rate * math.Exp(step))
	default:
		// Demand within the pace, and the backend coped: nothing learnt.
		pc.climb, pc.dark = false, 0
	}
	pc.tokens = min(pc.tokens, t.bucketDepth())
}

// noteInterval counts a limited interval, with or without a rejection.
func (t *Throttler) noteInterval(hit bool) {
	pc := &t.pc
	if !hit {
		pc.streak = min(pc.streak+1, maxStreak)
		pc.hit -= pc.hit / hitMemory
		return
	}
	pc.streak = 0
	pc.hit += (1 - pc.hit) / hitMemory
	pc.runHit = pc.hit
}

// surprised reports whether the current run of clean limited intervals is
// long enough to be unlikely under the capacity the group saw before it:
// whether (1 − runHit)^streak ≤ accelSurprise, with streak at least
// accelAfter. first is the shortest run for which that holds.
func (t *Throttler) surprised() (first int64, ok bool) {
	pc := &t.pc
	if pc.streak < accelAfter || !(pc.runHit > 0) {
		return 0, false
	}
	first = accelAfter
	if pc.runHit < 1 {
		// The smallest n with n·ln(1 − h) ≤ ln(accelSurprise); the slack
		// keeps a whole quotient from rounding up.
		n := math.Ceil(math.Log(accelSurprise)/math.Log1p(-pc.runHit) - 1e-9)
		if !(n <= float64(maxStreak)) {
			return 0, false
		}
		first = max(first, int64(n))
	}
	return first, pc.streak >= first
}

// demandDropped reports whether the demand (decisions) of the interval
// ending, dt seconds long, is less than half the recent average and lower by
// more than three standard deviations of a Poisson count.
func (t *Throttler) demandDropped(dt float64) bool {
	pc := &t.pc
	avg := pc.demand * dt // expected decisions in dt
	d := float64(pc.sent + pc.rejected)
	return d < avg/2 && avg-d > 3*math.Sqrt(avg)
}

// noteDemand folds the demand of the interval ending into the average.
func (t *Throttler) noteDemand(dt float64) {
	pc := &t.pc
	d := float64(pc.sent+pc.rejected) / dt
	pc.demand = min(maxRate, pc.demand+(d-pc.demand)/demandMemory)
}

// clampRate bounds a rate to [MinRate, maxRate].
func (t *Throttler) clampRate(r float64) float64 {
	if !(r >= t.cfg.MinRate) { // also NaN
		return t.cfg.MinRate
	}
	return min(r, maxRate)
}

// bucketDepth is the token bucket capacity at the current rate.
func (t *Throttler) bucketDepth() float64 {
	return max(1, t.pc.rate*t.burst)
}

// refill adds the tokens earned since the last refill.
func (t *Throttler) refill(n int64) {
	pc := &t.pc
	if n <= pc.last {
		return
	}
	pc.tokens = min(t.bucketDepth(), pc.tokens+pc.rate*float64(uint64(n)-uint64(pc.last))/1e9)
	pc.last = n
}

// decidePaced is Decide in ModePaced, at Unix nanoseconds n.
func (t *Throttler) decidePaced(n int64) (allow bool, p float64) {
	if !t.started {
		t.touch(n)
		t.pacedStart(n)
	} else {
		t.touch(n)
		t.pacedAdvance(n)
	}
	pc := &t.pc
	blocked := n < pc.blocked
	switch {
	case blocked:
	case !pc.limited:
		allow = true
	default:
		t.refill(n)
		if pc.tokens >= 1 {
			pc.tokens--
			allow = true
		}
	}
	if allow {
		pc.sent++
	} else {
		pc.rejected++
	}
	t.addRequest()
	if blocked {
		return false, 1
	}
	return allow, t.pacedP()
}

// pacedP is the share of the decisions of this and the previous interval
// that were rejected locally.
func (t *Throttler) pacedP() float64 {
	pc := &t.pc
	d := pc.prevDecisions + pc.sent + pc.rejected
	if d <= 0 {
		return 0
	}
	return min(1, float64(pc.prevRejected+pc.rejected)/float64(d))
}

// recordPaced is Record in ModePaced, at Unix nanoseconds n.
func (t *Throttler) recordPaced(n int64, o Outcome) {
	if !t.started {
		t.touch(n)
		t.pacedStart(n)
	} else {
		t.touch(n)
		t.pacedAdvance(n)
	}
	pc := &t.pc
	accept := o == Accepted || (o != Throttled && !t.cfg.CountFailuresAsRejects)
	if accept {
		pc.accepted++
		t.addAccept()
	} else {
		pc.throttled++
	}
}

// RecordRetryAfter tells the Throttler that the backend, answering at now
// a request this Throttler allowed, asked the client to wait d before
// trying again (an HTTP Retry-After or a gRPC RetryInfo). Call it after
// Record(now, Throttled).
//
// In ModePaced, Decide rejects every request until now + d − RetryAfterSlack
// (one second). The slack is there because HTTP's Retry-After is given in
// whole seconds, rounded up: "1" means "somewhere within the next second",
// and waiting a whole second after every 429 would idle a batch loop that
// runs once a second. A Retry-After of a second or less therefore blocks
// nothing; a long one, such as the end of a fixed quota window, saves the
// requests that would certainly be rejected. ModeSRE ignores Retry-After.
func (t *Throttler) RecordRetryAfter(now time.Time, d time.Duration) {
	if t.cfg.Mode != ModePaced {
		return
	}
	n := unixNanos(now)
	if !t.started {
		t.touch(n)
		t.pacedStart(n)
	} else {
		t.touch(n)
		t.pacedAdvance(n)
	}
	if d <= RetryAfterSlack {
		return
	}
	t.pc.blocked = max(t.pc.blocked, satAdd(n, int64(d-RetryAfterSlack)))
}
