package adaptive

import "time"

// What the external tests read of the package's insides.

// StateVersion is the version byte of the SRE policy's state encoding.
const StateVersion = sreVersion

// Defaults and bounds of SREConfig.
const (
	DefaultK    = defaultK
	DefaultSeed = defaultSeed
	MaxBuckets  = maxBuckets
)

// Probability is the SRE rule's rejection probability.
var Probability = probability

// Started reports whether s's window has seen an event.
func Started(s *SRE) bool {
	switch w := s.w.(type) {
	case *fixedWindow:
		return w.started
	case *slidingWindow:
		return w.started
	}
	return false
}

// WindowStart is the start of s's fixed window, in Unix nanoseconds.
func WindowStart(s *SRE) int64 { return s.w.(*fixedWindow).start }

// Counts returns the requests and accepts in s's window as of now, after
// moving a started window to now; it starts no window.
func Counts(s *SRE, now time.Time) (requests, accepts int64) {
	if !Started(s) {
		return 0, 0
	}
	return s.w.sums(unixNanos(now))
}

// P returns the rejection probability the next Decide at now would use,
// with no request in flight.
func P(s *SRE, now time.Time) float64 {
	r, a := Counts(s, now)
	return probability(r, a, s.k)
}
