package sim

import (
	"fmt"
	"time"
)

// Targets for pacing, in every combination of backend and load.
const (
	// The classic scenarios and the token bucket.
	classicMaxWaste       = 0.03
	classicMinUtilisation = 0.97
	classicRecoverWithin  = 10 * time.Second
	// Fixed windows.
	fixedMaxWaste   = 0.05
	fixedMaxWasteRA = 0.03
	fixedMinUtil    = 0.97
	// Strict limiters.
	strictMinOracleShare = 0.9
	strictMaxWaste       = 0.05
	// Latency and calls in flight: no collapse.
	latencyMinUtil = 0.9
	// A competitor.
	competitorMinUtil  = 0.9
	competitorMaxWaste = 0.10
	// Every case, with several groups, under overload.
	minFairness = 0.9
	// A bounded input (section 1): every element succeeds, waste at most
	// 5 %, done within 1.15 × elements ÷ rate.
	boundedMaxWaste    = 0.05
	boundedDrainFactor = 1.15
	// Closer to the limit: one refused probe per quota window, nothing
	// refused against a known rate.
	limitMaxWaste         = 0.03
	limitDrainFactor      = 1.10
	limitWorkersMaxWaste  = 0.05
	limitCompetitorUtil   = 0.9
	limitCompetitorWaste  = 0.10
	limitOverload         = 4
	limitMinuteCapacity   = 10 // 600 a minute
	limitDriftCapacity    = 22 // 99 per window of 4.5 s on average
	limitDriftElements    = 2000
	limitStrictElements   = 600
	limitCompetitorFactor = 1
)

// MatrixMaxWait is the Config.MaxWait of the matrix and the classic
// scenarios (not the per-element model): under sustained overload the
// queues would otherwise grow without bound. It is the simulator's choice,
// not the transform's default.
const MatrixMaxWait = time.Minute

// Family names of the report's tables.
const (
	FamilyTokenBucket = "token bucket"
	FamilyFixed       = "fixed windows"
	FamilyStrict      = "strict limiters"
	FamilyLatency     = "latency and calls in flight"
	FamilyCompetitor  = "competitor"
	FamilyBounded     = "bounded input"
	FamilyLimits      = "closer to the limit"
	FamilySlow        = "slow APIs"
	FamilyClassic     = "classic scenarios"
	FamilyPerElement  = "classic scenarios, per-element model"
)

// StrictCapacity is the capacity of the strict limiters in the matrix, in
// requests per second: low, as in the first real-time measurements (10 requests/s).
const StrictCapacity = 10

// steady returns a steady-overload scenario: offered 2× capacity (and a
// competitor at competitor×) for five minutes, of which warm-up (at least
// 30 s, a multiple of the backend's window) is left out.
func steady(name string, competitor float64, warm time.Duration) Scenario {
	return overload(name, 2, competitor, warm)
}

// overload returns a steady-overload scenario offered offered× capacity
// (and a competitor at competitor×) for five minutes, of which warm-up is
// left out.
func overload(name string, offered, competitor float64, warm time.Duration) Scenario {
	title := fmt.Sprintf("steady overload: offered %g× capacity", offered)
	if competitor > 0 {
		title += fmt.Sprintf(", competitor at %g× capacity", competitor)
	}
	return Scenario{
		Name: name, Title: title, Duration: 5 * time.Minute, WarmUp: warm,
		Phases: []Phase{{Offered: offered, Capacity: 1, Competitor: competitor}},
	}
}

// matrixConfig is the configuration of the matrix: DefaultConfig with
// MatrixMaxWait and backend b.
func matrixConfig(b BackendModel) Config {
	c := DefaultConfig(1)
	c.Backend, c.MaxWait = b, MatrixMaxWait
	return c
}

