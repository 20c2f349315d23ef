package livebench

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/beamthrottle/beamthrottle/pipeline"
	"github.com/beamthrottle/beamthrottle/testserver"
)

func TestCapacity(t *testing.T) {
	at := func(sec int64, ms int) time.Time { return time.Unix(sec, int64(ms)*int64(time.Millisecond)) }
	for _, tc := range []struct {
		name  string
		steps []rateStep
		sec   int64
		want  float64
	}{
		{"before the first step", []rateStep{{at(10, 0), 50}}, 9, 0},
		{"a whole second", []rateStep{{at(10, 0), 50}}, 11, 50},
		{"starts mid-second", []rateStep{{at(10, 250), 40}}, 10, 30},
		{"rises mid-second", []rateStep{{at(0, 0), 50}, {at(10, 500), 100}}, 10, 75},
		{"after the rise", []rateStep{{at(0, 0), 50}, {at(10, 500), 100}}, 11, 100},
		{"outage over part of two seconds", []rateStep{{at(0, 0), 50}, {at(10, 800), 0}, {at(11, 200), 50}}, 10, 40},
		{"outage ends", []rateStep{{at(0, 0), 50}, {at(10, 800), 0}, {at(11, 200), 50}}, 11, 40},
		{"no steps", nil, 10, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := capacity(tc.steps, tc.sec); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("capacity(%v, %d): got %v, want %v", tc.steps, tc.sec, got, tc.want)
			}
		})
	}
}

// competitor returns the Clients of a second in which the competitor got
// accepted and rejected answers.
func competitorCounts(accepted, rejected int64) map[string]testserver.Counts {
	return map[string]testserver.Counts{competitorName: {Accepted: accepted, Rejected: rejected}}
}

func TestMeasureStream(t *testing.T) {
	intp := func(n int) *int { return &n }
	for _, tc := range []struct {
		name string
		run  streamRun
		want Result
	}{
		{
			name: "steady, seconds outside the span and a gap left out",
			run: streamRun{
				series: []testserver.Second{
					{T: 99, Accepted: 100, Rejected: 100}, // the first second: left out
					{T: 100, Accepted: 50, Rejected: 2, ClientThrottled: 140},
					{T: 102, Accepted: 48, Rejected: 1, Errors: 1, ClientThrottled: 150},
					{T: 103, Accepted: 500}, // after the span
				},
				steps: []rateStep{{time.Unix(90, 0), 50}}, offered: 200, from: 100, to: 103,
			},
			want: Result{Accepted: 98, Rejected: 3, Errors: 1, ClientThrottled: 290, Seconds: 3,
				Capacity: 150, Utilisation: 98.0 / 150, Waste: 3.0 / 101},
		},
		{
			name: "offered below the quota caps the capacity",
			run: streamRun{
				series: []testserver.Second{{T: 100, Accepted: 20}, {T: 101, Accepted: 20}},
				steps:  []rateStep{{time.Unix(90, 0), 50}}, offered: 20, from: 100, to: 102,
			},
			want: Result{Accepted: 40, Seconds: 2, Capacity: 40, Utilisation: 1},
		},
		{
			name: "the competitor's calls are taken out",
			run: streamRun{
				series: []testserver.Second{
					{T: 100, Accepted: 50, Rejected: 10, Clients: competitorCounts(30, 5)},
					{T: 101, Accepted: 50, Rejected: 20, Clients: competitorCounts(45, 5)},
					{T: 102, Accepted: 60, Rejected: 20, Clients: competitorCounts(60, 5)}, // over the quota: nothing left
				},
				steps: []rateStep{{time.Unix(90, 0), 50}}, offered: 200, from: 100, to: 103,
			},
			want: Result{Accepted: 25, Rejected: 35, Seconds: 3, CompetitorAccepted: 135, CompetitorRejected: 15,
				Capacity: 25, Utilisation: 1, Waste: 35.0 / 60},
		},
		{
			name: "recovery after a rise",
			run: streamRun{
				series: []testserver.Second{
					{T: 100, Accepted: 50}, {T: 101, Accepted: 50}, {T: 102, Accepted: 60},
					{T: 103, Accepted: 95}, {T: 104, Accepted: 80}, {T: 105, Accepted: 90},
					{T: 106, Accepted: 91}, {T: 107, Accepted: 100},
				},
				steps:   []rateStep{{time.Unix(90, 0), 50}, {time.Unix(102, 0), 100}},
				offered: 200, from: 100, to: 108,
				changeAt: time.Unix(102, 0), recoverTo: 100,
			},
			want: Result{Accepted: 616, Seconds: 8, Capacity: 700, Utilisation: 616.0 / 700, Recovery: intp(3)},
		},
		{
			name: "never recovered",
			run: streamRun{
				series:  []testserver.Second{{T: 100, Accepted: 50}, {T: 101, Accepted: 95}, {T: 102, Accepted: 95}},
				steps:   []rateStep{{time.Unix(90, 0), 100}},
				offered: 200, from: 100, to: 103,
				changeAt: time.Unix(101, 0), recoverTo: 100,
			},
			want: Result{Accepted: 240, Seconds: 3, Capacity: 300, Utilisation: 0.8, Recovery: intp(-1)},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.run.measure()
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-9 })); diff != "" {
				t.Errorf("measure() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFirstPipelineSecond(t *testing.T) {
	series := []testserver.Second{
		{T: 5, ClientThrottled: 3},
		{T: 6, Accepted: 40, Clients: competitorCounts(40, 0)},
		{T: 7, Accepted: 50, Rejected: 3, Clients: competitorCounts(49, 3)},
	}
	if got, ok := firstPipelineSecond(series); !ok || got != 7 {
		t.Errorf("firstPipelineSecond: got %d, %v, want 7, true", got, ok)
	}
	if _, ok := firstPipelineSecond(series[:2]); ok {
		t.Errorf("firstPipelineSecond of the competitor alone: got a second, want none")
	}
}

func TestMeasureBounded(t *testing.T) {
	sc := scenario{name: "gcra-600", server: testserver.Config{Quota: 10}, elements: 600, targets: boundedTargets}
	sum := pipeline.Summary{Success: 590, ClientThrottled: 6, ServerThrottled: 3, Errors: 1}
	st := testserver.Stats{Accepted: 590, Rejected: 31, Errors: 1}
	got := measureBounded(sc, sum, st, 66*time.Second)
	want := Result{Accepted: 590, Rejected: 31, Errors: 1, Waste: 31.0 / 621, Elements: 600, Success: 590,
		ClientThrottled: 6, ServerThrottled: 3, ErrorElements: 1, Elapsed: 66, Ideal: 60}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("measureBounded mismatch (-want +got):\n%s", diff)
	}
	if got, want := got.value(succeeded), 590.0/600; got != want {
		t.Errorf("value(succeeded): got %v, want %v", got, want)
	}
	if got, want := got.value(timeRatio), 1.1; math.Abs(got-want) > 1e-9 {
		t.Errorf("value(timeRatio): got %v, want %v", got, want)
	}
}

