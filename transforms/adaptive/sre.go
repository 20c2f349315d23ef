package adaptive

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// SRE is the SRE throttle of the original tool, as the Google SRE book
// describes it (chapter "Handling Overload"): it counts the requests it is
// asked about and the requests the backend accepts, and rejects a request
// locally, before sending it, when a random draw r falls below
//
//	p = max(0, (requests − K·accepts) / (requests + 1))
//
// clamped to [0, 1]. An overloaded backend then sees only about K times the
// traffic it is able to accept (with K = 2, about half of the requests sent
// are rejected by the backend). requests counts every request Decide is
// asked about, including the ones it rejects, and p is computed from the
// counts before the current request is counted; requests in flight are
// left out of p, as if not made yet, so that a wave of concurrent calls
// does not throttle itself before any answer has come back. A request it
// does not send is rejected, or, when made with a postponement, postponed
// by that long instead (and counted as a request all the same).
//
// The counts are kept in a window that forgets old ones (SREConfig.Sliding):
// fixed windows of ResetInterval whose end zeroes both counts, or a
// sliding window of WindowSize in buckets of Bucket. The window never moves
// back: a time earlier than one seen before counts in the current window.
// Times are handled with nanosecond precision between the years 1678 and
// 2262 and saturate outside that range.
//
// The rule weighs requests against accepts, one each whatever a request
// costs: a quota counted in tokens or bytes shows in it only through the
// backend's rejections, and Budget sets no bound (-1). Decide and Record do
// not allocate.
//
// An SRE is not safe for concurrent use (see [NewShared]). Create one with
// [NewSRE]; the zero value is not usable.
type SRE struct {
	k                 float64
	failuresAsRejects bool
	postpone          time.Duration
	rnd               func() float64
	w                 window
}

// NewSRE returns the SRE throttle for cfg, or the error of cfg.Validate. A
// positive postpone turns its local rejections into postponements of that
// long.
//
// rnd must return values uniformly distributed in [0, 1); Decide calls it
// exactly once per request and rejects the request when the value is below
// p. If rnd is nil, NewSRE uses a math/rand/v2 PCG source seeded from
// cfg.Seed, so two such policies fed the same events make the same
// decisions. Callers that create many short-lived policies should pass a
// shared or differently seeded rnd, or vary cfg.Seed, so that they do not
// all replay the same random sequence.
func NewSRE(cfg SREConfig, rnd func() float64, postpone time.Duration) (*SRE, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if postpone < 0 {
		return nil, fmt.Errorf("adaptive: NewSRE: postpone must not be negative, got %v", postpone)
	}
	cfg = cfg.withDefaults()
	if rnd == nil {
		rnd = rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)).Float64
	}
	s := &SRE{k: cfg.K, failuresAsRejects: cfg.CountFailuresAsRejects, postpone: postpone, rnd: rnd}
	if cfg.Sliding {
		s.w = newSlidingWindow(cfg.WindowSize, cfg.Bucket)
	} else {
		s.w = &fixedWindow{interval: int64(cfg.ResetInterval)}
	}
	return s, nil
}

// Decide sends with probability 1 − p, and otherwise rejects or postpones.
// The cost is ignored: every request counts once.
func (s *SRE) Decide(now time.Time, inFlight, _ int) Decision {
	n := unixNanos(now)
	requests, accepts := s.w.sums(n)
	p := probability(max(requests-int64(max(inFlight, 0)), 0), accepts, s.k)
	allow := !(s.rnd() < p)
	s.w.add(n, 1, 0)
	switch {
	case allow:
		return Decision{Verdict: Send, Probability: p}
	case s.postpone > 0:
		return Decision{Verdict: Postpone, RetryAt: now.Add(s.postpone), Probability: p}
	}
	return Decision{Verdict: Reject, Probability: p}
}

// Record counts an accept, unless the answer was Throttled (or Failed, with
// SREConfig.CountFailuresAsRejects). It never counts a request: Decide has
// done so already. The SRE rule ignores Retry-After.
func (s *SRE) Record(now time.Time, a Answer) {
	var accept int64 = 1
	switch a.Outcome {
	case Accepted:
	case Throttled:
		accept = 0
	default: // Failed and unknown values
		if s.failuresAsRejects {
			accept = 0
		}
	}
	s.w.add(unixNanos(now), 0, accept)
}

// Budget returns -1: the SRE rule sets no bound ahead of time.
func (s *SRE) Budget(now, until time.Time) int { return -1 }

// probability returns the local rejection probability
//
//	max(0, (requests − k·accepts) / (requests + 1))
//
// clamped to [0, 1]. It never returns NaN: negative counts are treated as
// zero, and a k that is not a positive finite number is replaced by
// defaultK.
func probability(requests, accepts int64, k float64) float64 {
	if requests <= 0 {
		return 0
	}
	if accepts < 0 {
		accepts = 0
	}
	if !(k > 0) || math.IsInf(k, 1) {
		k = defaultK
	}
	r := float64(requests)
	p := (r - k*float64(accepts)) / (r + 1)
	if !(p > 0) { // also catches NaN, which cannot happen with the guards above
		return 0
	}
	if p > 1 {
		return 1
	}
	return p
}

var _ Policy = (*SRE)(nil)
