package adaptive

import (
	"sync"
	"time"
)

// NewShared returns a [Policy] that several groups use at once: it
// serialises their calls to p with a mutex, so that the groups of a worker
// pace and learn together instead of each deciding alone from its own thin
// evidence. Over a [Pacer] the worker's sends are spaced evenly however
// many groups it runs, one 429 slows all of them, and every group takes the
// slots as they come, so they share evenly.
//
// The returned Policy is safe for concurrent use; its methods pass through
// to p, which must not be used elsewhere. It lives in memory for the life of
// the worker: its state is not saved per group (MarshalBinary and
// UnmarshalBinary pass through to p, for callers that want to save it
// themselves).
func NewShared(p Policy) Policy { return &shared{p: p} }

// shared is the Policy of NewShared.
type shared struct {
	mu sync.Mutex
	p  Policy
}

func (s *shared) Decide(now time.Time, inFlight, cost int) Decision {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.p.Decide(now, inFlight, cost)
}

func (s *shared) Record(now time.Time, a Answer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.p.Record(now, a)
}

func (s *shared) Budget(now, until time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.p.Budget(now, until)
}

// Binding is the policy's [Pacer.Binding], if it has one; "" otherwise.
func (s *shared) Binding(now time.Time) (part, detail string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b, ok := s.p.(interface {
		Binding(time.Time) (string, string)
	}); ok {
		return b.Binding(now)
	}
	return "", ""
}

func (s *shared) MarshalBinary() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.p.MarshalBinary()
}

func (s *shared) UnmarshalBinary(data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.p.UnmarshalBinary(data)
}
