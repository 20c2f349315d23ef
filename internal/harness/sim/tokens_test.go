package sim_test

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/beamthrottle/beamthrottle/internal/harness/sim"
	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// constantTokens are limits per 10 s window whose requests all take
// input and output tokens tokens (σ 0).
func constantTokens(requests, input, output int64, in, out float64) sim.TokenQuota {
	return sim.TokenQuota{Window: 10 * time.Second, Requests: requests, Input: input, Output: output, InputMedian: in, OutputMedian: out}
}

// TestTokenLimits: each limit refuses when it is used up (the input
// tokens when fewer are left than the request's own, the output tokens
// when none is left, the last request overdrawing them), the first of
// requests, input and output tokens counting the refusal; the windows
// roll, and the phases scale the limits. Each step checks NextAvailable,
// then Take.
func TestTokenLimits(t *testing.T) {
	steady := []sim.Phase{{Capacity: 1}}
	s := time.Second
	tests := []struct {
		name    string
		quota   sim.TokenQuota
		phases  []sim.Phase
		steps   []step
		end     time.Duration
		refused []int64     // by requests, input and output tokens
		use     [][]float64 // per limit, per window ended by end
	}{
		{
			name: "requests", quota: constantTokens(2, 1000, 1000, 10, 5), phases: steady,
			steps: []step{
				{at: 0, next: 0, ok: true}, {at: s, next: s, ok: true},
				{at: 2 * s, next: 10 * s},
				{at: 10 * s, next: 10 * s, ok: true},
			},
			end: 20 * s, refused: []int64{1, 0, 0}, use: [][]float64{{1, 0.5}, {0.02, 0.01}, {0.01, 0.005}},
		},
		{
			name: "input tokens, fewer left than the request's", quota: constantTokens(10, 100, 1000, 40, 5), phases: steady,
			steps: []step{
				{at: 0, next: 0, ok: true}, {at: s, next: s, ok: true},
				{at: 3 * s, next: 10 * s}, // 20 left, 40 wanted
				{at: 10 * s, next: 10 * s, ok: true},
			},
			end: 10 * s, refused: []int64{0, 1, 0}, use: [][]float64{{0.2}, {0.8}, {0.01}},
		},
		{
			name: "output tokens, overdrawn by the last", quota: constantTokens(10, 1000, 20, 10, 8), phases: steady,
			steps: []step{
				{at: 0, next: 0, ok: true}, {at: 0, next: 0, ok: true},
				{at: s, next: s, ok: true}, // 4 left, 8 taken
				{at: 2 * s, next: 10 * s},
				{at: 10 * s, next: 10 * s, ok: true},
			},
			end: 15 * s, refused: []int64{0, 0, 1}, use: [][]float64{{0.3}, {0.03}, {1.2}},
		},
		{
			name: "all used up: the requests count it", quota: constantTokens(1, 10, 5, 10, 5), phases: steady,
			steps: []step{{at: 0, next: 0, ok: true}, {at: s, next: 10 * s}},
			end:   10 * s, refused: []int64{1, 0, 0}, use: [][]float64{{1}, {1}, {1}},
		},
		{
			name: "phases scale the limits, Retry-After",
			quota: func() sim.TokenQuota {
				q := constantTokens(4, 1000, 1000, 10, 5)
				q.RetryAfter = true
				return q
			}(),
			phases: []sim.Phase{{Capacity: 1}, {At: 5 * s, Capacity: 0.5}, {At: 10 * s, Capacity: 1, Outage: true}, {At: 15 * s, Capacity: 1}},
			steps: []step{
				{at: 0, next: 0, ok: true}, {at: 0, next: 0, ok: true},
				{at: 5 * s, next: 15 * s, retryAfter: 10 * s}, // two of two; nothing in the outage
				{at: 12 * s, next: 15 * s, retryAfter: s},     // in the outage: 1 s
				{at: 15 * s, next: 15 * s, ok: true},
			},
			// The second window began in the outage: a limit of 0.
			end: 20 * s, refused: []int64{2, 0, 0}, use: [][]float64{{0.5, 0}, {0.02, 0}, {0.01, 0}},
		},
		{
			name: "a request larger than the whole window", quota: constantTokens(10, 100, 100, 60, 5),
			phases: []sim.Phase{{Capacity: 0.5}}, // 50 input tokens a window
			steps:  []step{{at: 0, next: sim.Never}, {at: 20 * s, next: sim.Never}},
			end:    25 * s, refused: []int64{0, 2, 0}, use: [][]float64{{0, 0}, {0, 0}, {0, 0}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := sim.TokenLimits(tc.quota).New(sim.NewCapacity(7, tc.phases), 1)
			for i, s := range tc.steps {
				if got := b.NextAvailable(s.at); got != s.next {
					t.Errorf("step %d: NextAvailable(%v) = %v, want %v", i, s.at, got, s.next)
				}
				if ok, ra := b.Take(s.at); ok != s.ok || ra != s.retryAfter {
					t.Errorf("step %d: Take(%v) = %v, %v, want %v, %v", i, s.at, ok, ra, s.ok, s.retryAfter)
				}
			}
			ls := sim.LimitUseOf(b, tc.end)
			var names []string
			for i, l := range ls {
				names = append(names, l.Name)
				if l.Refused != tc.refused[i] || l.Window != tc.quota.Window {
					t.Errorf("%s: refused %d in windows of %v, want %d in %v", l.Name, l.Refused, l.Window, tc.refused[i], tc.quota.Window)
				}
				if !slices.EqualFunc(l.Use, tc.use[i], func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }) {
					t.Errorf("%s: use per window %v, want %v", l.Name, l.Use, tc.use[i])
				}
			}
			if want := []string{sim.LimitRequests, sim.LimitInput, sim.LimitOutput}; !slices.Equal(names, want) {
				t.Errorf("got limits %q, want %q", names, want)
			}
		})
	}
}

