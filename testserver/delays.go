package testserver

import (
	"math"
	"time"
)

// delayHistogram counts the delays of API answers (the queue's wait plus
// the latency) in buckets a hundredth apart, from a millisecond to an
// hour, for Stats' quantiles. The zero value is empty.
type delayHistogram struct {
	counts []int64 // by bucket
	n      int64
}

// delayRatio is the ratio of a bucket's upper bound to its lower bound.
const delayRatio = 1.01

// delayBucket returns the bucket of d: 0 for under a millisecond.
func delayBucket(d time.Duration) int {
	if d < time.Millisecond {
		return 0
	}
	ms := float64(min(d, time.Hour)) / float64(time.Millisecond)
	return 1 + int(math.Log(ms)/math.Log(delayRatio))
}

// add counts a delay d.
func (h *delayHistogram) add(d time.Duration) {
	b := delayBucket(d)
	if b >= len(h.counts) {
		h.counts = append(h.counts, make([]int64, b+1-len(h.counts))...)
	}
	h.counts[b]++
	h.n++
}

// quantile returns the delay that a fraction q of the counted delays do
// not exceed, to within a hundredth (a bucket's upper bound), 0 for under
// a millisecond; 0 if none were counted.
func (h *delayHistogram) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := int64(math.Ceil(q * float64(h.n)))
	var seen int64
	for b, c := range h.counts {
		if seen += c; seen >= max(rank, 1) {
			if b == 0 {
				return 0
			}
			return time.Duration(math.Pow(delayRatio, float64(b)) * float64(time.Millisecond))
		}
	}
	return time.Hour
}
