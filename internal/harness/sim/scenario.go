package sim

import (
	"fmt"
	"time"
)

// Phase is a stretch of a Scenario with a constant offered load, backend
// capacity and competitor load, as multiples of Config.Capacity.
type Phase struct {
	// At is when the phase begins, from the start of the run. The first
	// phase of a Scenario begins at 0.
	At time.Duration
	// Offered is the offered load: the rate of the Poisson arrivals, shared
	// evenly by the groups.
	Offered float64
	// Capacity is the backend's rate (what it accepts per second; see the
	// BackendModel for how).
	Capacity float64
	// Outage makes the backend reject every request, whatever Capacity.
	Outage bool
	// Competitor is the rate of an uncontrolled client sharing the
	// backend: Poisson requests that never throttle and are never retried.
	Competitor float64
}

// limit is min(offered, capacity) of the phase: what a perfect client
// would get accepted without a competitor, as a multiple of
// Config.Capacity.
func (p Phase) limit() float64 {
	return min(p.Offered, p.capacity())
}

// capacity is the backend's rate in the phase, 0 during an outage.
func (p Phase) capacity() float64 {
	if p.Outage {
		return 0
	}
	return p.Capacity
}

// overloaded reports whether the phase asks more of the backend than it
// has: the pipeline's offered load and the competitor's together exceed a
// positive capacity.
func (p Phase) overloaded() bool {
	return p.capacity() > 0 && p.Offered+p.Competitor > p.capacity()
}

// Scenario is a load pattern: offered load, backend capacity and
// competitor load over time.
type Scenario struct {
	// Name is a short identifier, used in file names.
	Name string
	// Title describes the scenario in one line.
	Title string
	// Duration is the length of the run.
	Duration time.Duration
	// WarmUp is the start of the run left out of the metrics.
	WarmUp time.Duration
	// Phases are in order of At; the first begins at 0. Every phase
	// boundary is a change after which the recovery time is measured,
	// unless nothing can be accepted after it (an outage begins).
	Phases []Phase
	// Arrivals, if set, replaces the Poisson arrivals: it holds the arrival
	// time of every element, in order, and element i goes to group i mod
	// Groups. The phases' Offered is then ignored, and the offered term of
	// the utilisation's limit is the number of arrivals (a bounded input
	// is better judged by Metrics.Drained).
	Arrivals []time.Duration
}

// Validate reports whether s can be simulated.
func (s Scenario) Validate() error {
	switch {
	case s.Name == "":
		return fmt.Errorf("sim: Scenario Name is empty")
	case s.Duration <= 0 || s.Duration%time.Second != 0:
		return fmt.Errorf("sim: Scenario %s: Duration must be a positive number of whole seconds, got %v", s.Name, s.Duration)
	case s.WarmUp < 0 || s.WarmUp >= s.Duration || s.WarmUp%time.Second != 0:
		return fmt.Errorf("sim: Scenario %s: WarmUp must be whole seconds in [0, Duration), got %v", s.Name, s.WarmUp)
	case len(s.Phases) == 0 || s.Phases[0].At != 0:
		return fmt.Errorf("sim: Scenario %s: Phases must begin at 0", s.Name)
	}
	for i, p := range s.Phases {
		if i > 0 && p.At <= s.Phases[i-1].At {
			return fmt.Errorf("sim: Scenario %s: Phases must be in increasing order of At", s.Name)
		}
		if p.At%time.Second != 0 {
			return fmt.Errorf("sim: Scenario %s: phase %d must begin on a whole second, got %v", s.Name, i, p.At)
		}
		if !(p.Offered >= 0) || !(p.Capacity >= 0) || !(p.Competitor >= 0) {
			return fmt.Errorf("sim: Scenario %s: phase %d: Offered, Capacity and Competitor must not be negative", s.Name, i)
		}
	}
	for i, a := range s.Arrivals {
		if a < 0 || i > 0 && a < s.Arrivals[i-1] {
			return fmt.Errorf("sim: Scenario %s: Arrivals must be in order and not negative", s.Name)
		}
	}
	return nil
}

// phaseAt returns the index of the phase in force at d.
func (s *Scenario) phaseAt(d time.Duration) int {
	i := 0
	for i+1 < len(s.Phases) && s.Phases[i+1].At <= d {
		i++
	}
	return i
}

// phaseEnd returns the end of phase i (Never for the last).
func (s *Scenario) phaseEnd(i int) time.Duration {
	if i+1 < len(s.Phases) {
		return s.Phases[i+1].At
	}
	return Never
}

// Lengths of the classic scenarios.
const (
	runLength = 10 * time.Minute
	warmUp    = time.Minute
	change    = 5 * time.Minute // when the classic scenarios change
)

// Scenarios returns the six classic scenarios, each ten simulated minutes
// with a one-minute warm-up and a change at minute five.
func Scenarios() []Scenario {
	ss := []Scenario{
		{
			Name: "steady", Title: "steady overload: offered 4× capacity",
			Phases: []Phase{{Offered: 4, Capacity: 1}},
		},
		{
			Name: "underload", Title: "under-load: offered 0.5× capacity, nothing may be rejected",
			Phases: []Phase{{Offered: 0.5, Capacity: 1}},
		},
		{
			Name: "quota-drop", Title: "quota drop: offered 4×, capacity halves at 5 min",
			Phases: []Phase{{Offered: 4, Capacity: 1}, {At: change, Offered: 4, Capacity: 0.5}},
		},
		{
			Name: "quota-rise", Title: "quota rise: offered 4×, capacity doubles at 5 min",
			Phases: []Phase{{Offered: 4, Capacity: 1}, {At: change, Offered: 4, Capacity: 2}},
		},
		{
			Name: "burst", Title: "burst: offered 1×, 10× for 30 s at 5 min, then 1× again",
			Phases: []Phase{
				{Offered: 1, Capacity: 1},
				{At: change, Offered: 10, Capacity: 1},
				{At: change + 30*time.Second, Offered: 1, Capacity: 1},
			},
		},
		{
			Name: "outage", Title: "outage: offered 2×, every request rejected for 60 s at 5 min",
			Phases: []Phase{
				{Offered: 2, Capacity: 1},
				{At: change, Offered: 2, Capacity: 1, Outage: true},
				{At: change + time.Minute, Offered: 2, Capacity: 1},
			},
		},
	}
	for i := range ss {
		ss[i].Duration, ss[i].WarmUp = runLength, warmUp
	}
	return ss
}
