package sim_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/internal/harness/sim"
)

// TestAdvertisedCases pins, for the default seed, which goals of the
// advertised quotas the pacer meets, as TestSlowCases does: the oracle
// meets every goal of its cases, the contrast (no quota advertised) its
// waste, and every element is counted once. With the seeds 1 to 20 the
// pacer meets every goal but once (32 workers with the outside client, a
// window 94 % used); 32 workers on the aligned windows waste up to 1.0 %.
// Under the limits on tokens it wastes at most 0.3 % and uses at least
// 96 % of the output tokens in each window but the first, and no other
// limit refuses a request.
func TestAdvertisedCases(t *testing.T) {
	algs := algorithmsNamed(sim.AdvertisedAlgorithms)
	rs, err := sim.Suite{Cases: sim.AdvertisedCases(), Algorithms: algs, DropSeries: true}.Run()
	if err != nil {
		t.Fatal(err)
	}
	all := []string{"waste", "each window"}
	met := map[string][]string{
		"advertised/window/8-workers":             all,
		"advertised/window/32-workers":            all,
		"advertised/bucket/8-workers":             all,
		"advertised/bucket/32-workers":            all,
		"advertised/window-competitor/8-workers":  all,
		"advertised/window-competitor/32-workers": all,
		"advertised/window-skew/8-workers":        all,
		"advertised/window-skew/32-workers":       all,
		"advertised/aligned/8-workers":            all,
		"advertised/aligned/32-workers":           all,
		"advertised/window-silent/8-workers":      {"waste ≥"},
		"advertised/window-silent/32-workers":     {"waste ≥"},
		"advertised/tokens/8-workers":             {"waste", "output tokens", "no 429"},
		"advertised/tokens-silent/8-workers":      {"waste ≥"},
	}
	pacerRuns := 0
	for _, r := range rs {
		o, m := r.Outcomes, r.Metrics
		if !o.Balanced() || m.Accepted+m.BackendRejected+m.TimedOut != m.Sent {
			t.Errorf("%s/%s: got outcomes %+v, %d sent, %d accepted, %d rejected; want all counted once",
				r.Case, r.Algorithm, o, m.Sent, m.Accepted, m.BackendRejected)
		}
		if len(r.Checks) == 0 {
			t.Errorf("%s/%s: no goal checked", r.Case, r.Algorithm)
		}
		if tokens := strings.Contains(r.Case, "/tokens"); tokens != (len(r.Limits) == 3) {
			t.Errorf("%s/%s: got %d limits measured, want 3 for the limits on tokens only", r.Case, r.Algorithm, len(r.Limits))
		}
		if r.Algorithm == sim.Oracle {
			if !sim.Met(r.Checks) {
				t.Errorf("%s/oracle: %s, want every goal met by the oracle", r.Case, sim.Misses(r.Checks))
			}
			continue
		}
		pacerRuns++
		want, ok := met[r.Case]
		if !ok {
			t.Errorf("%s not pinned", r.Case)
		}
		for _, c := range r.Checks {
			pinned := slices.ContainsFunc(want, func(p string) bool { return strings.HasPrefix(c.Goal, p) })
			if c.Met != pinned {
				t.Errorf("%s/pacer: %s: got %s (met %v), want met %v", r.Case, c.Goal, c.Got, c.Met, pinned)
			}
		}
	}
	if pacerRuns != len(met) {
		t.Errorf("got %d runs of the pacer, want the %d pinned", pacerRuns, len(met))
	}
}

// TestWindowUse: the least share used of the whole windows after the
// run's first and the warm-up, the first ending where the goal says.
func TestWindowUse(t *testing.T) {
	// 10 s of accepted 1, 2, …, 10 against a limit of 10 a second.
	s := sim.Series{Accepted: make([]int64, 10), Limit: make([]float64, 10)}
	for i := range s.Accepted {
		s.Accepted[i], s.Limit[i] = int64(i+1), 10
	}
	sc := sim.Scenario{Duration: 10 * time.Second}
	tests := []struct {
		name             string
		warm             time.Duration
		window, firstEnd time.Duration
		use              float64
		from             time.Duration
		ok               bool
	}{
		// Windows from 2 s: [2, 4), [4, 6), [6, 8), [8, 10).
		{"aligned", 0, 2 * time.Second, 0, 0.35, 2 * time.Second, true},
		// From 1 s: [1, 3) … [7, 9); [9, 10) cut short.
		{"into a window", 0, 2 * time.Second, time.Second, 0.25, time.Second, true},
		{"after the warm-up", 5 * time.Second, 2 * time.Second, 0, 0.75, 6 * time.Second, true},
		{"no whole window", 0, 6 * time.Second, 0, 0, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sc.WarmUp = tc.warm
			use, from, ok := sim.WindowUse(sc, s, tc.window, tc.firstEnd)
			if ok != tc.ok || fmt.Sprintf("%.4f", use) != fmt.Sprintf("%.4f", tc.use) || from != tc.from {
				t.Errorf("got %v from %v (ok %v), want %v from %v (ok %v)", use, from, ok, tc.use, tc.from, tc.ok)
			}
		})
	}
	if _, _, ok := sim.WindowUse(sc, sim.Series{}, 2*time.Second, 0); ok {
		t.Error("WindowUse of dropped series: ok, want not")
	}
}

func TestGoalCheckWindowUse(t *testing.T) {
	sc := sim.Scenario{Duration: 3 * time.Minute}
	s := sim.Series{Accepted: make([]int64, 180), Limit: make([]float64, 180)}
	for i := range s.Accepted {
		s.Accepted[i], s.Limit[i] = 10, 10
		if i >= 120 {
			s.Accepted[i] = 9
		}
	}
	r := sim.Result{Groups: 1, Series: s, Metrics: sim.Metrics{Sent: 100, BackendRejected: 20, Waste: 0.2}}
	g := sim.Goal{MinWindowUse: 0.95, Window: time.Minute, MinWaste: 0.1}
	if got, want := sim.Misses(g.Check(sc, r, nil)), "✗ each window ≥ 95.0 % used: 90.0 % (the window from 2:00)"; got != want {
		t.Errorf("got misses %q, want %q", got, want)
	}
	if got, want := g.String(), "each window ≥ 95.0 % used, waste ≥ 10.0 % (the contrast)"; got != want {
		t.Errorf("got goals %q, want %q", got, want)
	}
	bad := sim.Suite{Cases: []sim.Case{{Name: "c", Scenario: sim.Scenario{Name: "s", Duration: time.Minute,
		Phases: []sim.Phase{{Capacity: 1}}}, Goal: sim.Goal{MinWindowUse: 0.9, Window: 1500 * time.Millisecond}}}}
	if _, err := bad.Run(); err == nil {
		t.Error("Suite.Run with a window of 1.5 s: no error, want one")
	}
}