// TestTokenLimitsAdvertise: the three limits in order, each with what is
// left (none for the output tokens overdrawn), the window's end and
// length, and what the request answered took: one request and its tokens,
// or, refused, one request and nothing said of tokens (-1). Advertising changes nothing the
// backend answers.
func TestTokenLimitsAdvertise(t *testing.T) {
	m := sim.TokenLimits(constantTokens(3, 100, 20, 30, 8))
	c := sim.NewCapacity(1, []sim.Phase{{Capacity: 1}})
	b, plain := m.New(c, 1).(sim.Advertiser), m.New(c, 1)
	s := time.Second
	quotas := func(reset time.Duration, rem [3]int64, used [3]float64) []adaptive.Quota {
		qs := make([]adaptive.Quota, 3)
		for i, limit := range []int64{3, 100, 20} {
			qs[i] = adaptive.Quota{Limit: limit, Remaining: rem[i], Reset: advStart.Add(reset), Window: 10 * s, Used: used[i]}
		}
		return qs
	}
	steps := []struct {
		at   time.Duration
		take int
		want []adaptive.Quota
	}{
		{s, 1, quotas(10*s, [3]int64{2, 70, 12}, [3]float64{1, 30, 8})},
		{2 * s, 1, quotas(10*s, [3]int64{1, 40, 4}, [3]float64{1, 30, 8})},
		{3 * s, 1, quotas(10*s, [3]int64{0, 10, 0}, [3]float64{1, 30, 8})},  // 24 output tokens of 20
		{4 * s, 1, quotas(10*s, [3]int64{0, 10, 0}, [3]float64{1, -1, -1})}, // refused: no tokens said
		{10 * s, 1, quotas(20*s, [3]int64{2, 70, 12}, [3]float64{1, 30, 8})},
	}
	for _, st := range steps {
		for range st.take {
			ok, ra := b.Take(st.at)
			if ok2, ra2 := plain.Take(st.at); ok != ok2 || ra != ra2 {
				t.Fatalf("at %v: Take got %v, %v after advertising, want %v, %v as without", st.at, ok, ra, ok2, ra2)
			}
		}
		if diff := cmp.Diff(st.want, b.Advertise(advStart, st.at)); diff != "" {
			t.Errorf("at %v: Advertise mismatch (-want +got):\n%s", st.at, diff)
		}
	}
}

