package adaptive

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func newTestAdvertised(t *testing.T, cfg AdvertisedRateConfig) *AdvertisedRate {
	t.Helper()
	q, err := NewAdvertisedRate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// near reports whether got is within a millionth of want.
func near(got, want float64) bool { return math.Abs(got-want) <= 1e-6*math.Max(1, math.Abs(want)) }

func TestAdvertisedRateConfig(t *testing.T) {
	tests := []struct {
		cfg  AdvertisedRateConfig
		want string
	}{
		{AdvertisedRateConfig{}, ""},
		{AdvertisedRateConfig{Reserve: 0.1, Start: 1, Span: time.Second}, ""},
		{AdvertisedRateConfig{Reserve: 0.5}, "AdvertisedRateConfig.Reserve"},
		{AdvertisedRateConfig{Reserve: -0.01}, "AdvertisedRateConfig.Reserve"},
		{AdvertisedRateConfig{Reserve: math.NaN()}, "AdvertisedRateConfig.Reserve"},
		{AdvertisedRateConfig{Start: 1.5}, "AdvertisedRateConfig.Start"},
		{AdvertisedRateConfig{Start: -1}, "AdvertisedRateConfig.Start"},
		{AdvertisedRateConfig{Span: -time.Second}, "AdvertisedRateConfig.Span"},
	}
	for _, tc := range tests {
		_, err := NewAdvertisedRate(tc.cfg)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: got %v, want nil", tc.cfg, err)
		case tc.want != "" && (err == nil || !contains(err.Error(), tc.want)):
			t.Errorf("%+v: got %v, want an error naming %s", tc.cfg, err, tc.want)
		}
	}
}

