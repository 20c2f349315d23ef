package adaptive

import (
	"fmt"
	"time"
)

// SRE is the SRE throttle of the original tool as a [Policy]: it sends a
// request unless a random draw r falls below
//
//	p = max(0, (requests − K·accepts) / (requests + 1)),
//
// counting requests and accepts in the windows of its [Config] (see
// [Throttler]). A request it does not send is rejected locally, or, when
// made with a postponement, postponed by that long instead (and counted as
// a request all the same). Requests in flight are left out of p, as
// [Throttler.DecideWithPending] does.
//
// Create one with [NewSRE]; the zero value is not usable.
type SRE struct {
	t        *Throttler
	postpone time.Duration
}

// NewSRE returns the SRE policy for cfg (whose Mode must be ModeSRE) with
// the random source rnd, or the error of [New]. A positive postpone turns
// its local rejections into postponements of that long.
func NewSRE(cfg Config, rnd func() float64, postpone time.Duration) (*SRE, error) {
	if postpone < 0 {
		return nil, fmt.Errorf("adaptive: NewSRE: postpone must not be negative, got %v", postpone)
	}
	t, err := New(cfg, rnd)
	if err != nil {
		return nil, err
	}
	return &SRE{t: t, postpone: postpone}, nil
}

// Decide sends with probability 1 − p, and otherwise rejects or postpones.
func (s *SRE) Decide(now time.Time, inFlight int) Decision {
	allow, p := s.t.DecideWithPending(now, inFlight)
	switch {
	case allow:
		return Decision{Verdict: Send, Probability: p}
	case s.postpone > 0:
		return Decision{Verdict: Postpone, RetryAt: now.Add(s.postpone), Probability: p}
	}
	return Decision{Verdict: Reject, Probability: p}
}

// Record counts an accept, unless the answer was Throttled (or Failed, with
// Config.CountFailuresAsRejects). The SRE rule ignores Retry-After.
func (s *SRE) Record(now time.Time, a Answer) { s.t.Record(now, a.Outcome) }

// Throttler returns the Throttler behind s, for its counts.
func (s *SRE) Throttler() *Throttler { return s.t }

// MarshalBinary encodes the counters, versioned (see
// [Throttler.MarshalBinary]).
func (s *SRE) MarshalBinary() ([]byte, error) { return s.t.MarshalBinary() }

// UnmarshalBinary restores counters made by MarshalBinary, adapted to this
// policy's windows (see [Throttler.UnmarshalBinary]). Empty data resets
// them; data of another version or shape is refused with an error wrapping
// ErrState and leaves the counters reset.
func (s *SRE) UnmarshalBinary(data []byte) error { return s.t.UnmarshalBinary(data) }

var _ Policy = (*SRE)(nil)
