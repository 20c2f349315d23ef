package adaptive

import (
	"math"
	"time"
)

// Budgeter is implemented by policies that can tell how much they would let
// through over a span of time, for a caller that takes permits from a
// shared quota ahead of its requests: asking for more than that holds
// permits back from other clients.
type Budgeter interface {
	// Budget returns how much cost the policy would let through from now
	// until until if asked at every chance, as it stands at now: at least
	// 0. It is in cost units (see [Coster]), which is requests when every
	// request costs 1. It changes nothing.
	Budget(now, until time.Time) int
}

// Budget returns the cost units the Pacer would let through in
// [now, until] at its current rate: its unit (the typical cost of a
// request, rounded up; 1 until a request with a cost sets it) at the first
// slot, then rate × the time from that slot to until, rounded down. With
// every cost 1 that is the number of slots in [now, until]. While it
// probes a backend that rejected everything, the budget is one unit, and
// none while that probe is unanswered; it is none before a Retry-After
// ends.
func (p *Pacer) Budget(now, until time.Time) int {
	n, u := unixNanos(now), unixNanos(until)
	first := math.Ceil(p.typical())
	if !p.started {
		return satInt(first)
	}
	start := max(n, p.next, p.blocked)
	switch {
	case start > u:
		return 0
	case p.dark && p.out > 0:
		return 0
	case p.dark:
		return satInt(first)
	}
	return satInt(first + math.Floor(float64(u-start)*p.rate/1e9))
}

// satInt converts a non-negative whole float64 to an int, saturating at
// the largest int.
func satInt(f float64) int {
	if !(f < math.MaxInt) {
		return math.MaxInt
	}
	return int(f)
}

// Budget returns the underlying policy's budget, or -1 (no bound) if it is
// not a Budgeter.
func (s *Shared) Budget(now, until time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b, ok := s.p.(Budgeter); ok {
		return b.Budget(now, until)
	}
	return -1
}

var (
	_ Budgeter = (*Pacer)(nil)
	_ Budgeter = (*Shared)(nil)
)
