package testserver

import (
	"math"
	"math/rand/v2"
	"time"
)

// windowStream is the PCG stream, beside Config.Seed, of the drifting
// windows' draws; the handler's other sources use streams 1 to 3.
const windowStream = 4

// limiter enforces the quota. It is not safe for concurrent use; Handler
// guards it with its mutex. All times come from the caller, so tests can
// drive it with a fake clock.
type limiter struct {
	mode   Mode
	quota  int           // 0 = unlimited
	period time.Duration // > 0
	refill time.Duration // configured step, 0 = default

	// Token bucket, in integer credit units so that refills are exact:
	// one token is unit credits and each refill step adds perStep credits.
	step     time.Duration // effective refill step
	unit     int64
	perStep  int64
	capacity int64
	credit   int64
	last     time.Time // start of the current refill step

	// Fixed window: the window began at windowStart and lasts windowLen,
	// period unless windowJitter > 0, when each window's length is period
	// plus a draw in [0, windowJitter) from windowSrc (nil without
	// jitter). used counts the cost units taken in the window.
	windowStart  time.Time
	windowLen    time.Duration
	windowJitter time.Duration
	windowSrc    *rand.PCG
	used         int64

	// GCRA: burst as configured (0 or 1 = none); rule is nil while the
	// quota is unlimited.
	burst int
	rule  *gcra
}

// newLimiter returns a full limiter for cfg's Mode, Quota, Period, Refill,
// Burst, WindowJitter and Seed, which must have passed withDefaults. With a
// window jitter, the first window began a draw in [0, Period) before now.
func newLimiter(now time.Time, cfg Config) *limiter {
	l := &limiter{mode: cfg.Mode, refill: cfg.Refill, burst: cfg.Burst, last: now, windowStart: now, windowJitter: cfg.WindowJitter}
	l.setShape(cfg.Quota, cfg.Period)
	l.credit = l.capacity
	if l.windowJitter > 0 {
		l.windowSrc = rand.NewPCG(cfg.Seed, windowStream)
		l.windowStart = now.Add(-time.Duration(rand.New(l.windowSrc).Int64N(int64(cfg.Period))))
	}
	l.windowLen = l.nextWindowLen()
	if cfg.Mode == GCRA && cfg.Quota > 0 {
		l.rule = newGCRA(now, cfg.Quota, cfg.Period, cfg.Burst)
	}
	return l
}

// setShape sets quota and period and derives the token bucket units,
// leaving credit and the window counter alone.
func (l *limiter) setShape(quota int, period time.Duration) {
	l.quota, l.period = quota, period
	l.step = effectiveRefill(l.refill, period)
	g := gcd(int64(period), int64(l.step))
	l.unit = int64(period) / g
	l.perStep = int64(quota) * (int64(l.step) / g)
	l.capacity = int64(quota) * l.unit
}

// nextWindowLen is the length of a fixed window starting now: period,
// plus a draw in [0, windowJitter) if that is > 0 (at most the longest
// time.Duration).
func (l *limiter) nextWindowLen() time.Duration {
	if l.windowJitter <= 0 {
		return l.period
	}
	extra := time.Duration(rand.New(l.windowSrc).Int64N(int64(l.windowJitter)))
	if l.period > math.MaxInt64-extra {
		return math.MaxInt64
	}
	return l.period + extra
}

// advance refills the bucket or moves the window up to now. A clock that
// goes backwards refills nothing. GCRA needs no advancing. Drifting
// windows are moved one by one, each with its own draw, so that the
// windows are the same whenever requests come.
func (l *limiter) advance(now time.Time) {
	switch l.mode {
	case GCRA:
	case FixedWindow:
		if l.windowJitter > 0 {
			for !now.Before(l.windowStart.Add(l.windowLen)) {
				l.windowStart = l.windowStart.Add(l.windowLen)
				l.windowLen = l.nextWindowLen()
				l.used = 0
			}
			return
		}
		if d := now.Sub(l.windowStart); d >= l.period {
			l.windowStart = l.windowStart.Add(d / l.period * l.period)
			l.used = 0
		}
	default:
		d := now.Sub(l.last)
		if d < l.step {
			return
		}
		steps := int64(d / l.step)
		l.last = l.last.Add(time.Duration(steps) * l.step)
		if l.perStep == 0 {
			return
		}
		if missing := l.capacity - l.credit; steps >= (missing+l.perStep-1)/l.perStep {
			l.credit = l.capacity
		} else {
			l.credit += steps * l.perStep
		}
	}
}