// TestAdvertisedRateTarget: the target for everyone from one answer (rules
// 1 and 4), of which a worker that has measured nothing takes a quarter.
func TestAdvertisedRateTarget(t *testing.T) {
	rho := 500.0 / 60 // a bucket of 500 a minute
	tests := []struct {
		name string
		q    Quota
		want float64 // Rate at the answer, before any send
	}{
		{"window", Quota{Limit: 600, Remaining: 500, Reset: at(50 * time.Second)}, 0.25 * (500 - 6) / 50.0},
		{"window, Remaining and Reset only", Quota{Limit: -1, Remaining: 500, Reset: at(50 * time.Second)}, 0.25 * 500 / 50.0},
		{"window, Limit and Window only", Quota{Limit: 600, Remaining: -1, Window: time.Minute}, 0.25 * 594 / 60.0},
		{"window used up", Quota{Limit: 600, Remaining: 6, Reset: at(30 * time.Second)}, 1 / 30.0},
		{"Remaining only", Quota{Limit: -1, Remaining: 100}, 0},
		{"nothing", Quota{Limit: -1, Remaining: -1}, 0},
		{"bucket at its level", Quota{Limit: 500, Remaining: 125, Reset: at(45 * time.Second), Refill: true}, 0.25 * rho},
		{"bucket empty", Quota{Limit: 500, Remaining: 0, Reset: at(time.Minute), Refill: true}, 0.25 * rho / 2},
		{"bucket full", Quota{Limit: 500, Remaining: 500, Reset: at(0), Refill: true}, 0},
		{"bucket full, Window known", Quota{Limit: 500, Remaining: 500, Reset: at(0), Window: time.Minute, Refill: true}, 0.25 * 2.5 * rho},
		{"bucket, Limit and Window only", Quota{Limit: 500, Remaining: -1, Window: time.Minute, Refill: true}, 0.25 * rho},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := newTestAdvertised(t, AdvertisedRateConfig{})
			if got := q.Rate(at(0)); got != 0 {
				t.Fatalf("Rate before any answer: got %v, want 0", got)
			}
			q.tested = true // a bucket is a bucket (see TestAdvertisedRateWindowInBucketHeaders)
			q.Observe(at(0), at(0), tc.q)
			if got := q.Rate(at(0)); !near(got, tc.want) {
				t.Errorf("Rate: got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestAdvertisedRateCorrects: the share follows allowed ÷ consumed over a
// measurement (rules 2 and 3): Remaining 600 at 0 s, then Remaining at
// the second answer, with the worker's own sends in between.
func TestAdvertisedRateCorrects(t *testing.T) {
	area := 594.0 / 60 // the target integrated over each second
	tests := []struct {
		name string
		at   time.Duration // the second answer
		rem  int64
		own  float64 // cost sent in between
		want float64 // the share after
	}{
		{"over", 2 * time.Second, 560, 5, 0.25 * math.Sqrt(2*area/40)},
		{"under", 2 * time.Second, 590, 5, 0.25 * math.Sqrt(2*area/10)},
		{"under but idle", 2 * time.Second, 590, 0, 0.25},
		{"far over: cut by 4 at most", 2 * time.Second, 200, 5, 0.25 / 4},
		{"nothing spent: doubled at most", 2 * time.Second, 600, 5, 0.5},
		{"clear overload, before Span", 500 * time.Millisecond, 500, 1, 0.25 * math.Pow(0.5*area/100, 0.5/4)},
		{"before Span", 500 * time.Millisecond, 596, 1, 0.25},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := newTestAdvertised(t, AdvertisedRateConfig{})
			q.Observe(at(0), at(0), Quota{Limit: 600, Remaining: 600, Reset: at(time.Minute)})
			q.Sent(at(tc.at/2), tc.own)
			q.Observe(at(tc.at), at(tc.at), Quota{Limit: 600, Remaining: tc.rem, Reset: at(time.Minute)})
			if !near(q.share, tc.want) {
				t.Errorf("share: got %v, want %v", q.share, tc.want)
			}
			target := float64(tc.rem-6) / (time.Minute - tc.at).Seconds()
			if got, want := q.Rate(at(tc.at)), tc.want*target; !near(got, want) {
				t.Errorf("Rate: got %v, want %v", got, want)
			}
		})
	}
}

// TestAdvertisedRateBucketCorrects: a bucket's consumption is the fall of
// Remaining plus the refill in between.
func TestAdvertisedRateBucketCorrects(t *testing.T) {
	q := newTestAdvertised(t, AdvertisedRateConfig{})
	q.Observe(at(0), at(0), Quota{Limit: 500, Remaining: 125, Window: time.Minute, Refill: true})
	q.Sent(at(time.Second), 5)
	// Over 2 s the refill brought 2ρ and Remaining stayed: 2ρ consumed,
	// against 2ρ allowed (at its level the target is ρ).
	q.Observe(at(2*time.Second), at(2*time.Second), Quota{Limit: 500, Remaining: 125, Window: time.Minute, Refill: true})
	if got, want := q.share, 0.25; !near(got, want) {
		t.Errorf("share at the refill rate: got %v, want %v", got, want)
	}
	// Then Remaining falls by 2ρ more in 2 s: 4ρ consumed against 2ρ.
	q.Sent(at(3*time.Second), 5)
	rho := 500.0 / 60
	q.Observe(at(4*time.Second), at(4*time.Second), Quota{Limit: 500, Remaining: 125 - int64(math.Round(2*rho)), Window: time.Minute, Refill: true})
	want := 0.25 * math.Sqrt(2*rho/(2*rho+math.Round(2*rho)))
	if got := q.share; !near(got, want) {
		t.Errorf("share at twice the refill rate: got %v, want %v", got, want)
	}
}

// TestAdvertisedRateResetAtAnswer: a bucket of a second (20 at 20 per
// second) answering in 2 s is full again by every answer, its Reset
// counted from the answer 0: no rate (L − R over the 2 s would be half of
// it), so no ceiling, until a refusal answered at once tells it.
func TestAdvertisedRateResetAtAnswer(t *testing.T) {
	const late = 2 * time.Second
	q := newTestAdvertised(t, AdvertisedRateConfig{})
	for d := time.Duration(0); d < 5*time.Second; d += 100 * time.Millisecond {
		q.Sent(at(d), 1)
		q.Observe(at(d+late), at(d), Quota{Limit: 20, Remaining: 10, Reset: at(d + late), Refill: true})
	}
	if got := q.Rate(at(5 * time.Second)); got != 0 {
		t.Fatalf("Rate with every Reset at its answer: got %v, want 0 (no ceiling)", got)
	}
	q.Sent(at(5*time.Second), 1)
	q.Observe(at(5*time.Second+time.Millisecond), at(5*time.Second), Quota{Limit: 20, Remaining: 0, Reset: at(6 * time.Second), Refill: true})
	if got := q.rho; got != 20 {
		t.Fatalf("refill rate from a refusal at once: got %v, want 20", got)
	}
}

// TestAdvertisedRateLateSurplus: a bucket's surplus over a quarter full,
// seen 2 s after its send, is spent over 4 s, not half its fill time (the
// answers until those to what is sent now still show it); a deficit
// brakes as fast late as at once.
func TestAdvertisedRateLateSurplus(t *testing.T) {
	tests := []struct {
		name string
		rem  int64
		late time.Duration
		want float64 // the target: ρ 20, level 5, half the fill time 0.5 s
	}{
		{"surplus at once", 15, time.Millisecond, 20 + 10/0.5},
		{"surplus 2 s late", 15, 2 * time.Second, 20 + 10/4.0},
		{"deficit at once", 0, time.Millisecond, 20 - 5/0.5},
		{"deficit 2 s late", 0, 2 * time.Second, 20 - 5/0.5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := newTestAdvertised(t, AdvertisedRateConfig{})
			q.Sent(at(0), 1)
			q.Observe(at(tc.late), at(0), Quota{Limit: 20, Remaining: tc.rem, Reset: at(time.Hour), Window: time.Second, Refill: true})
			if got := q.Rate(at(tc.late)); !near(got, 0.25*tc.want) {
				t.Errorf("Rate: got %v, want %v (a quarter of %v)", got, 0.25*tc.want, tc.want)
			}
		})
	}
}

// TestAdvertisedRateSharedRefill: between answers a second apart that
// show a bucket of a second a quarter full, other workers took its
// refill: none of it was lost to its being full, and this worker, at a
// quarter of the target that the consumption meets, keeps its share.
// (Counting the refill the room of the first answer could not hold as
// lost, it saw three quarters of the consumption and grew.)
func TestAdvertisedRateSharedRefill(t *testing.T) {
	q := newTestAdvertised(t, AdvertisedRateConfig{})
	for d := time.Duration(0); d <= 2*time.Second; d += 200 * time.Millisecond {
		q.Sent(at(d), 1) // its quarter of 20 a second
		if d%time.Second == 0 {
			q.Observe(at(d+time.Millisecond), at(d), Quota{Limit: 20, Remaining: 5, Reset: at(d + 750*time.Millisecond), Window: time.Second, Refill: true})
		}
	}
	if got := q.share; got > 0.25 {
		t.Errorf("share: got %v, want at most 0.25", got)
	}
}

// TestAdvertisedRateResets: a new window starts the measurement again and
// its quota is spread over it, never spent at once (rule 2). The worker
// sends 100 before each answer, so that it is never idle.
func TestAdvertisedRateResets(t *testing.T) {
	type answer struct {
		at time.Duration
		q  Quota
	}
	w := func(d time.Duration, rem int64, reset time.Duration) answer {
		return answer{d, Quota{Limit: 600, Remaining: rem, Reset: at(reset)}}
	}
	steady := 594.0 / 60
	tests := []struct {
		name    string
		answers []answer
		now     time.Duration
		want    float64 // Rate at now; the share stays 1/4
	}{
		{"after Reset, Window advertised", []answer{{0, Quota{Limit: 600, Remaining: 100, Reset: at(time.Minute), Window: time.Minute}}}, 61 * time.Second, 0.25 * steady},
		{"after Reset, Window learnt", []answer{w(0, 600, time.Minute), w(61*time.Second, 590, 2*time.Minute)}, 121 * time.Second, 0.25 * steady},
		{"new window: no measurement across it", []answer{w(58*time.Second, 10, time.Minute), w(61*time.Second, 590, 2*time.Minute)}, 61 * time.Second, 0.25 * 584 / 59.0},
		{"used up at the only answer, then Reset", []answer{w(50*time.Second, 0, time.Minute)}, 61 * time.Second, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := newTestAdvertised(t, AdvertisedRateConfig{})
			for _, a := range tc.answers {
				q.Sent(at(a.at-time.Millisecond), 100)
				q.Observe(at(a.at), at(a.at), a.q)
			}
			if got := q.Rate(at(tc.now)); !near(got, tc.want) {
				t.Errorf("Rate at %v: got %v, want %v (share %v)", tc.now, got, tc.want, q.share)
			}
		})
	}
}

