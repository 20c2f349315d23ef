package sim_test

import (
	"bytes"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/sim"
	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// suiteResults runs the default suite once for all the tests that read it.
var suiteResults = sync.OnceValues(func() ([]sim.Result, error) { return sim.DefaultSuite().Run() })

func results(t *testing.T) []sim.Result {
	t.Helper()
	rs, err := suiteResults()
	if err != nil {
		t.Fatalf("DefaultSuite().Run() error: %v", err)
	}
	return rs
}

// find returns the result of one run.
func find(t *testing.T, rs []sim.Result, scenario, alg string, groups int) sim.Result {
	t.Helper()
	for _, r := range rs {
		if r.Scenario == scenario && r.Algorithm == alg && r.Groups == groups {
			return r
		}
	}
	t.Fatalf("no result for %s/%s/G=%d", scenario, alg, groups)
	return sim.Result{}
}

// TestOracle checks the simulator against its limit: the oracle never
// sends a call the backend rejects and uses all the capacity a perfect
// client could, less what random arrivals beyond the backend's one-second
// bucket make impossible at an offered load of exactly 1×.
func TestOracle(t *testing.T) {
	rs := results(t)
	minUtil := map[string]float64{
		"steady": 0.995, "underload": 0.98, "quota-drop": 0.995, "quota-rise": 0.995, "burst": 0.96, "outage": 0.995,
	}
	for _, sc := range sim.Scenarios() {
		for _, g := range []int{1, 8} {
			m := find(t, rs, sc.Name, sim.Oracle, g).Metrics
			if m.BackendRejected != 0 || m.Waste != 0 {
				t.Errorf("%s G=%d: got %d backend rejections (waste %v), want 0", sc.Name, g, m.BackendRejected, m.Waste)
			}
			if m.Utilisation < minUtil[sc.Name] || m.Utilisation > 1.02 {
				t.Errorf("%s G=%d: got utilisation %.4f, want in [%v, 1.02]", sc.Name, g, m.Utilisation, minUtil[sc.Name])
			}
		}
	}
}

// TestNoThrottle checks that no throttle rejects nothing locally and, when
// the backend keeps up, loses nothing.
func TestNoThrottle(t *testing.T) {
	rs := results(t)
	for _, sc := range sim.Scenarios() {
		for _, g := range []int{1, 8} {
			r := find(t, rs, sc.Name, sim.None, g)
			if m := r.Metrics; m.ClientRejected != 0 {
				t.Errorf("%s G=%d: got %d client rejections, want 0", sc.Name, g, m.ClientRejected)
			}
			// Everything offered is sent, but for what arrived after the
			// last batch of the run.
			offered, sent := sum(r.Series.Offered), sum(r.Series.Sent)
			if d := offered - sent; d < 0 || d > 1100 {
				t.Errorf("%s G=%d: got %d sent of %d offered, want all but the last batch", sc.Name, g, sent, offered)
			}
		}
	}
	if m := find(t, rs, "underload", sim.None, 1).Metrics; m.BackendRejected != 0 {
		t.Errorf("underload: got %d backend rejections with no throttle, want 0", m.BackendRejected)
	}
}

// TestSRE checks the simulator reproduces the reference measurements of
// issue 5 under 4× overload: SRE with K=2 wastes about half of the calls
// sent, K=1.1 about a tenth.
func TestSRE(t *testing.T) {
	rs := results(t)
	tests := []struct {
		alg      string
		min, max float64
	}{
		{sim.SREK2, 0.40, 0.55},
		{sim.SREFixedK2, 0.40, 0.55},
		{sim.SREK11, 0.07, 0.12},
	}
	for _, tc := range tests {
		for _, g := range []int{1, 8} {
			if w := find(t, rs, "steady", tc.alg, g).Metrics.Waste; w < tc.min || w > tc.max {
				t.Errorf("%s G=%d steady: got waste %.3f, want in [%v, %v]", tc.alg, g, w, tc.min, tc.max)
			}
		}
	}
	// K=1.1 is slow to use a doubled quota.
	if r := find(t, rs, "quota-rise", sim.SREK11, 1).Metrics.Recovery[0]; r.Time >= 0 && r.Time < time.Minute {
		t.Errorf("sre-k1.1 quota-rise: got recovery %v, want over a minute", r.Time)
	}
}

// TestPacedGoals asserts issue 5's goals for the paced mode, for one and
// eight groups, in every scenario: the simulation is deterministic, so
// this checks the default seed. (With eight groups the recovery after the
// quota doubles is the goal closest to failing: 10 s here, and over 10 s
// with about one seed in five; see docs/sim/results.md.)
func TestPacedGoals(t *testing.T) {
	rs := results(t)
	for _, sc := range sim.Scenarios() {
		for _, g := range []int{1, 8} {
			m := find(t, rs, sc.Name, sim.Paced, g).Metrics
			for _, c := range sc.Goal.Check(sc, m) {
				if !c.Met {
					t.Errorf("paced %s G=%d: got %s, want %s", sc.Name, g, c.Got, c.Goal)
				}
			}
		}
	}
}

// TestDeterministic checks that the same seed gives the same report, and
// another seed another one.
func TestDeterministic(t *testing.T) {
	table := func(seed uint64) string {
		s := sim.DefaultSuite()
		s.Config = func(g int) sim.Config {
			c := sim.DefaultConfig(g)
			c.Seed = seed
			return c
		}
		s.Scenarios = s.Scenarios[:3]
		rs, err := s.Run()
		if err != nil {
			t.Fatalf("Run error: %v", err)
		}
		var b bytes.Buffer
		if err := sim.WriteMarkdown(&b, s.Scenarios, rs); err != nil {
			t.Fatalf("WriteMarkdown error: %v", err)
		}
		return b.String()
	}
	a, b := table(sim.DefaultSeed), table(sim.DefaultSeed)
	if a != b {
		t.Errorf("two runs with the same seed differ:\n%s\n---\n%s", a, b)
	}
	if c := table(7); c == a {
		t.Errorf("got the same table for seeds %d and 7, want different", sim.DefaultSeed)
	}
}

func TestRunErrors(t *testing.T) {
	good := sim.Scenarios()[0]
	alg := sim.Algorithms()[0]
	tests := []struct {
		name string
		sc   sim.Scenario
		cfg  sim.Config
	}{
		{"no name", sim.Scenario{Duration: time.Minute, Phases: []sim.Phase{{Offered: 1, Capacity: 1}}}, sim.Config{}},
		{"no phases", sim.Scenario{Name: "x", Duration: time.Minute}, sim.Config{}},
		{"first phase late", sim.Scenario{Name: "x", Duration: time.Minute, Phases: []sim.Phase{{At: time.Second}}}, sim.Config{}},
		{"fractional duration", sim.Scenario{Name: "x", Duration: 1500 * time.Millisecond, Phases: []sim.Phase{{}}}, sim.Config{}},
		{"warm-up too long", sim.Scenario{Name: "x", Duration: time.Minute, WarmUp: time.Minute, Phases: []sim.Phase{{}}}, sim.Config{}},
		{"phases out of order", sim.Scenario{Name: "x", Duration: time.Minute,
			Phases: []sim.Phase{{}, {At: 2 * time.Second}, {At: time.Second}}}, sim.Config{}},
		{"negative capacity", sim.Scenario{Name: "x", Duration: time.Minute, Phases: []sim.Phase{{Capacity: -1}}}, sim.Config{}},
		{"bad goal", sim.Scenario{Name: "x", Duration: time.Minute, Phases: []sim.Phase{{}}, Goal: sim.Goal{Recover: []int{0}}}, sim.Config{}},
		{"negative groups", good, sim.Config{Groups: -1}},
		{"negative latency", good, sim.Config{Latency: -time.Second}},
		{"NaN capacity", good, sim.Config{Capacity: math.NaN()}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := sim.Run(tc.sc, alg, tc.cfg); err == nil || !strings.HasPrefix(err.Error(), "sim: ") {
				t.Errorf("got error %v, want one beginning with %q", err, "sim: ")
			}
		})
	}
}

