package adaptive

import (
	"math"
	"time"
)

// Tuning of ModePaced that is not configurable (variables while tuning).
var (
	// gain is the integral gain: each interval the log of the rate moves by
	// gain·(target − w), where w is the share the backend rejected. With
	// gain 1 and one group, one step lands on the rate that wastes exactly
	// the target share, since w ≈ ln(rate/capacity) for small overshoots.
	gain     = 1.0
	gainDown = 1.0
	// A run of clean intervals (no rejection) accelerates the upward probe
	// once it is longer, by accelMargin, than any this group has seen
	// recently (the longest run fades by longestFade per interval). Groups
	// that share a backend are not alike: one whose batches come when the
	// backend has just refilled rarely sees a rejection, even when the
	// others see many; only groups that normally see rejections soon can
	// take a long clean run as news. The probe is then accelBase and
	// doubles with every further clean interval, up to maxProbe (logs of
	// growth factors).
	accelMargin int64 = 2
	longestFade       = 0.98
	accelBase         = 0.05
	maxProbe          = 0.26236426446749106 // ln(1.3)
	// After darkIntervals intervals in a row in which the backend accepted
	// nothing (an outage), the rate climbs back to the pace the backend
	// coped with before, recoveryFactor times higher per interval.
	darkIntervals  int64 = 3
	recoveryFactor       = 4.0
	// goodDecay is how much the remembered accepted rate fades per interval
	// under overload, so that it follows a lowered quota.
	goodDecay = 0.9
)

// maxRate bounds the paced rate (requests per second) and MinRate.
const maxRate = 1e12

// pacer is the ModePaced state of a Throttler. Its fields mirror those of
// State with the same names; times are Unix nanoseconds, rates requests per
// second.
type pacer struct {
	limited bool    // false until the backend first rejects more than the target
	rate    float64 // paced rate while limited
	tokens  float64 // token bucket level
	last    int64   // time of the last refill
	good    float64 // highest pace the backend coped with recently, for the recovery
	streak  int64   // limited intervals in a row without a rejection
	longest float64 // longest recent streak that ended in a rejection, fading
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
// Apart from the first limit, it uses only the share w of answers that the
// backend rejected, never rates measured over the interval: in a batch loop
// an interval may hold one batch and a half, or half of one.
func (t *Throttler) adjust(dt float64) {
	pc := &t.pc
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
			pc.streak, pc.longest = 0, 0
			pc.tokens = t.bucketDepth() // the next batch may go out at once
		}
	case overloaded:
		// Integral step down, at most halving.
		pc.rate = t.clampRate(max(pc.rate*math.Exp(gainDown*(target-w)), pc.rate/2))
		pc.climb = false
		if pc.accepted > 0 {
			pc.good *= goodDecay
			pc.dark = 0
		} else {
			pc.dark = min(pc.dark+1, maxStreak)
		}
		t.noteInterval(true)
	case pc.rejected > 0:
		// The pace limited and the backend coped.
		t.noteInterval(pc.throttled > 0)
		if w == 0 && (pc.climb || pc.dark >= darkIntervals) && pc.rate < pc.good {
			// Climb back fast to the pace the backend coped with before
			// it went dark.
			pc.rate = t.clampRate(min(recoveryFactor*pc.rate, pc.good))
			pc.climb, pc.dark = true, 0
			break
		}
		pc.good = max(pc.good, pc.rate)
		pc.dark = 0
		pc.climb = false
		step := gain * (target - w)
		if ok, over := t.accelerating(); ok {
			step = max(step, min(maxProbe, accelBase*float64(uint64(1)<<min(over, 32))))
		}
		pc.rate = t.clampRate(pc.rate * math.Exp(step))
	default:
		pc.streak, pc.climb = 0, false
	}
	pc.tokens = min(pc.tokens, t.bucketDepth())
}

// noteInterval counts a limited interval, with or without a rejection.
func (t *Throttler) noteInterval(hit bool) {
	pc := &t.pc
	pc.longest *= longestFade
	if hit {
		pc.longest = max(pc.longest, float64(pc.streak))
		pc.streak = 0
	} else {
		pc.streak = min(pc.streak+1, maxStreak)
	}
}

// accelerating reports whether the current clean run is long enough, for
// this group, to accelerate the probe, and by how many intervals.
func (t *Throttler) accelerating() (bool, int64) {
	pc := &t.pc
	over := pc.streak - int64(math.Ceil(pc.longest)) - accelMargin
	return over >= 0, over
}

// maxStreak bounds pacer.streak.
const maxStreak = 64

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