// TestAdvertisedRateIgnoresOlder: an answer to a request sent before the
// last answer used says nothing new.
func TestAdvertisedRateIgnoresOlder(t *testing.T) {
	q := newTestAdvertised(t, AdvertisedRateConfig{})
	q.Observe(at(2*time.Second), at(2*time.Second), Quota{Limit: 600, Remaining: 500, Reset: at(time.Minute)})
	before := q.Rate(at(2 * time.Second))
	q.Observe(at(3*time.Second), at(time.Second), Quota{Limit: 600, Remaining: 10, Reset: at(time.Minute)})
	if got := q.Rate(at(3 * time.Second)); got != before {
		t.Errorf("Rate after an older answer: got %v, want %v", got, before)
	}
}

// TestAdvertisedRateUsedUp: with the window used up, a caller spacing its
// sends cost/Rate from its last sends its next at Reset.
func TestAdvertisedRateUsedUp(t *testing.T) {
	q := newTestAdvertised(t, AdvertisedRateConfig{})
	q.Sent(at(10*time.Second), 3)
	q.Observe(at(10*time.Second), at(10*time.Second), Quota{Limit: 600, Remaining: 2, Reset: at(40 * time.Second)})
	if got, want := q.Rate(at(20*time.Second)), 3/30.0; !near(got, want) {
		t.Errorf("Rate: got %v, want %v (3 units over the 30 s from the last send to Reset)", got, want)
	}
}