// MatrixCases returns the matrix of pacing cases: steady 2× overload against
// the backends (a token bucket with one second of burst, as today; fixed
// windows of 1 s, 5 s and 60 s with and without Retry-After; a strict GCRA
// limiter with no burst and a one-token bucket refilled every 100 ms like
// the test server's, both at StrictCapacity),
// with latencies of 40 ms and 500 ms and 1 or 8 calls in flight (on the
// token bucket and the 5 s window), and with an uncontrolled competitor at
// 1× capacity (on the token bucket, the 5 s window and the GCRA limiter);
// and two bounded inputs (a 5 s window with 40 ms calls, 8 in flight; the
// GCRA limiter at StrictCapacity). Each case carries its targets
// for it.
func MatrixCases() []Case {
	var cs []Case
	add := func(family, title string, sc Scenario, cfg Config, g Goal) {
		if sc.Arrivals == nil {
			g.MinFairness = minFairness
		}
		name := cfg.Backend.Name
		if cfg.Latency != DefaultConfig(1).Latency || cfg.CallsInFlight > 1 {
			name += fmt.Sprintf("/%s×%d", compact(cfg.Latency), max(cfg.CallsInFlight, 1))
		}
		if sc.hasCompetitor() {
			name += "/competitor"
		}
		if sc.Arrivals != nil {
			name += fmt.Sprintf("/bounded-%d", len(sc.Arrivals))
		}
		sc.Name = name
		cs = append(cs, Case{Name: name, Family: family, Title: title, Scenario: sc, Config: cfg, Goal: g})
	}
	warm := 30 * time.Second
	bucket := TokenBucket(time.Second, true)
	add(FamilyTokenBucket, bucket.Description, steady("", 0, warm), matrixConfig(bucket),
		Goal{MaxWaste: classicMaxWaste, MinUtilisation: classicMinUtilisation})

	for _, w := range []time.Duration{time.Second, 5 * time.Second, time.Minute} {
		for _, ra := range []bool{false, true} {
			b := FixedWindow(w, ra)
			g := Goal{MaxWaste: fixedMaxWaste, MinUtilisation: fixedMinUtil}
			if ra {
				g.MaxWaste = fixedMaxWasteRA
			}
			add(FamilyFixed, b.Description, steady("", 0, max(warm, w)), matrixConfig(b), g)
		}
	}

	for _, b := range []BackendModel{GCRA(1, true), SteppedTokenBucket(0, 100*time.Millisecond, true)} {
		cfg := matrixConfig(b)
		cfg.Capacity = StrictCapacity
		add(FamilyStrict, fmt.Sprintf("%s, %d requests/s", b.Description, StrictCapacity), steady("", 0, warm), cfg,
			Goal{MinOracleShare: strictMinOracleShare, MaxWaste: strictMaxWaste})
	}

	for _, b := range []BackendModel{bucket, FixedWindow(5*time.Second, false)} {
		for _, lat := range []time.Duration{40 * time.Millisecond, 500 * time.Millisecond} {
			for _, n := range []int{1, 8} {
				cfg := matrixConfig(b)
				cfg.Latency, cfg.CallsInFlight = lat, n
				g := Goal{MinUtilisation: latencyMinUtil}
				add(FamilyLatency, fmt.Sprintf("%s; %s latency, %d call(s) in flight per group", b.Description, spaced(lat), n),
					steady("", 0, warm), cfg, g)
			}
		}
	}

	for _, b := range []BackendModel{bucket, FixedWindow(5*time.Second, false), GCRA(1, true)} {
		cfg := matrixConfig(b)
		if b.Name == GCRA(1, true).Name {
			cfg.Capacity = StrictCapacity
		}
		add(FamilyCompetitor, b.Description+"; an uncontrolled client at 1× capacity", steady("", 1, warm), cfg,
			Goal{MinUtilisation: competitorMinUtil, MaxWaste: competitorMaxWaste})
	}

	// Bounded inputs, all there at the start, no MaxWait: the fixed window
	// of the first real-time measurement (40 ms calls), and its real-time run
	// (600 elements against a strict limiter at 10/s, default flags).
	fixed5 := matrixConfig(FixedWindow(5*time.Second, false))
	fixed5.MaxWait, fixed5.Latency, fixed5.CallsInFlight = 0, 40*time.Millisecond, 8
	add(FamilyBounded, fixed5.Backend.Description+"; 3000 elements at the start, 40 ms latency, 8 calls in flight",
		bounded("", 3000, 2*time.Minute), fixed5, Goal{AllSucceed: true, MaxWaste: boundedMaxWaste, MaxDrainFactor: boundedDrainFactor})
	strict := matrixConfig(GCRA(1, true))
	strict.MaxWait, strict.Capacity = 0, StrictCapacity
	add(FamilyBounded, strict.Backend.Description+fmt.Sprintf(", %d requests/s; 600 elements at the start", StrictCapacity),
		bounded("", 600, 3*time.Minute), strict, Goal{AllSucceed: true, MaxWaste: boundedMaxWaste, MaxDrainFactor: boundedDrainFactor})
	return cs
}

