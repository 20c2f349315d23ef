package adaptive

import (
	"cmp"
	"time"
)

// How a limit advertised as refilling shows it is a fixed window (see
// [AdvertisedRate]): over answers sent at least windowedGap apart, its
// Reset stays within quotaSlack, where a bucket's moves later by at
// least the gap. A window's Reset sent in whole seconds and corrected
// with a Date in whole seconds is off by less than a second, the same
// Reset each time, as the Date's fraction varies; a move between the two
// verdicts' bounds tells nothing, and the test starts again.
const (
	windowedGap   = int64(3 * time.Second)
	windowedRound = 2.0 // requests: how far what a bucket misses is from its time to full
)

// inPlace reports whether a limit advertised as refilling is a fixed
// window: the answer seen at n to the request sent at s with rem left
// until reset, and limit (negative: unknown), against the first answer of
// the test. Once tested, the verdict holds.
func (q *AdvertisedRate) inPlace(n, s int64, rem float64, reset, limit int64) bool {
	if limit < 0 && q.limitKnown {
		limit = int64(q.limit)
	}
	switch {
	case q.tested:
		return q.windowed
	case rem < 0 || reset == 0 || limit >= 0 && rem >= float64(limit):
		return false // a full bucket's Reset is its answer's time: it tells nothing
	case reset <= n:
		return false // 0 left, counted from the answer: it has passed, no more
	case q.anchorAt == 0 || rem > q.anchorRem:
		q.anchorAt, q.anchorRem, q.anchorReset = s, rem, reset // refilled, or a new window: start again
		return false
	case s-q.anchorAt < windowedGap:
		return false
	}
	moved := reset - q.anchorReset
	switch {
	case max(moved, -moved) <= quotaSlack:
		q.tested, q.windowed = true, true
	case moved >= s-q.anchorAt-quotaSlack && q.proportional(s, rem, reset, limit):
		q.tested = true
	default: // neither: start again from here
		q.anchorAt, q.anchorRem, q.anchorReset = s, rem, reset
	}
	return q.windowed
}

// proportional reports whether the answer sent at s, rem left until
// reset, and the first answer of the test miss what their times to full
// say a bucket of one refill rate misses, within windowedRound requests
// each (Remaining is whole, a refill may come in steps). With Limit
// unknown nothing is missed that can be told: true.
func (q *AdvertisedRate) proportional(s int64, rem float64, reset, limit int64) bool {
	if limit < 0 {
		return true
	}
	u := windowedRound * cmp.Or(q.unit, 1)
	m1, t1 := float64(limit)-q.anchorRem, float64(q.anchorReset-q.anchorAt)
	m2, t2 := float64(limit)-rem, float64(reset-s)
	return (m1-u)*t2 <= (m2+u)*t1 && (m2-u)*t1 <= (m1+u)*t2
}
