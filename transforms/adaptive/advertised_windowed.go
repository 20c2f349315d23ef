package adaptive

import "time"

// How a limit advertised as refilling shows it is a fixed window (see
// [AdvertisedRate]): over answers sent at least windowedGap apart, its
// Reset stays within windowedSlack, where a bucket's moves later by at
// least the gap. A window's Reset sent in whole seconds and corrected
// with a Date in whole seconds is off by less than a second, the same
// Reset each time, as the Date's fraction varies; a move between the two
// verdicts' bounds tells nothing, and the test starts again.
const (
	windowedGap   = int64(3 * time.Second)
	windowedSlack = int64(time.Second)
)

// inPlace reports whether a limit advertised as refilling is a fixed
// window: the answer sent at s with rem left until reset, and limit
// (negative: unknown), against the first answer of the test. Once
// tested, the verdict holds.
func (q *AdvertisedRate) inPlace(s int64, rem float64, reset, limit int64) bool {
	if limit < 0 && q.limitKnown {
		limit = int64(q.limit)
	}
	switch {
	case q.tested:
		return q.windowed
	case rem < 0 || reset == 0 || limit >= 0 && rem >= float64(limit):
		return false // a full bucket's Reset is its answer's time: it tells nothing
	case q.anchorAt == 0 || rem > q.anchorRem:
		q.anchorAt, q.anchorRem, q.anchorReset = s, rem, reset // refilled, or a new window: start again
		return false
	case s-q.anchorAt < windowedGap:
		return false
	}
	moved := reset - q.anchorReset
	switch {
	case max(moved, -moved) <= windowedSlack:
		q.tested, q.windowed = true, true
	case moved >= s-q.anchorAt-windowedSlack:
		q.tested = true
	default: // neither: start again from here
		q.anchorAt, q.anchorRem, q.anchorReset = s, rem, reset
	}
	return q.windowed
}
