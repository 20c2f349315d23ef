package quotabench

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// named returns the scenario of that name.
func named(name string) Scenario {
	scs, err := Select(name)
	if err != nil {
		panic(err)
	}
	return scs[0]
}

// results are a fixed run: one shared-quota scenario that meets its
// targets, the adaptive throttle alone that does not, and a fault.
func results() []Result {
	proc := func(name string, ok bool) Proc {
		return Proc{Name: name, SummaryOK: true, Conserved: ok,
			Summary: Summary{Success: 8, ClientThrottled: 2, Total: 10, AccountedFor: true},
			Outputs: Outputs{Lines: 10, ByOutcome: map[string]int{"success": 8, "client_throttled": 2}}}
	}
	return []Result{{
		Scenario: named("redis"), Elements: 10,
		Measure: Measure{Accepted: 995, Rejected: 5, Waste: 0.005, BusySeconds: 20, BusyAccepted: 1170, CapacityLeft: 1200, Utilisation: 0.975},
		Procs:   []Proc{proc("p1", true), proc("p2", true)},
	}, {
		Scenario: named("none"), Elements: 10,
		Measure: Measure{Accepted: 900, Rejected: 300, Waste: 0.25, BusySeconds: 20, Utilisation: 0.9},
		Procs:   []Proc{proc("p1", true), proc("p2", false)},
	}, {
		Scenario: named("redis-down-open"), Elements: 10,
		Measure: Measure{Accepted: 500, Rejected: 20, Waste: 20.0 / 520, BusySeconds: 10, Utilisation: 0.99},
		Before:  Phase{Seconds: 4, Accepted: 240}, During: Phase{Seconds: 2, Accepted: 100, Rejected: 20}, After: Phase{Seconds: 4, Accepted: 240},
		FaultFrom: 1, FaultTo: 3, QuotaWarnings: 3,
		Procs: []Proc{proc("p1", true)},
	}}
}

func TestWriteReport(t *testing.T) {
	var b bytes.Buffer
	h := Header{Command: "make quotabench", Machine: "2 cores", When: time.Date(2026, 11, 23, 18, 0, 0, 0, time.UTC), Plot: "results.svg"}
	if err := WriteReport(&b, h, results()); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{
		"    make quotabench\n",
		"Measured 2026-11-23 18:00 UTC on 2 cores.",
		"![accepted and rejected per second, per scenario](results.svg)",
		"| redis: shared quota, Redis GCRA | redis, fail open | 995 | 5 | ✓ 0.5 % (≤ 1 %) | ✓ 97.5 % (≥ 97 %) over 20 s | – | ✓ |",
		"| none: adaptive throttle alone | none | 900 | 300 | ✗ 25 % (≤ 1 %) | ✗ 90 % (≥ 97 %) over 20 s | – | ✗ |",
		"| redis-down-open: Redis killed and restarted, fail open | ✓ 10 lines for 10 elements | 500 | 20 | 3.85 % | 99 % | 60.0 / 0.0 | 50.0 / 10.0 | 60.0 / 0.0 | 3 |",
		"| none | p2 | 8 / 2 / 0 / 0 = 10 | 10 (8 / 2 / 0 / 0) | ✗ |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q; got:\n%s", want, got)
		}
	}
	if strings.Contains(got, "## Problems") {
		t.Errorf("report has a Problems section without problems:\n%s", got)
	}
}

func TestPct(t *testing.T) {
	for f, want := range map[float64]string{0: "0 %", 0.01: "1 %", 0.975: "97.5 %", 0.0078: "0.78 %", 1.0093: "100.93 %"} {
		if got := pct(f); got != want {
			t.Errorf("pct(%v) = %q, want %q", f, got, want)
		}
	}
}

// TestWritePlot draws the fixed results; it checks that an SVG comes out.
func TestWritePlot(t *testing.T) {
	rs := results()
	rs[0].Measure.Series = []Point{{T: 10, Accepted: 50}, {T: 11, Accepted: 60, Rejected: 1}}
	rs[2].Measure.Series = []Point{{T: 0, Accepted: 60}, {T: 1, Accepted: 50, Rejected: 10}, {T: 2}, {T: 3, Accepted: 60}}
	var b bytes.Buffer
	if err := WritePlot(&b, 60, rs); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "<svg") {
		t.Errorf("WritePlot wrote no SVG: %.200s", b.String())
	}
	if err := WritePlot(&b, 60, nil); err == nil {
		t.Errorf("WritePlot(nil): no error, want one")
	}
}