// TestTokenLimitsDraws: the token counts are lognormal with the medians
// and means the quota says, drawn from the seed: the same seed draws the
// same counts, another seed others.
func TestTokenLimitsDraws(t *testing.T) {
	q := sim.TokenQuota{Window: time.Minute, Requests: 1 << 40, Input: 1 << 40, Output: 1 << 40,
		InputMedian: 60, InputSigma: 0.6, OutputMedian: 20, OutputSigma: 0.6}
	draws := func(seed uint64) (in, out []float64) {
		b := sim.TokenLimits(q).New(sim.NewCapacity(1, []sim.Phase{{Capacity: 1}}), seed).(sim.Advertiser)
		for i := range 20000 {
			at := time.Duration(i) * time.Millisecond
			if ok, _ := b.Take(at); !ok {
				t.Fatalf("request %d refused", i)
			}
			qs := b.Advertise(advStart, at)
			in, out = append(in, qs[1].Used), append(out, qs[2].Used)
		}
		return in, out
	}
	in, out := draws(1)
	for _, d := range []struct {
		name         string
		xs           []float64
		median, mean float64
	}{
		{"input", in, 60, 60 * math.Exp(0.18)},
		{"output", out, 20, 20 * math.Exp(0.18)},
	} {
		xs := slices.Clone(d.xs)
		slices.Sort(xs)
		var sum float64
		for _, x := range xs {
			sum += x
		}
		if med, mean := xs[len(xs)/2], sum/float64(len(xs)); math.Abs(med/d.median-1) > 0.03 || math.Abs(mean/d.mean-1) > 0.02 {
			t.Errorf("%s tokens: median %v, mean %.2f; want about %v and %.2f", d.name, med, mean, d.median, d.mean)
		}
		if xs[0] < 1 || xs[0] != math.Round(xs[0]) {
			t.Errorf("%s tokens: least %v, want a whole count of at least 1", d.name, xs[0])
		}
	}
	if in2, out2 := draws(1); !slices.Equal(in, in2) || !slices.Equal(out, out2) {
		t.Error("seed 1 again draws other counts")
	}
	if in3, _ := draws(2); slices.Equal(in, in3) {
		t.Error("seed 2 draws the counts of seed 1")
	}
}

func TestTokenLimitsPanics(t *testing.T) {
	ok := constantTokens(1, 1, 1, 1, 1)
	for name, q := range map[string]sim.TokenQuota{
		"zero":            {},
		"window of 1.5 s": func() sim.TokenQuota { q := ok; q.Window = 1500 * time.Millisecond; return q }(),
		"no output":       func() sim.TokenQuota { q := ok; q.Output = 0; return q }(),
		"median below 1":  func() sim.TokenQuota { q := ok; q.InputMedian = 0.5; return q }(),
		"negative σ":      func() sim.TokenQuota { q := ok; q.OutputSigma = -1; return q }(),
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("TokenLimits(%+v): no panic, want one", q)
				}
			}()
			sim.TokenLimits(q)
		})
	}
	if got, want := sim.TokenLimits(ok).Name, "tokens-10s"; got != want {
		t.Errorf("got name %q, want %q", got, want)
	}
}

// TestTokenLimitsRun: with Config.Advertise every answer carries the three
// limits, each Reset moved by AdvertiseSkew, and Used as the request took;
// the run reports what it took of each limit per window.
func TestTokenLimitsRun(t *testing.T) {
	pols := map[int]*quotaSeen{}
	alg := sim.Algorithm{Name: "seen", New: func(e sim.Env) adaptive.Policy {
		p := &quotaSeen{script: script{start: e.Start, decide: send}}
		pols[e.Group] = p
		return p
	}}
	q := constantTokens(500, 40000, 8000, 60, 20)
	cfg := sim.Config{Groups: 2, Workers: 2, Backend: sim.TokenLimits(q), Capacity: 1, Advertise: true, AdvertiseSkew: time.Second}
	r, err := sim.Run(boundedInput(6, 30*time.Second), alg, cfg)
	if err != nil {
		t.Fatal(err)
	}
	resets := []time.Duration{11 * time.Second, 9 * time.Second} // later on even workers, earlier on odd
	for g, p := range pols {
		if len(p.seen) != 3 {
			t.Fatalf("group %d: got %d answers, want 3", g, len(p.seen))
		}
		for i, qs := range p.seen {
			if len(qs) != 3 {
				t.Fatalf("group %d, answer %d: got %d limits, want 3", g, i, len(qs))
			}
			for j, want := range []struct {
				limit int64
				used  float64
			}{{500, 1}, {40000, 60}, {8000, 20}} {
				if qs[j].Limit != want.limit || qs[j].Used != want.used || qs[j].Reset != p.start.Add(resets[g]) {
					t.Errorf("group %d, answer %d, limit %d: got %+v, want Limit %d, Used %v, Reset at %v", g, i, j, qs[j],
						want.limit, want.used, resets[g])
				}
			}
		}
	}
	if len(r.Limits) != 3 || len(r.Limits[2].Use) != 3 || r.Limits[2].Use[0] != 6*20/8000.0 {
		t.Errorf("got limits %+v, want 3 of 3 windows each, the output tokens' first %v used", r.Limits, 6*20/8000.0)
	}
}

