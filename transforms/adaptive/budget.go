package adaptive

import "time"

// Budgeter is implemented by policies that can tell how many requests they
// would let through over a span of time, for a caller that takes permits
// from a shared quota ahead of its requests (see [Quota]): asking for more
// than that holds permits back from other clients.
type Budgeter interface {
	// Budget returns how many requests the policy would let through from
	// now until until if asked at every chance, as it stands at now: at
	// least 0. It changes nothing.
	Budget(now, until time.Time) int
}

// Budget returns how many slots of the Pacer's current rate fall in
// [now, until]: one while it probes a backend that rejected everything
// (none while that probe is unanswered), none before a Retry-After ends.
func (p *Pacer) Budget(now, until time.Time) int {
	n, u := unixNanos(now), unixNanos(until)
	if !p.started {
		return 1
	}
	first := max(n, p.next, p.blocked)
	switch {
	case first > u:
		return 0
	case p.dark && p.out > 0:
		return 0
	case p.dark:
		return 1
	}
	return 1 + int(float64(u-first)*p.rate/1e9)
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