// strictResults are a fixed run of three strict scenarios: one meets its
// targets, one misses its time target, and one has none.
func strictResults() []Result {
	t0 := time.Date(2026, 11, 23, 18, 0, 0, 0, time.UTC)
	proc := func(name string, n int64) Proc {
		return Proc{Name: name, SummaryOK: true, Conserved: true,
			Summary: Summary{Success: n, Total: n, AccountedFor: true},
			Outputs: Outputs{Lines: int(n), Distinct: int(n), ByOutcome: map[string]int{"success": int(n)}}}
	}
	three := []Proc{proc("p1", 200), proc("p2", 200), proc("p3", 200)}
	return []Result{{
		Scenario: named("strict-none"), Elements: 200, QuotaRate: 10, Procs: three,
		Measure: Measure{Accepted: 600, Rejected: 150, Waste: 0.2},
		First:   t0, LastAccepted: t0.Add(75 * time.Second),
	}, {
		Scenario: named("strict-redis"), Elements: 200, QuotaRate: 9, Procs: three,
		Measure: Measure{Accepted: 600, Rejected: 3, Waste: 0.005},
		First:   t0, LastAccepted: t0.Add(70 * time.Second),
	}, {
		Scenario: named("strict-local-one"), Elements: 600, QuotaRate: 9, Procs: []Proc{proc("p1", 600)},
		Measure: Measure{Accepted: 600, Waste: 0},
		First:   t0, LastAccepted: t0.Add(75 * time.Second),
	}}
}

func TestWriteReportStrict(t *testing.T) {
	h := Header{Command: "go run ./cmd/quotabench -scenarios strict", Machine: "2 cores",
		When: time.Date(2026, 11, 23, 18, 0, 0, 0, time.UTC), StrictPlot: "results-strict.svg"}
	tests := []struct {
		name         string
		results      []Result
		want, absent []string
	}{{
		name:    "strict only",
		results: strictResults(),
		want: []string{
			"    go run ./cmd/quotabench -scenarios strict\n",
			"## Against a strict limiter\n",
			"a GCRA at 10 calls a second with no burst, which refuses any call that comes less than 100ms after",
			"generate 600 elements in all",
			"Targets: strict-redis, waste ≤ 1 % and time ratio ≤ 1.1×; strict-local-one, waste ≤ 1 % and time ratio ≤ 1.08×; the others are reported only.",
			"![accepted and rejected per second, strict limiter](results-strict.svg)",
			"| strict-none: adaptive throttle alone | none (API 10/s) | 600 | 600 | 750 | 150 | 20 % | 1.250× (75.0 s ÷ 60.0 s) | report only | ✓ 600 lines for 600 elements |",
			"| strict-redis: Redis slots at 90 % of the API's rate | redis slots, 9/s (90 %) | 600 | 600 | 603 | 3 | 0.5 % | 1.050× (70.0 s ÷ 66.7 s) | waste ✓ 0.5 % (≤ 1 %), time ✓ 1.050× (≤ 1.1×) | ✓ 600 lines for 600 elements |",
			"| strict-local-one: one process, in-process slots at 90 % | local slots, 9/s (90 %) | 600 | 600 | 600 | 0 | 0 % | 1.125× (75.0 s ÷ 66.7 s) | waste ✓ 0 % (≤ 1 %), time ✗ 1.125× (≤ 1.08×) | ✓ 600 lines for 600 elements |",
			"| strict-local-one | p1 | 600 / 0 / 0 / 0 = 600 | 600 (600 / 0 / 0 / 0) | ✓ |",
		},
		absent: []string{"## Side by side", "## Faults", "## Reading the numbers", "Utilisation", "token bucket"},
	}, {
		name:    "beside the token-bucket scenarios",
		results: append(results(), strictResults()...),
		want: []string{
			"(token bucket, one second of burst)",
			"## Side by side\n",
			"## Faults\n",
			"## Against a strict limiter\n",
			"## Reading the numbers\n",
			"| redis: shared quota, Redis GCRA | redis, fail open | 995 | 5 |",
		},
		absent: []string{"| strict-redis: Redis slots at 90 % of the API's rate | redis, fail open"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteReport(&b, h, tt.results); err != nil {
				t.Fatal(err)
			}
			got := b.String()
			for _, want := range tt.want {
				if !strings.Contains(got, want) {
					t.Errorf("report lacks %q; got:\n%s", want, got)
				}
			}
			for _, no := range tt.absent {
				if strings.Contains(got, no) {
					t.Errorf("report has %q; got:\n%s", no, got)
				}
			}
		})
	}
}

func TestStrictQuota(t *testing.T) {
	procs := make([]Proc, 3)
	for _, tt := range []struct {
		r    Result
		want string
	}{
		{Result{Scenario: named("strict-none"), QuotaRate: 10, Procs: procs}, "none (API 10/s)"},
		{Result{Scenario: named("strict-redis-95"), QuotaRate: 9.5, Procs: procs}, "redis slots, 9.5/s (95 %)"},
		{Result{Scenario: named("strict-local"), QuotaRate: 9, Procs: procs}, "local slots, 3/s each (9/s, 90 %)"},
		{Result{Scenario: named("strict-local-one"), QuotaRate: 9, Procs: procs[:1]}, "local slots, 9/s (90 %)"},
		{Result{Scenario: named("strict-envoy"), QuotaRate: 9, Procs: procs}, "envoy, 9/s in 1 s windows (90 %)"},
	} {
		if got := strictQuota(tt.r, 10); got != tt.want {
			t.Errorf("strictQuota(%s) = %q, want %q", tt.r.Scenario.Name, got, tt.want)
		}
	}
}