// TestGoalCheckLimits: the binding limit's least use of the windows after
// the first, and the refusals by the other limits.
func TestGoalCheckLimits(t *testing.T) {
	sc := sim.Scenario{Name: "s", Duration: 3 * time.Minute}
	ls := []sim.LimitUse{
		{Name: sim.LimitRequests, Window: time.Minute, Use: []float64{0.6, 0.6, 0.7}},
		{Name: sim.LimitInput, Window: time.Minute, Use: []float64{0.5, 0.5, 0.6}, Refused: 2},
		{Name: sim.LimitOutput, Window: time.Minute, Use: []float64{0.5, 1.01, 0.94}, Refused: 5},
	}
	g := sim.Goal{Binding: sim.LimitOutput, MinBindingUse: 0.95, NoOtherRefusals: true}
	tests := []struct {
		name   string
		limits []sim.LimitUse
		warm   time.Duration
		want   string
	}{
		{"misses", ls, 0, "✗ output tokens ≥ 95.0 % used in each window: 94.0 % (the window from 2:00); " +
			"no 429 by a limit other than output tokens: 2 by input tokens"},
		{"not measured", nil, 0, "✗ output tokens ≥ 95.0 % used in each window: no such limit; " +
			"no 429 by a limit other than output tokens: no limits measured"},
		{"after the warm-up", ls[2:], 150 * time.Second, "✗ output tokens ≥ 95.0 % used in each window: no whole window"},
		{"no other refusals", []sim.LimitUse{ls[0], ls[2]}, 0, "✗ output tokens ≥ 95.0 % used in each window: 94.0 % (the window from 2:00)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sc.WarmUp = tc.warm
			if got := sim.Misses(g.Check(sc, sim.Result{Limits: tc.limits}, nil)); got != tc.want {
				t.Errorf("got misses %q, want %q", got, tc.want)
			}
		})
	}
	if got, want := g.String(), "output tokens ≥ 95.0 % used in each window, no 429 by a limit other than output tokens"; got != want {
		t.Errorf("got goals %q, want %q", got, want)
	}
	bad := sim.Suite{Cases: []sim.Case{{Name: "c", Scenario: sim.Scenario{Name: "s", Duration: time.Minute,
		Phases: []sim.Phase{{Capacity: 1}}}, Goal: sim.Goal{NoOtherRefusals: true}}}}
	if _, err := bad.Run(); err == nil {
		t.Error("Suite.Run with NoOtherRefusals and no Binding: no error, want one")
	}
}

// TestWriteLimits: a family with a backend of several limits gets a table
// of their use per window and their refusals; one without does not.
func TestWriteLimits(t *testing.T) {
	sc := sim.Scenario{Name: "s", Duration: 2 * time.Minute, Phases: []sim.Phase{{Capacity: 1}}}
	cases := []sim.Case{{Name: "tokens", Family: "f", Scenario: sc}, {Name: "plain", Family: "g", Scenario: sc}}
	rs := []sim.Result{
		{Case: "tokens", Algorithm: "a", Groups: 8, Limits: []sim.LimitUse{
			{Name: sim.LimitRequests, Window: time.Minute, Use: []float64{0.6, 0.65}},
			{Name: sim.LimitOutput, Window: time.Minute, Use: []float64{1.003, 0.98}, Refused: 3},
		}},
		{Case: "plain", Algorithm: "a", Groups: 8},
	}
	var b bytes.Buffer
	if err := sim.WriteMarkdown(&b, cases, rs); err != nil {
		t.Fatal(err)
	}
	f, g, _ := strings.Cut(b.String(), "### g")
	for _, row := range []string{"| tokens | a | 8 | requests | 60.0 %, 65.0 % | 0 |\n", "| tokens | a | 8 | output tokens | 100.3 %, 98.0 % | 3 |\n"} {
		if !strings.Contains(f, row) {
			t.Errorf("family f: no row %q in\n%s", row, f)
		}
	}
	if strings.Contains(g, "limit") {
		t.Errorf("family g, no backend with several limits: got a table of limits\n%s", g)
	}
}
