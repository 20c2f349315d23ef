package sim_test

import (
	"fmt"
	"time"

	"github.com/beamthrottle/beamthrottle/internal/harness/sim"
)

// Two minutes of steady 4× overload against a backend of 100 requests/s,
// with one group, a 429 being final (Config.FinalThrottled): the pacer,
// which postpones what it cannot send now, wastes next to nothing, and the
// SRE throttle with K=2 lets about half of its calls be rejected; both use
// all the capacity.
func ExampleRun() {
	sc := sim.Scenario{
		Name:     "short",
		Duration: 2 * time.Minute,
		WarmUp:   30 * time.Second,
		Phases:   []sim.Phase{{Offered: 4, Capacity: 1}},
	}
	cfg := sim.DefaultConfig(1)
	cfg.FinalThrottled = true
	for _, alg := range sim.Algorithms() {
		if alg.Name != sim.Pacer && alg.Name != sim.SREK2 {
			continue
		}
		r, err := sim.Run(sc, alg, cfg)
		if err != nil {
			panic(err)
		}
		m := r.Metrics
		fmt.Printf("%-15s utilisation %3.0f%%  waste %2.0f%%\n", alg.Name, 100*m.Utilisation, 100*m.Waste)
	}
	// Output:
	// pacer           utilisation 100%  waste  0%
	// sre-k2          utilisation 100%  waste 50%
}

// A fixed window of 5 s with no Retry-After, shared with an uncontrolled
// client sending as much as the quota: the oracle, which knows when the
// window resets, uses what the competitor leaves and wastes nothing.
func ExampleSuite() {
	sc := sim.Scenario{
		Name: "shared", Duration: 2 * time.Minute, WarmUp: 30 * time.Second,
		Phases: []sim.Phase{{Offered: 2, Capacity: 1, Competitor: 1}},
	}
	cfg := sim.DefaultConfig(1)
	cfg.Backend, cfg.MaxWait = sim.FixedWindow(5*time.Second, false), time.Minute
	s := sim.Suite{
		Cases:      []sim.Case{{Name: "shared", Scenario: sc, Config: cfg, Goal: sim.Goal{MinUtilisation: 0.9, MaxWaste: 0.1}}},
		Algorithms: []sim.Algorithm{sim.OracleAlgorithm()},
		Groups:     []int{1, 8},
	}
	rs, err := s.Run()
	if err != nil {
		panic(err)
	}
	for _, r := range rs {
		fmt.Printf("G=%d waste %.0f%% goals %s\n", r.Groups, 100*r.Metrics.Waste, sim.Misses(r.Checks))
	}
	// Output:
	// G=1 waste 0% goals ✓
	// G=8 waste 0% goals ✓
}
