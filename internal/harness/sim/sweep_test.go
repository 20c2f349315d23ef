package sim_test

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/internal/harness/sim"
	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

func TestSweep(t *testing.T) {
	sc := sim.Scenarios()[3] // quota rise
	sc.Duration, sc.WarmUp = 2*time.Minute, 30*time.Second
	sc.Phases[1].At = time.Minute
	s := sim.Suite{
		Cases:      []sim.Case{{Name: "rise", Family: "f", Scenario: sc, Config: sim.DefaultConfig(1), Goal: sim.Goal{MaxWaste: 0.03}}},
		Algorithms: []sim.Algorithm{sim.AdaptiveAlgorithm(sim.SREK2, "", adaptive.SREConfig{K: 2, Sliding: true}), sim.OracleAlgorithm()},
		Groups:     []int{8},
	}
	seeds := []uint64{1, 2, 3, 4}
	rows, err := sim.Sweep(s, seeds)
	if err != nil {
		t.Fatalf("Sweep error: %v", err)
	}
	if len(rows) != 2 {
		t.Fatalf("got %d rows, want 2", len(rows))
	}
	var utils, wastes []float64
	met := 0
	for _, seed := range seeds {
		s.Seed = seed
		rs, err := s.Run()
		if err != nil {
			t.Fatalf("Run error: %v", err)
		}
		utils, wastes = append(utils, rs[0].Metrics.Utilisation), append(wastes, rs[0].Metrics.Waste)
		if sim.Met(rs[0].Checks) {
			met++
		}
	}
	slices.Sort(utils)
	slices.Sort(wastes)
	r := rows[0]
	if r.Algorithm != sim.SREK2 || r.Seeds != 4 || r.Met != met || r.Misses["waste ≤ 3.0 %"] != 4-met {
		t.Errorf("got row %+v, want SRE over 4 seeds, %d meeting the goal", r, met)
	}
	if want := (sim.Spread{Median: (utils[1] + utils[2]) / 2, Worst: utils[0]}); r.Utilisation != want {
		t.Errorf("got utilisation %+v, want %+v", r.Utilisation, want)
	}
	if want := (sim.Spread{Median: (wastes[1] + wastes[2]) / 2, Worst: wastes[3]}); r.Waste != want {
		t.Errorf("got waste %+v, want %+v", r.Waste, want)
	}
	if len(r.Recovery) != 1 || r.Recovery[0].Worst < r.Recovery[0].Median || math.IsNaN(r.Recovery[0].Median) {
		t.Errorf("got recovery %+v, want one spread", r.Recovery)
	}
	if o := rows[1]; o.Waste.Worst != 0 || o.Met != 4 {
		t.Errorf("oracle: got %+v, want no waste and every goal met", o)
	}
	var b bytes.Buffer
	if err := sim.WriteSweep(&b, s.Cases, rows); err != nil {
		t.Fatalf("WriteSweep error: %v", err)
	}
	if got := b.String(); !strings.Contains(got, "| rise | sre-k2 | 8 |") || !strings.Contains(got, "| rise | oracle | 8 |") {
		t.Errorf("got sweep table\n%s\nwant a row per algorithm", got)
	}
	dir := t.TempDir()
	if err := sim.WriteSweepReport(dir, "x", s, seeds, rows); err != nil {
		t.Errorf("WriteSweepReport error: %v", err)
	}
	if _, err := sim.Sweep(s, nil); err == nil {
		t.Errorf("Sweep without seeds: got nil error, want one")
	}
}
