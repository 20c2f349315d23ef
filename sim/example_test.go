package sim_test

import (
	"fmt"
	"time"

	"github.com/beamthrottle/beamthrottle/sim"
)

// Two minutes of steady 4× overload against a backend of 100 requests/s,
// with one group: the SRE throttle with K=2 lets about half of its calls be
// rejected, the paced mode a few per cent, and both use all the capacity.
func ExampleRun() {
	sc := sim.Scenario{
		Name:     "short",
		Duration: 2 * time.Minute,
		WarmUp:   30 * time.Second,
		Phases:   []sim.Phase{{Offered: 4, Capacity: 1}},
	}
	for _, alg := range sim.Algorithms() {
		if alg.Name != sim.SREK2 && alg.Name != sim.Paced {
			continue
		}
		r, err := sim.Run(sc, alg, sim.DefaultConfig(1))
		if err != nil {
			panic(err)
		}
		m := r.Metrics
		fmt.Printf("%-6s utilisation %3.0f%%  waste %2.0f%%\n", alg.Name, 100*m.Utilisation, 100*m.Waste)
	}
	// Output:
	// sre-k2 utilisation 100%  waste 50%
	// paced  utilisation  99%  waste  3%
}