// TestAdvertisedRateBounded: whatever it is told, Rate is a number in
// [0, maxRate].
func TestAdvertisedRateBounded(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 7))
	pick := func(vs ...int64) int64 { return vs[rnd.IntN(len(vs))] }
	q := newTestAdvertised(t, AdvertisedRateConfig{})
	for i := range 20000 {
		now := at(time.Duration(i)*10*time.Millisecond + time.Duration(rnd.Int64N(int64(time.Second))))
		a := Quota{
			Limit:     pick(-1, 0, 1, 600, math.MaxInt64, rnd.Int64N(1000)),
			Remaining: pick(-1, 0, 1, 600, math.MaxInt64, rnd.Int64N(1000)),
			Window:    time.Duration(pick(0, 1, int64(time.Minute), math.MaxInt64)),
			Refill:    rnd.IntN(2) == 0,
		}
		switch rnd.IntN(4) {
		case 1:
			a.Reset = now.Add(time.Duration(rnd.Int64N(int64(2 * time.Minute))))
		case 2:
			a.Reset = now.Add(-time.Second)
		case 3:
			a.Reset = time.Unix(math.MaxInt64/2, 0)
		}
		if rnd.IntN(3) == 0 {
			q.Sent(now, float64(pick(-1, 0, 1, 100)))
		}
		q.Observe(now, now.Add(-time.Duration(rnd.Int64N(int64(time.Second)))), a)
		if r := q.Rate(now); !(r >= 0 && r <= maxRate) {
			t.Fatalf("step %d, after %+v: Rate got %v, want in [0, %v]", i, a, r, maxRate)
		}
	}
}

