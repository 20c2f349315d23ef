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
