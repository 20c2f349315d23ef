package livebench

import (
	"context"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestTargetString(t *testing.T) {
	for _, tc := range []struct {
		t    target
		want string
	}{
		{target{metric: utilisation, limit: 0.97}, "utilisation ≥ 97 %"},
		{target{metric: waste, atMost: true, limit: 0.05}, "waste ≤ 5 %"},
		{target{metric: waste, atMost: true, limit: 0.025}, "waste ≤ 2.5 %"},
		{target{metric: recovery, atMost: true, limit: 10}, "recovery ≤ 10 s"},
		{target{metric: succeeded, limit: 1}, "every element succeeds"},
		{target{metric: succeeded, limit: 0.9}, "successes ≥ 90 %"},
		{target{metric: timeRatio, atMost: true, limit: 1.15}, "time ≤ 1.15 × ideal"},
		{target{metric: clientThrottled, atMost: true, limit: 0}, "nothing client-throttled"},
		{target{metric: steadyShare, limit: 0.95}, "from the 10th s ≥ 95 % of the quota"},
		{target{metric: runShare, limit: 0.9}, "over the run ≥ 90 % of the quota"},
		{target{metric: runRate, limit: 10}, "over the run ≥ 10/s"},
	} {
		if got := tc.t.String(); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}

func TestTargetMet(t *testing.T) {
	atLeast := target{metric: utilisation, limit: 0.97}
	atMost := target{metric: waste, atMost: true, limit: 0.05}
	for _, tc := range []struct {
		t     target
		value float64
		want  bool
	}{
		{atLeast, 0.97, true},
		{atLeast, 0.969, false},
		{atLeast, math.NaN(), false},
		{atMost, 0.05, true},
		{atMost, 0.051, false},
		{atMost, math.NaN(), false},
		{atMost, math.Inf(1), false},
	} {
		if got := tc.t.met(tc.value); got != tc.want {
			t.Errorf("%v met(%v): got %v, want %v", tc.t, tc.value, got, tc.want)
		}
	}
}

func TestValueNotMeasured(t *testing.T) {
	var r Result // nothing sent, no change, not bounded
	for _, m := range []metric{utilisation, waste, recovery, succeeded, timeRatio} {
		if v := r.value(m); !math.IsNaN(v) {
			t.Errorf("value(%v) of an empty result: got %v, want NaN", m, v)
		}
	}
	never := -1
	if v := (Result{Recovery: &never}).value(recovery); !math.IsInf(v, 1) {
		t.Errorf("value(recovery) of never: got %v, want +Inf", v)
	}
}

// gcraResult is a bounded result that meets every target but time.
func gcraResult(mode string) Result {
	return Result{Scenario: "gcra-600", Mode: mode, Measured: time.Date(2026, 11, 23, 17, 5, 0, 0, time.UTC),
		Accepted: 600, Rejected: 12, Waste: 12.0 / 612, Elements: 600, Success: 600, Elapsed: 70, Ideal: 60}
}

func TestVerdictsAndMarks(t *testing.T) {
	sc := scenarios[indexOf("gcra-600")]
	r := gcraResult("paced")
	if got, want := verdicts(sc, r), "every element succeeds: 100.0 % ✓; waste ≤ 5 %: 2.0 % ✓; time ≤ 1.15 × ideal: 1.167 ✗"; got != want {
		t.Errorf("verdicts:\n got %q\nwant %q", got, want)
	}
	if got, want := mark(sc, r, waste, "2.0 %"), "2.0 % ✓"; got != want {
		t.Errorf("mark(waste): got %q, want %q", got, want)
	}
	failed := r
	failed.Success, failed.ClientThrottled, failed.Elapsed = 5, 595, 6
	if got, want := mark(sc, failed, timeRatio, "0.10"), "0.10 ✗"; got != want {
		t.Errorf("mark(time) of a run that rejected its input: got %q, want %q", got, want)
	}
	if got, want := mark(sc, r, utilisation, "x"), "x"; got != want {
		t.Errorf("mark of a metric without a target: got %q, want %q", got, want)
	}
	steady := scenarios[indexOf("steady")]
	line := summaryLine(steady, Result{Mode: "sre", Accepted: 1450, Rejected: 1500, Capacity: 1450, Utilisation: 1, Waste: 0.508})
	for _, want := range []string{"steady", "sre", "accepted 1450 rejected 1500", "utilisation ≥ 97 %: 100.0 % ✓", "waste ≤ 3 %: 50.8 % ✗"} {
		if !strings.Contains(line, want) {
			t.Errorf("summaryLine: got %q, want it to contain %q", line, want)
		}
	}
}

func TestMerge(t *testing.T) {
	old := []Result{
		{Scenario: "gcra-600", Mode: "sre", Accepted: 1},
		{Scenario: "steady", Mode: "paced", Accepted: 2},
		{Scenario: "gone", Mode: "paced"},     // a scenario since removed
		{Scenario: "steady", Mode: "oldmode"}, // a mode since removed
		{Scenario: "gcra-600", Mode: "paced", Accepted: 3},
	}
	fresh := []Result{{Scenario: "gcra-600", Mode: "paced", Accepted: 4}, {Scenario: "steady", Mode: "sre", Accepted: 5}}
	got := merge(old, fresh)
	want := []Result{
		{Scenario: "steady", Mode: "paced", Accepted: 2},
		{Scenario: "steady", Mode: "sre", Accepted: 5},
		{Scenario: "gcra-600", Mode: "paced", Accepted: 4},
		{Scenario: "gcra-600", Mode: "sre", Accepted: 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("merge mismatch (-want +got):\n%s", diff)
	}
}

func TestResultsRoundTrip(t *testing.T) {
	rec := 3
	rs := []Result{gcraResult("paced"), {Scenario: "outage", Mode: "sre", Duration: "30s", Recovery: &rec, Capacity: 1000, Utilisation: 0.99}}
	got, err := decodeResults(encodeResults(rs))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rs, got); diff != "" {
		t.Errorf("round trip mismatch (-want +got):\n%s", diff)
	}
	if got, err := decodeResults([]byte("  \n")); err != nil || got != nil {
		t.Errorf("decodeResults(blank): got %v, %v, want nil, nil", got, err)
	}
	if _, err := decodeResults([]byte("{")); err == nil {
		t.Errorf("decodeResults({): got no error")
	}
}

func TestSelected(t *testing.T) {
	all, err := selected("")
	if err != nil || len(all) != len(scenarios) {
		t.Fatalf("selected(\"\"): got %d scenarios, %v, want all %d", len(all), err, len(scenarios))
	}
	two, err := selected("gcra-600, steady")
	if err != nil || len(two) != 2 || two[0].name != "gcra-600" || two[1].name != "steady" {
		t.Errorf("selected(gcra-600, steady): got %v, %v", two, err)
	}
	if _, err := selected("gcra-6"); err == nil || !strings.Contains(err.Error(), "gcra-600") {
		t.Errorf("selected(gcra-6): got %v, want an error listing the names", err)
	}
	// A family's name selects its scenarios, in order; a scenario's name
	// comes first where a family has the same (drift-window).
	for _, tc := range []struct {
		only string
		want []string
	}{
		{"gcra", []string{"gcra-600", "gcra-600-burst10"}},
		{"drift-window", []string{"drift-window"}},
		{"steady, gcra", []string{"steady", "gcra-600", "gcra-600-burst10"}},
		{"crossed", []string{"x-fixed20-2s-none", "x-fixed20-2s-ietf", "x-fixed20-2s-xrl", "x-fixed20-2s-openai",
			"x-fixed10-5s-none", "x-fixed10-5s-ietf", "x-fixed10-logn-none", "x-fixed10-logn-ietf",
			"x-fixed10-0s-ietf", "x-fixed10-0s-xrl", "x-fixed100-0s-ietf10"}},
	} {
		scs, err := selected(tc.only)
		if err != nil {
			t.Errorf("selected(%q): %v", tc.only, err)
			continue
		}
		var got []string
		for _, sc := range scs {
			got = append(got, sc.name)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("selected(%q) (-want +got):\n%s", tc.only, diff)
		}
	}
}

func TestScenariosAreConsistent(t *testing.T) {
	seen := map[string]bool{}
	for _, sc := range scenarios {
		if seen[sc.name] {
			t.Errorf("scenario %q twice", sc.name)
		}
		seen[sc.name] = true
		var f *family
		for i := range families {
			if families[i].name == sc.family {
				f = &families[i]
			}
		}
		switch {
		case f == nil:
			t.Errorf("%s: no family %q", sc.name, sc.family)
		case f.bounded != sc.bounded():
			t.Errorf("%s: bounded %v in family %q (bounded %v)", sc.name, sc.bounded(), f.name, f.bounded)
		case !sc.bounded() && sc.rate <= 0:
			t.Errorf("%s: a streaming scenario without a rate", sc.name)
		case sc.windows > 0 && sc.server.WindowJitter != 0:
			// Such a run is measured over whole windows from the server's
			// start, where drifting windows do not start.
			t.Errorf("%s: measured in windows, which drift", sc.name)
		case len(sc.targets) == 0:
			t.Errorf("%s: no targets", sc.name)
		}
		for _, m := range sc.modes {
			if !slices.Contains(Modes, m) {
				t.Errorf("%s: runs in mode %q, not one of %v", sc.name, m, Modes)
			}
		}
	}
}

func TestWriteReport(t *testing.T) {
	rec := 2
	results := merge(nil, []Result{
		{Scenario: "steady", Mode: "paced", Duration: "30s", Measured: time.Date(2026, 11, 23, 17, 1, 0, 0, time.UTC),
			Accepted: 1440, Rejected: 30, ClientThrottled: 4200, Capacity: 1450, Utilisation: 1440.0 / 1450, Waste: 30.0 / 1470},
		{Scenario: "outage", Mode: "sre", Duration: "30s", Measured: time.Date(2026, 11, 23, 17, 3, 0, 0, time.UTC),
			Accepted: 900, Rejected: 1000, Capacity: 1000, Utilisation: 0.9, Waste: 1000.0 / 1900, Recovery: &rec},
		gcraResult("paced"),
	})
	var b strings.Builder
	writeReport(&b, 30*time.Second, results)
	got := b.String()
	for _, want := range []string{
		"`go run ./cmd/livebench -duration 30s -out docs/live`",
		"## Token bucket, quota changing mid-run",
		"Measured 2026-11-23 17:01–17:03 UTC; the source ran 30s.",
		"| steady | paced | 1440 | 30 | 4200 | 99.3 % ✓ | 2.0 % ✓ | – |",
		"| outage | sre | 900 | 1000 | 0 | 90.0 % ✗ | 52.6 % ✗ | 2 s ✓ |",
		"- **steady**: offered 4× a 50/s quota throughout. Target: utilisation ≥ 97 %, waste ≤ 3 %.",
		"## A backend shared with an uncontrolled client",
		"| gcra-600 | paced | 600 | 600 ✓ | 0 | 0 | 0 | 612 | 2.0 % ✓ | 70.0 s | 60.0 s | 1.167 ✗ |",
		"- **gcra-600**: 600 elements, GCRA 10/s with no burst, default flags. Target: every element succeeds, waste ≤ 5 %, time ≤ 1.15 × ideal.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report does not contain %q:\n%s", want, got)
		}
	}
	// Families with no results say so: competitor, per-minute, window-latency, drift-window, slow-api, crossed, priority.
	if got, want := strings.Count(got, "Not run yet."), 7; got != want {
		t.Errorf("report: got %d families not run, want %d", got, want)
	}
}