// TestRecoveryMetric checks the recovery time after a quota rise: no
// throttle recovers at once (within the batch period), and a client that
// sends nothing never does.
func TestRecoveryMetric(t *testing.T) {
	rise := sim.Scenarios()[3]
	rise.Duration, rise.WarmUp = 400*time.Second, 10*time.Second
	r, err := sim.Run(rise, sim.Algorithms()[5], sim.Config{})
	if err != nil {
		t.Fatalf("Run error: %v", err)
	}
	if got := r.Metrics.Recovery; len(got) != 1 || !got[0].Measured || got[0].Time <= 0 || got[0].Time > 2*time.Second {
		t.Errorf("no throttle: got recovery %+v, want one measured, at most 2s", got)
	}
	nothing := sim.Algorithm{Name: "nothing", New: func(sim.Env) sim.Throttle { return refuse{} }}
	r, err = sim.Run(rise, nothing, sim.Config{})
	if err != nil {
		t.Fatalf("Run error: %v", err)
	}
	if got := r.Metrics; got.Recovery[0].Time >= 0 || got.Sent != 0 || got.Utilisation != 0 {
		t.Errorf("refusing everything: got %+v, want never recovered, nothing sent", got)
	}
	if offered, rejected := sum(r.Series.Offered), sum(r.Series.ClientRejected); offered-rejected > 200 {
		t.Errorf("refusing everything: got %d of %d offered rejected, want all but the last batch", rejected, offered)
	}
}