func TestScenarioTimes(t *testing.T) {
	for _, tc := range []struct {
		name      string
		wantIdeal time.Duration
	}{
		{"gcra-600", 60 * time.Second},
		{"gcra-600-burst10", 60 * time.Second},
		{"window-latency", 40 * time.Second},
	} {
		if got := scenarios[indexOf(tc.name)].ideal(); got != tc.wantIdeal {
			t.Errorf("%s: ideal() = %v, want %v", tc.name, got, tc.wantIdeal)
		}
	}
	minute := scenarios[indexOf("minute-retry-after")]
	if got, want := minute.runFor(30*time.Second), 36*time.Second; got != want {
		t.Errorf("minute-retry-after: runFor(30s) = %v, want %v", got, want)
	}
	if got, want := minute.quotaRate(), 10.0; got != want {
		t.Errorf("minute-retry-after: quotaRate() = %v, want %v (DLP's 600/min)", got, want)
	}
	if got, want := scenarios[indexOf("steady")].runFor(30*time.Second), 30*time.Second; got != want {
		t.Errorf("steady: runFor(30s) = %v, want %v", got, want)
	}
	// Drifting windows of 4 s plus up to 1 s last 4.5 s on average: 99 per
	// 4.5 s is 22/s, and 2,000 elements take 90.9 s at that rate.
	drift := scenarios[indexOf("drift-window")]
	if got, want := drift.quotaRate(), 22.0; got != want {
		t.Errorf("drift-window: quotaRate() = %v, want %v", got, want)
	}
	if got, want := drift.ideal(), 2000*time.Second/22; got-want > time.Microsecond || want-got > time.Microsecond {
		t.Errorf("drift-window: ideal() = %v, want %v", got, want)
	}
}

// TestTimeNeedsTheSuccessTarget checks that a bounded run's time is
// judged only once its successes met the scenario's success target: every
// element for gcra-600, 99 % for drift-window.
func TestTimeNeedsTheSuccessTarget(t *testing.T) {
	timeTarget := func(sc scenario) target {
		for _, t := range sc.targets {
			if t.metric == timeRatio {
				return t
			}
		}
		panic(sc.name + " has no time target")
	}
	for _, tc := range []struct {
		scenario string
		success  int64
		want     bool
	}{
		{"gcra-600", 600, true},
		{"gcra-600", 599, false},
		{"drift-window", 2000, true},
		{"drift-window", 1980, true},
		{"drift-window", 1979, false},
	} {
		sc := scenarios[indexOf(tc.scenario)]
		r := Result{Elements: int64(sc.elements), Success: tc.success, Ideal: sc.ideal().Seconds()}
		r.Elapsed = 1.05 * r.Ideal
		if got := sc.meets(r, timeTarget(sc)); got != tc.want {
			t.Errorf("%s, %d of %d succeeded, time 1.05 × ideal: meets(time) = %v, want %v", tc.scenario, tc.success, sc.elements, got, tc.want)
		}
	}
}