func TestAdvertisedRateZeroAllocs(t *testing.T) {
	q := newTestAdvertised(t, AdvertisedRateConfig{})
	d := time.Duration(0)
	allocs := testing.AllocsPerRun(100, func() {
		d += 100 * time.Millisecond
		q.Sent(at(d), 1)
		q.Observe(at(d), at(d-50*time.Millisecond), Quota{Limit: 600, Remaining: 300, Reset: at(time.Hour)})
		q.Rate(at(d))
	})
	if allocs != 0 {
		t.Errorf("allocations per Sent, Observe and Rate: got %v, want 0", allocs)
	}
}

// TestAdvertisedModel: independent workers, each offered four times its
// fair share, pace from the quota the server advertises to them (see
// quotaModel) for five minutes; rules 3 and 5 together. The figures of
// seed 1 (a run takes a few milliseconds), waste and the least share of
// the quota (or of what the outside client left) used in a minute after
// the first:
//
//	                         8 workers        32 workers
//	window, 600 a minute     0 %, 98.8 %      0 %, 98.7 %
//	bucket, 500 a minute     0 %, 99.8 %      0 %, 99.8 %
//	window, 30 % outside     0 %, 98.1 %      0 %, 98.1 %
//	bucket, 30 % outside     0 %, 100 %       0 %, 99.7 %
//	window, bucket's headers 0 %, 98.7 %      0 %, 98.5 %
//
// Seeds 1 to 20 give no refusal either, and at least 97.4 % used. A
// window leaves unused its reserve (1 %) and what the workers' lagging
// views miss at its end; a bucket keeps its level, not its refill.
func TestAdvertisedModel(t *testing.T) {
	window := func() quotaServer { return &quotaWindow{limit: 600, window: time.Minute} }
	bucket := func() quotaServer { return &quotaBucket{limit: 500, window: time.Minute, tokens: 500} }
	tests := []struct {
		name     string
		server   func() quotaServer
		outside  float64
		maxWaste float64
		minUsed  float64
	}{
		{"window", window, 0, 0.01, 0.97},
		{"bucket", bucket, 0, 0.01, 0.97},
		{"window, outside client", window, 0.3, 0.02, 0.95},
		{"bucket, outside client", bucket, 0.3, 0.02, 0.95},
		{"window in a bucket's headers", func() quotaServer { return &windowAsBucket{window()} }, 0, 0.01, 0.97},
	}
	for _, tc := range tests {
		for _, n := range []int{8, 32} {
			t.Run(fmt.Sprintf("%s, %d workers", tc.name, n), func(t *testing.T) {
				m := quotaModel{server: tc.server(), workers: n, outside: tc.outside, length: 5 * time.Minute, seed: 1}
				f := m.simulate(t)
				used, waste := f.worst()
				least, most := f.spread()
				t.Logf("waste %.2f %% (%d of %d), used %.3f (by minute %.3f), refused by minute %v, accepted by a worker %.2f..%.2f of the mean",
					100*waste, f.refused, f.sent, used, f.used, f.refusedBy, least, most)
				if waste > tc.maxWaste {
					t.Errorf("waste: got %.4f, want at most %v", waste, tc.maxWaste)
				}
				if used < tc.minUsed {
					t.Errorf("quota used: got %.4f, want at least %v", used, tc.minUsed)
				}
			})
		}
	}
}

// TestAdvertisedModelMixedDemand: half the workers want half a fair share,
// the others four; the light ones get what they want, and the hungry ones
// the rest, since a worker that does not use its rate does not grow.
func TestAdvertisedModelMixedDemand(t *testing.T) {
	for _, n := range []int{8, 32} {
		t.Run(fmt.Sprint(n, " workers"), func(t *testing.T) {
			demand := make([]float64, n)
			for i := range demand {
				demand[i] = []float64{0.5, 4}[i%2]
			}
			m := quotaModel{server: &quotaWindow{limit: 600, window: time.Minute}, workers: n, length: 5 * time.Minute, seed: 1, demand: demand}
			f := m.simulate(t)
			used, waste := f.worst()
			t.Logf("waste %.2f %%, used %.3f (by minute %.3f)", 100*waste, used, f.used)
			if waste > 0.01 || used < 0.97 {
				t.Errorf("waste, used: got %.4f, %.4f, want at most 0.01, at least 0.97", waste, used)
			}
			want := 0.5 * 10 / float64(n) * 240 // half a fair share, for 4 minutes
			for i := 0; i < n; i += 2 {
				if got := f.accepted[i]; got < 0.95*want {
					t.Errorf("worker %d, wanting half a fair share: got %v accepted, want at least %.0f", i, got, 0.95*want)
				}
			}
		})
	}
}