func sum(xs []int64) int64 {
	var n int64
	for _, x := range xs {
		n += x
	}
	return n
}

// refuse is a throttle that rejects everything.
type refuse struct{}

func (refuse) Decide(time.Duration) bool                     { return false }
func (refuse) Record(time.Duration, adaptive.Outcome)        {}
func (refuse) RecordRetryAfter(time.Duration, time.Duration) {}

func TestWriteReport(t *testing.T) {
	rs := results(t)
	s := sim.DefaultSuite()
	dir := t.TempDir()
	if err := sim.WriteReport(dir, "go run ./cmd/simulate -out "+dir, "svg", s, rs); err != nil {
		t.Fatalf("WriteReport error: %v", err)
	}
	var b bytes.Buffer
	if err := sim.WritePlot(&b, "png", s.Scenarios[0], rs); err != nil {
		t.Fatalf("WritePlot png error: %v", err)
	}
	if !bytes.HasPrefix(b.Bytes(), []byte("\x89PNG")) {
		t.Errorf("got PNG starting %q, want the PNG signature", b.Bytes()[:8])
	}
	if err := sim.WritePlot(&b, "gif", s.Scenarios[0], rs); err == nil {
		t.Errorf("got nil error for format gif, want one")
	}
	if err := sim.WriteReport(dir, "x", "gif", s, rs); err == nil {
		t.Errorf("got nil error for format gif, want one")
	}
}

func BenchmarkRun(b *testing.B) {
	sc := sim.Scenarios()[0]
	for _, alg := range []sim.Algorithm{sim.Algorithms()[2], sim.Algorithms()[4]} {
		b.Run(alg.Name, func(b *testing.B) {
			b.ReportAllocs()
			var decisions int64
			for b.Loop() {
				r, err := sim.Run(sc, alg, sim.DefaultConfig(8))
				if err != nil {
					b.Fatal(err)
				}
				decisions = r.Metrics.Sent + r.Metrics.ClientRejected
			}
			b.ReportMetric(float64(decisions), "decisions/op")
		})
	}
}