func TestRunRewritesFromResults(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "results.json"), encodeResults([]Result{gcraResult("paced")}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Run(context.Background(), Settings{Scenarios: "-", Modes: "paced,sre", Duration: 30 * time.Second, Competitor: 1, Out: dir}, io.Discard); err != nil {
		t.Fatalf("Run(-): %v", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "results.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "| gcra-600 | paced | 600 | 600 ✓ |"; !strings.Contains(string(b), want) {
		t.Errorf("results.md does not contain %q:\n%s", want, b)
	}
}

func TestWritePriorityReport(t *testing.T) {
	tiers := func(highSucc int64, highP99 float64) []TierResult {
		return []TierResult{
			{Tier: tierHigh, Sent: 600, Succeeded: highSucc, Waits: highSucc, MedianWait: 1.02, P99Wait: highP99},
			{Tier: tierLow, Sent: 2400, Succeeded: 1050, Expired: 1320, Other: 30, Waits: 1050, MedianWait: 5.6, P99Wait: 6.3},
		}
	}
	measured := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
	results := merge(nil, []Result{
		{Scenario: "priority-2x", Mode: "paced", Duration: "30s", Measured: measured,
			Accepted: 1650, Rejected: 30, Waste: 30.0 / 1680, Tiers: tiers(600, 2.5)},
		{Scenario: "priority-2x-off", Mode: "paced", Duration: "30s", Measured: measured,
			Accepted: 1650, Rejected: 30, Waste: 30.0 / 1680, Tiers: tiers(250, 6.2)},
	})
	var b strings.Builder
	writeReport(&b, 30*time.Second, results)
	got := b.String()
	for _, want := range []string{
		"## Priority tiers at twice the quota",
		"| scenario | mode | tier | sent | succeeded | expired | other | median wait | p99 wait | waste |",
		"| priority-2x | paced | high | 600 | 600 ✓ | 0 | 0 | 1.02 s | 2.50 s ✓ | 1.8 % ✓ |",
		"| priority-2x | paced | low | 2400 | 1050 | 1320 | 30 | 5.60 s | 6.30 s |  |",
		"| priority-2x-off | paced | high | 600 | 250 | 0 | 0 | 1.02 s | 6.20 s | 1.8 % ✓ |",
		"- **priority-2x**: offered 100/s, twice a 50/s quota: 20/s high, 80/s low, `--priority=json:tier --max_wait 5s`. " +
			"Target: every high element succeeds, high p99 wait ≤ low median wait, waste ≤ 5 %.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report does not contain %q:\n%s", want, got)
		}
	}
	sc := scenarios[indexOf("priority-2x")]
	if got, want := summaryLine(sc, results[0]), "high p99 wait ≤ low median wait: 0.45 ✓"; !strings.Contains(got, want) {
		t.Errorf("summary line %q does not contain %q", got, want)
	}
}