// bounded returns a bounded-input scenario: n elements arriving at the
// start, capacity 1, run for d.
func bounded(name string, n int, d time.Duration) Scenario {
	return Scenario{
		Name: name, Title: fmt.Sprintf("bounded input: %d elements at the start", n), Duration: d,
		Phases: []Phase{{Capacity: 1}}, Arrivals: make([]time.Duration, n),
	}
}

// ClassicCases returns the six classic scenarios against the default
// backend, in the postponing loop (MaxWait MatrixMaxWait), with the pacing
// targets: waste at most 3 %, utilisation at least 97 %, recovery within
// 10 s, and even sharing between groups under overload.
func ClassicCases() []Case {
	recover := map[string][]int{"quota-rise": {1}, "burst": {2}, "outage": {2}}
	var cs []Case
	for _, sc := range Scenarios() {
		cfg := DefaultConfig(1)
		cfg.MaxWait = MatrixMaxWait
		g := Goal{MaxWaste: classicMaxWaste, MinUtilisation: classicMinUtilisation, MinFairness: minFairness}
		if rs := recover[sc.Name]; rs != nil {
			g.RecoverWithin, g.Recover = classicRecoverWithin, rs
		}
		if sc.Name == "underload" {
			g.NoClientRejects = true
		}
		cs = append(cs, Case{Name: sc.Name, Family: FamilyClassic, Title: sc.Title, Scenario: sc, Config: cfg, Goal: g})
	}
	return cs
}

// PerElementAlgorithms are the standard algorithms of the per-element
// model: those that never postpone, and the oracle as the limit.
var PerElementAlgorithms = []string{Original, SREFixedK2, SREK2, SREK11, None, Oracle}

// PerElementCases returns the six classic scenarios in the per-element
// model (Config.FinalThrottled, FiringStop, no MaxWait: each element is
// decided on and sent at most once, as the transform did before
// postponement), with the SRE comparison's goals for the paced mode. Case names end
// in "/per-element".
func PerElementCases() []Case {
	goals := map[string]Goal{
		"steady":     {MaxWaste: 0.05, MinUtilisation: 0.97},
		"underload":  {MaxWaste: 0.05, NoClientRejects: true},
		"quota-drop": {MaxWaste: 0.05, MinUtilisation: 0.97},
		"quota-rise": {MaxWaste: 0.05, MinUtilisation: 0.97, RecoverWithin: 10 * time.Second, Recover: []int{1}},
		"burst":      {MaxWaste: 0.05, MinUtilisation: 0.95, RecoverWithin: 10 * time.Second, Recover: []int{2}},
		"outage":     {MaxWaste: 0.05, MinUtilisation: 0.95, RecoverWithin: 10 * time.Second, Recover: []int{2}},
	}
	var cs []Case
	for _, sc := range Scenarios() {
		cfg := DefaultConfig(1)
		cfg.FinalThrottled, cfg.Firing = true, FiringStop
		cs = append(cs, Case{Name: sc.Name + "/per-element", Family: FamilyPerElement, Title: sc.Title, Scenario: sc,
			Config: cfg, Goal: goals[sc.Name], Algorithms: PerElementAlgorithms})
	}
	return cs
}

