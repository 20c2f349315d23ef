package sim

import (
	"fmt"
	"time"
)

// Phase is a stretch of a Scenario with a constant offered load and
// backend capacity, both as multiples of Config.Capacity.
type Phase struct {
	// At is when the phase begins, from the start of the run. The first
	// phase of a Scenario begins at 0.
	At time.Duration
	// Offered is the offered load: the rate of the Poisson arrivals, shared
	// evenly by the groups.
	Offered float64
	// Capacity is what the backend accepts per second (a token bucket).
	Capacity float64
	// Outage makes the backend reject every request, whatever Capacity.
	Outage bool
}

// limit is min(offered, capacity) of the phase: what a perfect client
// would get accepted, as a multiple of Config.Capacity.
func (p Phase) limit() float64 {
	if p.Outage {
		return 0
	}
	return min(p.Offered, p.Capacity)
}

// capacity is the backend's rate in the phase, 0 during an outage.
func (p Phase) capacity() float64 {
	if p.Outage {
		return 0
	}
	return p.Capacity
}

// Scenario is a load pattern: offered load and backend capacity over time.
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
	// Goal is what the new throttle mode is to achieve in the scenario.
	Goal Goal
}

// Goal is what a throttle is to achieve in a scenario (issue 5's targets).
// Zero fields set no goal.
type Goal struct {
	// MaxWaste bounds the share of calls sent that the backend rejects.
	MaxWaste float64
	// MinUtilisation is the least utilisation.
	MinUtilisation float64
	// NoClientRejects requires that no element be rejected locally.
	NoClientRejects bool
	// RecoverWithin bounds the recovery time after the changes to the
	// phases listed in Recover (indices into Phases).
	RecoverWithin time.Duration
	Recover       []int
}

// Check is the outcome of one goal on one run.
type Check struct {
	Goal string // what is required, such as "waste ≤ 5.0 %"
	Got  string // what the run achieved
	Met  bool
}

// Check returns the goals of g with what m achieved, in a fixed order.
func (g Goal) Check(sc Scenario, m Metrics) []Check {
	var cs []Check
	if g.MaxWaste > 0 {
		cs = append(cs, Check{fmt.Sprintf("waste ≤ %s", percent(g.MaxWaste)), percent(m.Waste), m.Waste <= g.MaxWaste})
	}
	if g.MinUtilisation > 0 {
		cs = append(cs, Check{fmt.Sprintf("utilisation ≥ %s", percent(g.MinUtilisation)), percent(m.Utilisation),
			m.Utilisation >= g.MinUtilisation})
	}
	if g.NoClientRejects {
		cs = append(cs, Check{"no client rejects", fmt.Sprint(m.ClientRejected), m.ClientRejected == 0})
	}
	for _, i := range g.Recover {
		r := m.Recovery[i-1]
		cs = append(cs, Check{
			Goal: fmt.Sprintf("recovery at %s ≤ %d s", formatMinutes(sc.Phases[i].At), int(g.RecoverWithin/time.Second)),
			Got:  recoveryText(r),
			Met:  r.Measured && r.Time >= 0 && r.Time <= g.RecoverWithin,
		})
	}
	return cs
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
	for _, i := range s.Goal.Recover {
		if i < 1 || i >= len(s.Phases) {
			return fmt.Errorf("sim: Scenario %s: Goal.Recover index %d is not a phase change", s.Name, i)
		}
	}
	for i, p := range s.Phases {
		if i > 0 && p.At <= s.Phases[i-1].At {
			return fmt.Errorf("sim: Scenario %s: Phases must be in increasing order of At", s.Name)
		}
		if p.At%time.Second != 0 {
			return fmt.Errorf("sim: Scenario %s: phase %d must begin on a whole second, got %v", s.Name, i, p.At)
		}
		if !(p.Offered >= 0) || !(p.Capacity >= 0) {
			return fmt.Errorf("sim: Scenario %s: phase %d: Offered and Capacity must not be negative", s.Name, i)
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

// phaseEnd returns the end of phase i.
func (s *Scenario) phaseEnd(i int) time.Duration {
	if i+1 < len(s.Phases) {
		return s.Phases[i+1].At
	}
	return 1<<63 - 1
}

// Lengths of the standard scenarios.
const (
	runLength = 10 * time.Minute
	warmUp    = time.Minute
	change    = 5 * time.Minute // when the standard scenarios change
)

// Scenarios returns the standard scenarios of the report, each ten
// simulated minutes with a one-minute warm-up and a change at minute five.
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
	goals := map[string]Goal{
		"steady":     {MaxWaste: 0.05, MinUtilisation: 0.97},
		"underload":  {MaxWaste: 0.05, NoClientRejects: true},
		"quota-drop": {MaxWaste: 0.05, MinUtilisation: 0.97},
		"quota-rise": {MaxWaste: 0.05, MinUtilisation: 0.97, RecoverWithin: 10 * time.Second, Recover: []int{1}},
		"burst":      {MaxWaste: 0.05, MinUtilisation: 0.95, RecoverWithin: 10 * time.Second, Recover: []int{2}},
		"outage":     {MaxWaste: 0.05, MinUtilisation: 0.95, RecoverWithin: 10 * time.Second, Recover: []int{2}},
	}
	for i := range ss {
		ss[i].Duration, ss[i].WarmUp = runLength, warmUp
		ss[i].Goal = goals[ss[i].Name]
	}
	return ss
}
