package quotabench

import (
	"bytes"
	"fmt"
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
			"| strict-none: adaptive throttle alone | none (API 10/s) | 600 | 600 | 750 | 150 | 20 % | 1.250× (75.0 s ÷ 60.0 s) | – | report only | ✓ 600 lines for 600 elements |",
			"| strict-redis: Redis slots at 90 % of the API's rate | redis slots, 9/s (90 %) | 600 | 600 | 603 | 3 | 0.5 % | 1.050× (70.0 s ÷ 66.7 s) | – | waste ✓ 0.5 % (≤ 1 %), time ✓ 1.050× (≤ 1.1×) | ✓ 600 lines for 600 elements |",
			"| strict-local-one: one process, in-process slots at 90 % | local slots, 9/s (90 %) | 600 | 600 | 600 | 0 | 0 % | 1.125× (75.0 s ÷ 66.7 s) | – | waste ✓ 0 % (≤ 1 %), time ✗ 1.125× (≤ 1.08×) | ✓ 600 lines for 600 elements |",
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

// priorityResults are a fixed run of the priority scenarios: the high
// process alone, then beside the low one with a share of 0.9 that misses
// its target, 0.95 that meets it, and no share, which has none.
func priorityResults() []Result {
	proc := func(name string, success, throttled int64) Proc {
		n := success + throttled
		return Proc{Name: name, SummaryOK: true, Conserved: true,
			Summary: Summary{Success: success, ClientThrottled: throttled, Total: n},
			Outputs: Outputs{Lines: int(n), Distinct: int(n), ByOutcome: map[string]int{"success": int(success), "client_throttled": int(throttled)}}}
	}
	// The steady window is 30 s long: high and low are what each had
	// accepted in it, of 270 offered.
	r := func(name string, high, low int64) Result {
		return Result{
			Scenario: named(name), Elements: 361, Rate: 9, QuotaRate: 9,
			Measure: Measure{Accepted: high + low + 60, Rejected: 1, Waste: 1 / float64(high+low+61)},
			Procs:   []Proc{proc("high", high+40, 321-high), proc("low", low+20, 341-low)},
			Tiers: []TierShare{{Tier: "high", Offered: 361, Accepted: high + 40, Rejected: 1, SteadyAccepted: high},
				{Tier: "low", Offered: 361, Accepted: low + 20, SteadyAccepted: low}},
			SteadyFrom: 1000, SteadyTo: 1029,
		}
	}
	alone := r("priority-high-alone", 243, 0)
	alone.Procs, alone.Tiers = alone.Procs[:1], alone.Tiers[:1]
	alone.Measure = Measure{Accepted: 283}
	return []Result{alone, r("priority-shares", 216, 27), r("priority-shares-95", 244, 13), r("priority-no-share", 120, 125)}
}

func TestWriteReportPriority(t *testing.T) {
	h := Header{Command: "make quotabench QUOTA_SCENARIOS=priority", Machine: "2 cores",
		When: time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)}
	tests := []struct {
		name         string
		results      []Result
		want, absent []string
	}{{
		name:    "priority only",
		results: priorityResults(),
		want: []string{
			"    make quotabench QUOTA_SCENARIOS=priority\n",
			"## Priority shares across processes\n",
			"at 9 calls a second (90 % of the API's rate) on one `--quota_key`, against a strict limiter: a GCRA at 10 calls a second with no burst",
			"9 elements a second each, for 40s",
			"the whole seconds from 5s after the first timed elements were published",
			"| priority-high-alone: the high process alone, --quota_high_share=0.9 | 0.9 | 8.10/s = 90 % | – | 90 % over 30 s | 283 ÷ 361 = 78.39 % | – | 1 / – | 0 % | report only | ✓ 361 lines for 361 elements |",
			"| priority-shares: high and low process, --quota_high_share=0.9 | 0.9 | 7.20/s = 80 % | 0.90/s = 10 % | 90 % over 30 s | 256 ÷ 361 = 70.91 % | 47 ÷ 361 = 13.02 % | 1 / 0 | 0.33 % | ✗ 80 % (≥ 90 %) | ✓ 722 lines for 722 elements |",
			"| priority-shares-95: high and low process, --quota_high_share=0.95 | 0.95 | 8.13/s = 90.37 % | 0.43/s = 4.81 % | 95.19 % over 30 s |",
			"| ✓ 90.37 % (≥ 90 %) |",
			"| priority-no-share: high and low process, no shares | none | 4.00/s = 44.44 % | 4.17/s = 46.3 % | 90.74 % over 30 s | 160 ÷ 361 = 44.32 % | 145 ÷ 361 = 40.17 % |",
			"| report only |",
			"Target (the high process has ≥ 90 % of its demand accepted, steady, beside the low one): met by priority-shares-95 (90.37 %); missed by priority-shares (80 %).",
			"| priority-shares | high | 256 / 105 / 0 / 0 = 361 | 361 (256 / 105 / 0 / 0) | ✓ |",
			"the harness's count of what it published",
		},
		absent: []string{"## Side by side", "## Against a strict limiter", "## Reading the numbers", "token bucket"},
	}, {
		name:    "after the strict scenarios",
		results: append(strictResults(), priorityResults()...),
		want: []string{
			"## Against a strict limiter\n",
			"on one `--quota_key`, against the strict limiter above.",
			"## Priority shares across processes\n",
		},
		absent: []string{"| priority-shares: high and low process, --quota_high_share=0.9 | redis slots"},
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

// TestWriteReportRuns checks the report's header when its rows come from
// one run, and from several (a run of some scenarios keeps the others).
func TestWriteReportRuns(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 13, 0, 0, time.UTC)
	t1 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	h := Header{Command: "make quotabench QUOTA_SCENARIOS=priority", Machine: "2 cores", When: t1}
	kept := func(rs []Result) []Result {
		for i := range rs {
			rs[i].Command, rs[i].When = "go run ./cmd/quotabench -out /tmp/qball", t0
		}
		return rs
	}
	tests := []struct {
		name         string
		results      []Result
		want, absent []string
	}{{
		name:    "one run",
		results: priorityResults(),
		want:    []string{"Made by:\n\n    make quotabench QUOTA_SCENARIOS=priority\n\nMeasured 2026-11-27 09:00 UTC on 2 cores. One run"},
		absent:  []string{"several runs"},
	}, {
		name:    "two runs, the latest first",
		results: append(kept(strictResults()), priorityResults()...),
		want: []string{
			"Made by several runs, the latest first;",
			"- 2026-11-27 09:00 UTC: `make quotabench QUOTA_SCENARIOS=priority` (priority-high-alone, priority-shares, priority-shares-95, priority-no-share)\n" +
				"- 2026-11-26 12:13 UTC: `go run ./cmd/quotabench -out /tmp/qball` (strict-none, strict-redis, strict-local-one)\n",
			"Measured on 2 cores. Each row is one run",
		},
		absent: []string{"Made by:\n"},
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

// crossedResults are the crossed family's rows: the first meets its
// targets but time; the second, killed at its deadline, misses them all.
func crossedResults() []Result {
	t0 := time.Date(2026, 12, 7, 19, 0, 0, 0, time.UTC)
	proc := func(name string, n int64) Proc {
		return Proc{Name: name, SummaryOK: true, Conserved: true,
			Summary: Summary{Success: n, Total: n, AccountedFor: true},
			Outputs: Outputs{Lines: int(n), Distinct: int(n), ByOutcome: map[string]int{"success": int(n)}}}
	}
	var eight, killed []Proc
	for i := range 8 {
		eight = append(eight, proc(fmt.Sprintf("p%d", i+1), 150))
		killed = append(killed, Proc{Name: fmt.Sprintf("p%d", i+1)})
	}
	return []Result{{
		Scenario: named("x-8p-fixed600m-2s-ietf"), Elements: 150, QuotaRate: 10, Procs: eight,
		Measure: Measure{Accepted: 1200, Rejected: 6, Waste: 6.0 / 1206},
		First:   t0, LastAccepted: t0.Add(150 * time.Second),
	}, {
		Scenario: named("x-8p-fixed600m-0s-none"), Elements: 150, QuotaRate: 10, Procs: killed,
		Measure: Measure{Accepted: 1100, Rejected: 20, Waste: 20.0 / 1120},
		First:   t0, LastAccepted: t0.Add(100 * time.Second), TimedOut: true,
	}}
}

func TestWriteReportCrossed(t *testing.T) {
	h := Header{Command: "make quotabench QUOTA_SCENARIOS=crossed", Machine: "2 cores", When: time.Date(2026, 12, 7, 19, 0, 0, 0, time.UTC)}
	var b bytes.Buffer
	if err := WriteReport(&b, h, crossedResults()); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{
		"## Crossed: latency, limiter and headers, several processes\n",
		"Targets: x-8p-fixed600m-2s-ietf, every element succeeds, waste ≤ 1 %, time ratio ≤ 1.1×; " +
			"x-8p-fixed600m-0s-none, waste ≤ 5 %, rate ≥ 95 % of the quota.",
		"| x-8p-fixed600m-2s-ietf: fixed window 600/min, 2 s answers, refusals at once, IETF RateLimit headers, 8 processes × 150 | " +
			"none (window 600/min) | 1200 | 1200 | 1206 | 6 | 0.5 % | 1.250× (150.0 s ÷ 120.0 s) | – | " +
			"success ✓ 1200 of 1200, waste ✓ 0.5 % (≤ 1 %), time ✗ 1.250× (≤ 1.1×) | ✓ 1200 lines for 1200 elements |",
		"| 1200 | 0 | 1120 | 20 | 1.79 % | 0.833× (100.0 s ÷ 120.0 s) | – | " +
			"waste ✓ 1.79 % (≤ 5 %), rate ✗ 110 % (≥ 95 %), ✗ stopped at the deadline | ✗ 0 lines for 1200 elements |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q; got:\n%s", want, got)
		}
	}
	if strings.Contains(got, "## Against a window that advertises") {
		t.Errorf("the crossed rows are in the advertised section:\n%s", got)
	}
}

// TestCrossedVerdicts checks the crossed family's targets on results built
// by hand.
func TestCrossedVerdicts(t *testing.T) {
	rs := crossedResults()
	ietf, bare := rs[0], rs[1]
	for _, tc := range []struct {
		name string
		v    Verdict
		want bool
	}{
		{"every element succeeded", ietf.SuccessVerdict(), true},
		{"waste 0.5 % ≤ 1 %", ietf.WasteVerdict(), true},
		{"time 1.25× > 1.1×", ietf.TimeVerdict(), false},
		{"killed: not every element succeeded", bare.SuccessVerdict(), false},
		{"waste 1.8 % ≤ 5 %", bare.WasteVerdict(), true},
		{"killed: the rate does not count", bare.RateVerdict(), false},
	} {
		if tc.v.OK != tc.want {
			t.Errorf("%s: got %v, want OK %v", tc.name, tc.v, tc.want)
		}
	}
	bare.TimedOut = false
	if v := bare.RateVerdict(); !v.OK {
		t.Errorf("1,100 accepted in 100 s at 10/s: got %v, want ✓", v)
	}
	bare.LastAccepted = bare.First.Add(116 * time.Second) // 1,100 ÷ 116 s = 9.48/s
	if v := bare.RateVerdict(); v.OK {
		t.Errorf("1,100 accepted in 116 s at 10/s: got %v, want ✗", v)
	}
	if got, want := (Result{Measure: Measure{Accepted: 600}, QuotaRate: 10,
		First: time.Unix(0, 0), LastAccepted: time.Unix(80, 0)}).RateShare(), 0.75; got != want {
		t.Errorf("RateShare: got %v, want %v", got, want)
	}
}
