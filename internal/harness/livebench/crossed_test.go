package livebench

import (
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/testserver"
)

func TestRatesOf(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	// sec is second 1000+i with n of the pipeline's requests accepted and
	// other of another client's.
	sec := func(i, n, other int64) testserver.Second {
		return testserver.Second{T: 1000 + i, Accepted: n + other, Clients: map[string]testserver.Counts{
			crossedClient: {Accepted: n}, "other": {Accepted: other}}}
	}
	// A run at 10/s from second 0.5 to second 29.9, 5 in its last second.
	var steady []testserver.Second
	for i := range int64(29) {
		steady = append(steady, sec(i, 10, 3))
	}
	steady = append(steady, sec(29, 5, 0))
	for _, tc := range []struct {
		name          string
		series        []testserver.Second
		span          testserver.Span
		steady        float64
		steadySeconds int
		run           float64
		spanS         float64
	}{
		{"steady, the last second counted whole", steady, testserver.Span{First: at(0.5), LastAccepted: at(29.9)},
			(19*10 + 5) / 20.0, 20, 295 / 29.4, 29.4},
		{"slow first ten seconds left out",
			[]testserver.Second{sec(0, 1, 0), sec(5, 1, 0), sec(10, 20, 0), sec(11, 20, 0)},
			testserver.Span{First: at(0), LastAccepted: at(11.5)}, 20, 2, 42 / 11.5, 11.5},
		{"an empty second counts", []testserver.Second{sec(0, 5, 0), sec(10, 8, 0), sec(12, 4, 0)},
			testserver.Span{First: at(0.25), LastAccepted: at(12.25)}, 4, 3, 17 / 12.0, 12},
		{"over before the 10th second", []testserver.Second{sec(0, 10, 0), sec(5, 10, 0)},
			testserver.Span{First: at(0), LastAccepted: at(5)}, 0, 0, 4, 5},
		{"nothing accepted", []testserver.Second{{T: 1000, Rejected: 3}},
			testserver.Span{First: at(0)}, 0, 0, 0, 0},
		{"no request", nil, testserver.Span{}, 0, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ratesOf(tc.series, tc.span, crossedClient)
			near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
			if !near(got.steady, tc.steady) || got.steadySeconds != tc.steadySeconds || !near(got.run, tc.run) ||
				!near(got.span.Seconds(), tc.spanS) {
				t.Errorf("got steady %v over %d s, run %v over %v; want %v over %d s, %v over %vs",
					got.steady, got.steadySeconds, got.run, got.span, tc.steady, tc.steadySeconds, tc.run, tc.spanS)
			}
		})
	}
}

