package adaptive

import "time"

// How a limit advertised as refilling shows it is a fixed window (see
// [AdvertisedRate]): its Reset stays within windowedSlack over answers
// sent windowedGap apart. Resets sent in whole seconds are off by up to a
// second each way alike; a bucket's moves by at least the gap.
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
	q.tested = true
	q.windowed = max(reset-q.anchorReset, q.anchorReset-reset) <= windowedSlack
	return q.windowed
}