// LimitAlgorithms are the algorithms of LimitCases: the pacer, no throttle
// as the baseline, and the oracle as the limit.
var LimitAlgorithms = []string{Pacer, None, Oracle}

// LimitCases returns the cases where one worker's pacing is still short of
// what is possible, with the targets that bound it: one refused probe per
// quota window, and nothing refused against a known rate.
//   - A fixed window drifting between 4 and 5 s, not aligned to the run,
//     99 requests per window, no Retry-After, 40 ms calls, one in flight:
//     2,000 elements at the start.
//   - The strict limiter (GCRA, no burst) at 10 requests/s: 600 elements at
//     the start, default flags.
//   - A per-minute quota (600 a minute) without Retry-After at 4× overload,
//     one worker, and 8 workers each with its own pacer.
//   - An uncontrolled client at 1× capacity on the token bucket at 4×
//     overload, one worker, and 8 workers each with its own pacer.
//
// The bounded cases run with G = 1; the others name their workers.
func LimitCases() []Case {
	var cs []Case
	add := func(name, title string, sc Scenario, cfg Config, groups int, g Goal) {
		sc.Name = name
		cs = append(cs, Case{Name: name, Family: FamilyLimits, Title: title, Scenario: sc, Config: cfg, Goal: g,
			Groups: []int{groups}, Algorithms: LimitAlgorithms})
	}
	drift := DefaultConfig(1)
	drift.Backend, drift.Capacity = DriftingWindow(4*time.Second, time.Second, false), limitDriftCapacity
	drift.Latency = 40 * time.Millisecond
	add("limit/drift-window", drift.Backend.Description+fmt.Sprintf("; %d elements at the start", limitDriftElements), bounded("", limitDriftElements, 3*time.Minute), drift, 1,
		Goal{AllSucceed: true, MaxWaste: limitMaxWaste, MaxDrainFactor: limitDrainFactor})

	strict := DefaultConfig(1)
	strict.Backend, strict.Capacity = GCRA(1, true), StrictCapacity
	add("limit/gcra", strict.Backend.Description+fmt.Sprintf("; %d elements at the start", limitStrictElements), bounded("", limitStrictElements, 3*time.Minute), strict, 1,
		Goal{AllSucceed: true, MaxWaste: limitMaxWaste, MaxDrainFactor: limitDrainFactor})

	for _, workers := range []int{1, 8} {
		minute := matrixConfig(FixedWindow(time.Minute, false))
		minute.Capacity, minute.Workers = limitMinuteCapacity, workers
		add(fmt.Sprintf("limit/minute/%s", workersName(workers)), minute.Backend.Description+fmt.Sprintf(
			", %d a minute; %s", limitMinuteCapacity*60, workersTitle(workers)),
			overload("", limitOverload, 0, time.Minute), minute, workers, Goal{MaxWaste: limitWorkersMaxWaste})

		comp := matrixConfig(TokenBucket(time.Second, true))
		comp.Workers = workers
		add(fmt.Sprintf("limit/competitor/%s", workersName(workers)), comp.Backend.Description+
			fmt.Sprintf("; an uncontrolled client at %g× capacity; %s", float64(limitCompetitorFactor), workersTitle(workers)),
			overload("", limitOverload, limitCompetitorFactor, 30*time.Second), comp, workers,
			Goal{MinUtilisation: limitCompetitorUtil, MaxWaste: limitCompetitorWaste})
	}
	return cs
}

func workersName(n int) string {
	if n == 1 {
		return "1-worker"
	}
	return fmt.Sprintf("%d-workers", n)
}

func workersTitle(n int) string {
	if n == 1 {
		return "one worker"
	}
	return fmt.Sprintf("%d workers, one group and one pacer each", n)
}