// maxCost is the largest cost a request can have and still be accepted
// one day: Quota for the token bucket (its capacity) and the fixed window,
// the burst for GCRA (see gcra.maxCost), and math.MaxInt64 while the quota
// is unlimited.
func (l *limiter) maxCost() int64 {
	switch {
	case l.quota == 0:
		return math.MaxInt64
	case l.mode == GCRA:
		return l.rule.maxCost
	}
	return int64(l.quota)
}

// take uses up cost units of quota at now, all or nothing: if they do not
// all fit, it takes none and returns false and how long until a request of
// that cost would fit. Cost 0 always fits and takes nothing. cost must be
// in [0, maxCost()].
//
// The token bucket needs cost tokens; the fixed window needs room for
// cost more in the window's counter, so the wait is until the current
// window's end (drifting or not); GCRA is as gcra.take says.
func (l *limiter) take(now time.Time, cost int64) (ok bool, wait time.Duration) {
	if l.quota == 0 || cost == 0 {
		return true, 0
	}
	l.advance(now)
	switch l.mode {
	case GCRA:
		return l.rule.take(now, cost)
	case FixedWindow:
		if l.used+cost <= int64(l.quota) {
			l.used += cost
			return true, 0
		}
		return false, l.windowStart.Add(l.windowLen).Sub(now)
	default:
		need := cost * l.unit // ≤ capacity, as cost ≤ quota
		if l.credit >= need {
			l.credit -= need
			return true, 0
		}
		k := (need - l.credit + l.perStep - 1) / l.perStep
		return false, l.last.Add(time.Duration(k) * l.step).Sub(now)
	}
}

// set changes quota and period at now. Requests already accepted keep
// counting against the new quota: a bucket that had used u tokens has
// quota-u left (at least 0), a window keeps its counter, and GCRA keeps
// the u emission intervals its theoretical arrival time is ahead of now,
// at the new rate (see gcra.set). A new period starts a new window at now,
// with the counter carried over (a drifting one lasts the new period plus
// a new draw). Coming from unlimited, the bucket is full and GCRA idle.
func (l *limiter) set(now time.Time, quota int, period time.Duration) {
	l.advance(now)
	oldQuota, oldPeriod, oldUnit, oldCap, oldCredit := l.quota, l.period, l.unit, l.capacity, l.credit
	l.setShape(quota, period)
	switch l.mode {
	case GCRA:
		switch {
		case quota == 0:
			l.rule = nil
		case l.rule == nil:
			l.rule = newGCRA(now, quota, period, l.burst)
		default:
			l.rule.set(now, quota, period)
		}
	case FixedWindow:
		if oldQuota == 0 {
			l.used = 0
		}
		if period != oldPeriod {
			l.windowStart, l.windowLen = now, l.nextWindowLen()
		}
	default:
		if oldQuota == 0 {
			l.credit = l.capacity
			l.last = now
			return
		}
		used := oldCap - oldCredit
		if l.unit != oldUnit {
			used = int64(math.Round(float64(used) / float64(oldUnit) * float64(l.unit)))
		}
		l.credit = min(max(l.capacity-used, 0), l.capacity)
	}
}

// retryAfterSeconds rounds a wait up to whole seconds, at least 1, for a
// Retry-After header.
func retryAfterSeconds(wait time.Duration) int64 {
	s := int64((wait + time.Second - 1) / time.Second)
	return max(s, 1)
}