// TestAdvertisedRateWindowInBucketHeaders: two answers sent at least 3 s
// apart tell a bucket (its Reset moved later with the time, its times to
// full in proportion to what it misses) from a fixed window (its Reset
// stayed put); a move in between, or one out of proportion, tells nothing
// and the test starts again, and a Reset at the answer takes no part.
// Until the test the rate is at least one request per 3 s.
func TestAdvertisedRateWindowInBucketHeaders(t *testing.T) {
	const limit = 600
	type answer struct {
		sent, reset time.Duration
		rem         int64
		late        time.Duration // the answer's delay
	}
	tests := []struct {
		name     string
		answers  []answer
		tested   bool
		windowed bool
	}{
		{"window", []answer{{time.Second, time.Minute, 590, 0}, {4 * time.Second, time.Minute, 550, 0}}, true, true},
		{"window, resets in whole seconds", []answer{{time.Second, 59 * time.Second, 590, 0}, {4 * time.Second, time.Minute, 550, 0}}, true, true},
		{"bucket", []answer{{time.Second, 2 * time.Second, 590, 0}, {4 * time.Second, 6 * time.Second, 580, 0}}, true, false},
		// A window of 4 s rolled over between the two: its Reset moved as a
		// bucket's would, but a bucket missing 10 is not full in 1 s and,
		// missing 11, in 4.
		{"rolled over: out of proportion", []answer{{time.Second, 2 * time.Second, 590, 0}, {4 * time.Second, 8 * time.Second, 589, 0}}, false, false},
		// Answered 1.5 s late, with 0 left: the Reset has passed, not
		// stayed put (it would be within a second of the first's).
		{"Reset at the answer: tells nothing", []answer{{time.Second, 5 * time.Second, 590, 0},
			{4 * time.Second, 5500 * time.Millisecond, 585, 1500 * time.Millisecond}}, false, false},
		{"too soon to tell", []answer{{time.Second, time.Minute, 590, 0}, {3900 * time.Millisecond, time.Minute, 550, 0}}, false, false},
		{"refilled: start again", []answer{{time.Second, time.Minute, 590, 0}, {4 * time.Second, time.Minute, 595, 0}}, false, false},
		{"full: tells nothing", []answer{{time.Second, time.Minute, 590, 0}, {4 * time.Second, 4 * time.Second, limit, 0}}, false, false},
		{"moved by 1.5 s in 3 s: neither", []answer{{time.Second, time.Minute, 590, 0}, {4 * time.Second, 61500 * time.Millisecond, 550, 0},
			{7 * time.Second, 61500 * time.Millisecond, 500, 0}}, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := newTestAdvertised(t, AdvertisedRateConfig{})
			for i, a := range tc.answers {
				if got := q.Rate(at(a.sent)); i > 0 && got < 1/3.0 {
					t.Fatalf("Rate before the test: got %v, want at least a request per 3 s", got)
				}
				q.Observe(at(a.sent+a.late), at(a.sent), Quota{Limit: limit, Remaining: a.rem, Reset: at(a.reset), Refill: true})
			}
			if q.tested != tc.tested || q.windowed != tc.windowed {
				t.Errorf("tested %v, windowed %v; want %v, %v", q.tested, q.windowed, tc.tested, tc.windowed)
			}
			last := tc.answers[len(tc.answers)-1]
			if got := q.Rate(at(last.sent)); tc.tested && got == 0 {
				t.Errorf("Rate after the test: got 0, want a ceiling")
			}
		})
	}
}