func TestCrossedDeadline(t *testing.T) {
	for _, tc := range []struct {
		name   string
		heldTo float64
		want   time.Duration
	}{
		// 1.4 × 1,200 ÷ 20/s = 84 s, plus 2 s and 15 s.
		{"x-fixed20-2s-ietf", 20, 101 * time.Second},
		{"x-fixed10-5s-none", 10, 104 * time.Second},
		// The lognormal's p99, 20 s, for its latency.
		{"x-fixed10-logn-ietf", 10, 119 * time.Second},
		{"x-fixed10-0s-xrl", 10, 99 * time.Second},
		// Held to the advertised 10/s, not the 100/s enforced: 1.4 × 100 s.
		{"x-fixed100-0s-ietf10", 10, 155 * time.Second},
		{"gcra-600", 10, 0}, // no bound
	} {
		sc := scenarios[indexOf(tc.name)]
		if got := sc.heldTo(); got != tc.heldTo {
			t.Errorf("%s: heldTo() = %v, want %v", tc.name, got, tc.heldTo)
		}
		if got := sc.deadline(); got != tc.want {
			t.Errorf("%s: deadline() = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestCrossedScenarios checks what every crossed row shares: a fixed
// window of 1 s refusing at once, bounded, paced, bounded in time, and the
// waste target of its headers.
func TestCrossedScenarios(t *testing.T) {
	n := 0
	for _, sc := range scenarios {
		if !sc.isCrossed() {
			continue
		}
		n++
		c := sc.server
		if c.Mode != testserver.FixedWindow || c.Period != time.Second || !c.RefuseAtOnce || sc.elements == 0 ||
			sc.bound != crossedBound || len(sc.modes) != 1 || sc.modes[0] != "paced" {
			t.Errorf("%s: server %+v, %d elements, bound %v, modes %v", sc.name, c, sc.elements, sc.bound, sc.modes)
		}
		if !strings.HasPrefix(sc.name, "x-") {
			t.Errorf("%s: want a name beginning x-", sc.name)
		}
		for _, tg := range sc.targets {
			want := 0.02
			if c.Advertise != testserver.AdvertiseNone {
				want = 0.01
			}
			if tg.metric == waste && tg.limit != want {
				t.Errorf("%s (advertise %q): waste ≤ %v, want ≤ %v", sc.name, c.Advertise, tg.limit, want)
			}
		}
	}
	if n != 11 {
		t.Errorf("%d crossed scenarios, want 11", n)
	}
}

// TestCrossedTargets checks each target of a crossed row on results built
// by hand: x-fixed20-2s-ietf holds 1,200 elements at 20/s.
func TestCrossedTargets(t *testing.T) {
	sc := scenarios[indexOf("x-fixed20-2s-ietf")]
	good := Result{Elements: 1200, Success: 1200, Accepted: 1200, Rejected: 6, Waste: 6.0 / 1206, QuotaRate: 20,
		SteadyRate: 19.2, SteadySeconds: 50, RunRate: 18.2, Span: 1200 / 18.2}
	type want struct{ succeeded, clientThrottled, waste, steady, run bool }
	for _, tc := range []struct {
		name string
		edit func(*Result)
		want want
	}{
		{"every target met", func(*Result) {}, want{true, true, true, true, true}},
		{"95 % and 90 % exactly", func(r *Result) { r.SteadyRate, r.RunRate = 19, 18 }, want{true, true, true, true, true}},
		{"the crawl", func(r *Result) { r.SteadyRate, r.RunRate = 1.4, 1.3 }, want{true, true, true, false, false}},
		{"a 429 too many", func(r *Result) { r.Rejected, r.Waste = 13, 13.0/1213 }, want{true, true, false, true, true}},
		{"one client-throttled", func(r *Result) { r.Success, r.ClientThrottled = 1199, 1 },
			want{false, false, true, false, false}},
		{"stopped at the deadline with every element through", func(r *Result) { r.Stopped = true },
			want{true, true, true, false, false}},
		{"not measured: ended before its 10th second", func(r *Result) { r.SteadySeconds = 0 },
			want{true, true, true, false, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := good
			tc.edit(&r)
			got := map[metric]bool{}
			for _, tg := range sc.targets {
				got[tg.metric] = sc.meets(r, tg)
			}
			if g := (want{got[succeeded], got[clientThrottled], got[waste], got[steadyShare], got[runShare]}); g != tc.want {
				t.Errorf("got %+v, want %+v", g, tc.want)
			}
		})
	}

	// The advertised rate's row: at least 10/s over the run.
	adv := scenarios[indexOf("x-fixed100-0s-ietf10")]
	for _, tc := range []struct {
		run  float64
		want bool
	}{{10, true}, {9.9, false}, {40, true}} {
		r := Result{Elements: 1000, Success: 1000, QuotaRate: 100, RunRate: tc.run, Span: 1000 / tc.run}
		if got := adv.meets(r, adv.targets[0]); got != tc.want {
			t.Errorf("x-fixed100-0s-ietf10 at %v/s: meets(%v) = %v, want %v", tc.run, adv.targets[0], got, tc.want)
		}
	}
}

func TestWriteCrossedReport(t *testing.T) {
	measured := time.Date(2026, 12, 7, 19, 0, 0, 0, time.UTC)
	results := merge(nil, []Result{
		{Scenario: "x-fixed20-2s-ietf", Mode: "paced", Measured: measured, Accepted: 1200, Rejected: 4, Waste: 4.0 / 1204,
			Elements: 1200, Success: 1200, Elapsed: 66.5, Ideal: 60, DelayP99: 2, Unloaded: 2, QuotaRate: 20,
			SteadyRate: 19.5, SteadySeconds: 50, RunRate: 19, Span: 1200 / 19.0},
		{Scenario: "x-fixed20-2s-openai", Mode: "paced", Measured: measured, Accepted: 130, Rejected: 0,
			Elements: 1200, Success: 130, ClientThrottled: 1070, Elapsed: 101.2, Ideal: 60, DelayP99: 2, Unloaded: 2,
			QuotaRate: 20, SteadyRate: 1.3, SteadySeconds: 80, RunRate: 1.4, Span: 92, Stopped: true},
		{Scenario: "x-fixed100-0s-ietf10", Mode: "paced", Measured: measured, Accepted: 1000, Rejected: 0,
			Elements: 1000, Success: 1000, Elapsed: 104, Ideal: 10, QuotaRate: 100, SteadyRate: 10, SteadySeconds: 88,
			RunRate: 10.1, Span: 99},
	})
	var b strings.Builder
	writeReport(&b, 30*time.Second, results)
	got := b.String()
	for _, want := range []string{
		"## Crossed: latency, limiter and advertised quota, bounded input, default flags",
		"| scenario | mode | elements | success | client-throttled | server-throttled | errors | calls | waste | time | from 10th s | over the run | p99 answer |",
		"| x-fixed20-2s-ietf | paced | 1200 | 1200 ✓ | 0 ✓ | 0 | 0 | 1204 | 0.3 % ✓ | 66.5 s | 19.5/s = 97.5 % ✓ | 19.0/s = 95.0 % ✓ | 2.0 s |",
		"| x-fixed20-2s-openai | paced | 1200 | 130 ✗ | 1070 ✗ | 0 | 0 | 130 | 0.0 % ✓ | 101.2 s, stopped ✗ | 1.3/s = 6.5 % ✗ | 1.4/s = 7.0 % ✗ | 2.0 s |",
		"| x-fixed100-0s-ietf10 | paced | 1000 | 1000 | 0 | 0 | 0 | 1000 | 0.0 % | 104.0 s | 10.0/s = 10.0 % | 10.1/s = 10.1 % ✓ | – |",
		"- **x-fixed20-2s-ietf**: the same advertising the window in IETF draft-8 headers. Target: every element succeeds, " +
			"nothing client-throttled, waste ≤ 1 %, from the 10th s ≥ 95 % of the quota, over the run ≥ 90 % of the quota.",
		"Target: over the run ≥ 10/s.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report does not contain %q:\n%s", want, got)
		}
	}
	sc := scenarios[indexOf("x-fixed20-2s-openai")]
	if got, want := summaryLine(sc, results[1]), "span 92.0 s, stopped at the deadline"; !strings.Contains(got, want) {
		t.Errorf("summaryLine: got %q, want it to contain %q", got, want)
	}
}

// TestNamer checks that the front names every request, so that the
// server times the pipeline's span.
func TestNamer(t *testing.T) {
	clock := time.Unix(2000, 0)
	h, err := testserver.NewHandler(testserver.Config{Quota: 1, Mode: testserver.FixedWindow, Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	front := namer{next: h, client: crossedClient}
	for i, want := range []int{http.StatusOK, http.StatusTooManyRequests} {
		clock = clock.Add(100 * time.Millisecond)
		rec := httptest.NewRecorder()
		front.ServeHTTP(rec, httptest.NewRequest("POST", "/api", strings.NewReader("x")))
		if rec.Code != want {
			t.Errorf("request %d: status %d, want %d", i, rec.Code, want)
		}
	}
	sp := h.Span(crossedClient)
	if want := time.Unix(2000, 1e8); !sp.First.Equal(want) || !sp.LastAccepted.Equal(want) {
		t.Errorf("Span: got %+v, want first and last accepted at %v", sp, want)
	}
	if got := h.Stats().Clients[crossedClient]; got.Accepted != 1 || got.Rejected != 1 {
		t.Errorf("counts: got %+v, want 1 accepted, 1 rejected", got)
	}
}
