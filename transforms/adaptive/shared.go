package adaptive

import (
	"sync"
	"time"
)

// Shared is a [Policy] that several groups use at once: it serialises
// their calls to one underlying Policy, so that the groups of a worker pace
// and learn together instead of each deciding alone from its own thin
// evidence. With a [Pacer] underneath, the worker's sends are spaced evenly
// however many groups it runs, one 429 slows all of them, and every group
// takes the slots as they come, so they share evenly. It is a [Coster]
// whatever the underlying Policy: DecideCost asks that policy as the
// function [DecideCost] does.
//
// A Shared policy lives in memory for the life of the worker; its state is
// not saved per group (MarshalBinary and UnmarshalBinary pass through to
// the underlying Policy, for callers that want to save it themselves).
type Shared struct {
	mu sync.Mutex
	p  Policy
}

// NewShared returns a Shared policy over p. p must not be used elsewhere.
func NewShared(p Policy) *Shared { return &Shared{p: p} }

// Decide decides for one group's request; see [Policy].
func (s *Shared) Decide(now time.Time, inFlight int) Decision {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.p.Decide(now, inFlight)
}

// DecideCost decides for one group's request of the given cost: the
// underlying policy's DecideCost if it is a [Coster], else its Decide (see
// the function [DecideCost]).
func (s *Shared) DecideCost(now time.Time, inFlight int, cost int) Decision {
	s.mu.Lock()
	defer s.mu.Unlock()
	return DecideCost(s.p, now, inFlight, cost)
}

// Record learns one group's answer; see [Policy].
func (s *Shared) Record(now time.Time, a Answer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.p.Record(now, a)
}

// MarshalBinary encodes the underlying Policy's state.
func (s *Shared) MarshalBinary() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.p.MarshalBinary()
}

// UnmarshalBinary restores the underlying Policy's state.
func (s *Shared) UnmarshalBinary(data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.p.UnmarshalBinary(data)
}

var (
	_ Policy = (*Shared)(nil)
	_ Coster = (*Shared)(nil)
)
