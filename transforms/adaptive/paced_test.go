package adaptive_test

import (
	"encoding/json"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// paced is the default ModePaced configuration.
var paced = adaptive.Config{Mode: adaptive.ModePaced}

// batch decides on n requests at now, as the transform's batch loop does,
// and records outcome(i) for the i-th one sent. It returns how many were
// sent.
func batch(th *adaptive.Throttler, now time.Time, n int, outcome func(i int) adaptive.Outcome) int {
	sent := 0
	for range n {
		allow, p := th.Decide(now)
		if math.IsNaN(p) || p < 0 || p > 1 || (p == 0 && !allow) || (p == 1 && allow) {
			panic("adaptive_test: insane p")
		}
		if allow {
			th.Record(now, outcome(sent))
			sent++
		}
	}
	return sent
}

// acceptFirst returns an outcome function for a backend that accepts the
// first k requests of a batch and throttles the rest.
func acceptFirst(k int) func(int) adaptive.Outcome {
	return func(i int) adaptive.Outcome {
		if i < k {
			return adaptive.Accepted
		}
		return adaptive.Throttled
	}
}

// sec returns t0 plus s seconds.
func sec(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

func TestPacedUnderLoadNeverRejects(t *testing.T) {
	th := mustNew(t, paced, nil)
	for s := range 300 {
		// Bursty batches, every request accepted.
		n := 50 + 150*(s%3)
		if got := batch(th, sec(float64(s)), n, acceptFirst(n)); got != n {
			t.Fatalf("second %d: got %d of %d sent, want all", s, got, n)
		}
	}
	if st := th.State(); st.Limited {
		t.Errorf("got Limited true after an under-loaded run, want false")
	}
	// Rejections at or below the target share do not start limiting.
	for s := 300; s < 320; s++ {
		if got := batch(th, sec(float64(s)), 100, acceptFirst(98)); got != 100 {
			t.Fatalf("second %d: got %d of 100 sent with 2 %% throttled, want all", s, got)
		}
	}
}

// TestPacedLimitAndIntegral scripts the first limit, the integral steps and
// the acceleration, comparing the rate with values computed here.
func TestPacedLimitAndIntegral(t *testing.T) {
	const tw, gain = adaptive.DefaultTargetWaste, 2.5
	th := mustNew(t, paced, nil)
	// Second 0: unlimited, 50 of 100 accepted.
	if got := batch(th, sec(0), 100, acceptFirst(50)); got != 100 {
		t.Fatalf("second 0: got %d sent, want 100", got)
	}
	// Second 1: limited at the rate that would have wasted the target share.
	rate := 50 / (1 - tw)
	if got := batch(th, sec(1), 100, acceptFirst(100)); got != int(rate) {
		t.Errorf("second 1: got %d sent, want %d", got, int(rate))
	}
	st := th.State()
	if !st.Limited || math.Abs(st.Rate-rate) > 1e-9 {
		t.Fatalf("after second 1: got Limited %v, Rate %v; want true, %v", st.Limited, st.Rate, rate)
	}
	// Clean intervals: +gain·target three times (after the third, a clean
	// run is unlikely for a group that saw a rejection in every interval;
	// the probe starts at 0.04, below the integral step), then 0.08, then
	// 0.12 (logs).
	steps := []float64{gain * tw, gain * tw, gain * tw, 0.08, 0.12, 0.12}
	for i, step := range steps {
		batch(th, sec(float64(2+i)), 1000, acceptFirst(1000))
		rate *= math.Exp(step)
		if got := th.State().Rate; math.Abs(got-rate) > 1e-9*rate {
			t.Fatalf("clean interval %d: got Rate %v, want %v", i+1, got, rate)
		}
	}
	// Second 8 ends the seventh clean interval: the batch is limited to
	// the new rate (the bucket holds one second of it). The backend throttles
	// all of it.
	rate *= math.Exp(0.12)
	if got := batch(th, sec(8), 1000, acceptFirst(0)); got != int(rate) {
		t.Errorf("second 8: got %d sent, want %d", got, int(rate))
	}
	// Nothing accepted: the cut is bounded at three quarters.
	batch(th, sec(9), 1000, acceptFirst(1000))
	rate *= 0.25
	if got := th.State().Rate; math.Abs(got-rate) > 1e-9*rate {
		t.Errorf("after a dark interval: got Rate %v, want %v", got, rate)
	}
	// A clean interval, then one with every tenth request throttled: an
	// integral step up, then one down.
	tenth := func(i int) adaptive.Outcome {
		if i%10 == 9 {
			return adaptive.Throttled
		}
		return adaptive.Accepted
	}
	sent := batch(th, sec(10), 1000, tenth)
	rate *= math.Exp(gain * tw)
	batch(th, sec(11), 1000, acceptFirst(1000))
	w := float64(sent/10) / float64(sent)
	rate *= math.Exp(gain * (tw - w))
	if got := th.State().Rate; math.Abs(got-rate) > 1e-9*rate {
		t.Errorf("after an interval with %.1f %% throttled: got Rate %v, want %v", 100*w, got, rate)
	}
}

// TestPacedAcceleration checks when a run of clean intervals makes the
// rate grow faster than the integral step: once the run would have
// probability at most 0.1 given the group's hit share h when it began,
// (1 − h)^n ≤ 0.1, and not before three intervals. The probe starts at
// 0.04, below the integral step, so the first faster interval is the one
// after. It also checks the bound on a cut when some calls were accepted.
func TestPacedAcceleration(t *testing.T) {
	const tw, gain = adaptive.DefaultTargetWaste, 2.5
	tests := []struct {
		hit    float64
		faster int // first clean interval growing faster; 0: none in 30
	}{
		{1, 4},
		{0.6, 4},  // 0.4³ = 0.064
		{0.3, 8},  // 0.7⁷ = 0.082, 0.7⁶ = 0.118
		{0.1, 23}, // 0.9²² = 0.098
		{0.05, 0}, // 0.95⁴⁵ = 0.099
		{0, 0},
	}
	for _, tc := range tests {
		th := mustNew(t, paced, nil)
		batch(th, sec(0), 5000, acceptFirst(50))
		batch(th, sec(1), 5000, acceptFirst(5000)) // limited at about 51 per second
		st := th.State()
		st.Hit, st.RunHit, st.Streak = tc.hit, tc.hit, 0
		if err := th.SetState(st); err != nil {
			t.Fatalf("SetState error: %v", err)
		}
		got := 0
		for i := 1; i <= 30 && got == 0; i++ {
			before := th.State().Rate
			batch(th, sec(float64(i+1)), 5000, acceptFirst(5000))
			if step := math.Log(th.State().Rate / before); step > gain*tw+1e-9 {
				got = i
			} else if math.Abs(step-gain*tw) > 1e-9 {
				t.Fatalf("hit share %v, clean interval %d: got step %v, want %v", tc.hit, i, step, gain*tw)
			}
		}
		if got != tc.faster {
			t.Errorf("hit share %v: got first faster interval %d, want %d", tc.hit, got, tc.faster)
		}
	}

	// Most calls rejected but some accepted: the cut is bounded at a
	// quarter too.
	th := mustNew(t, paced, nil)
	batch(th, sec(0), 1000, acceptFirst(100))
	batch(th, sec(1), 1000, acceptFirst(10)) // limited; 10 of about 100 accepted
	rate := th.State().Rate
	batch(th, sec(2), 1000, acceptFirst(1000))
	if got, want := th.State().Rate, rate/4; math.Abs(got-want) > 1e-9*want {
		t.Errorf("after an interval with 90 %% throttled: got Rate %v, want %v", got, want)
	}
}

// TestPacedOutage checks the fall to MinRate while the backend rejects
// everything and the climb back to the pace it coped with before.
func TestPacedOutage(t *testing.T) {
	th := mustNew(t, paced, nil)
	batch(th, sec(0), 200, acceptFirst(100))
	for s := 1; s < 10; s++ {
		batch(th, sec(float64(s)), 200, acceptFirst(1000)) // clean: Good is the pace
	}
	good := th.State().Good
	if good < 100 {
		t.Fatalf("got Good %v before the outage, want at least 100", good)
	}
	for s := 10; s < 40; s++ {
		batch(th, sec(float64(s)), 200, acceptFirst(0))
	}
	st := th.State()
	if st.Rate != adaptive.DefaultMinRate || st.Dark < 3 {
		t.Fatalf("after 30 s of outage: got Rate %v, Dark %d; want %v, at least 3", st.Rate, st.Dark, adaptive.DefaultMinRate)
	}
	var got []int
	for s := 40; s < 44; s++ {
		got = append(got, batch(th, sec(float64(s)), 1000, acceptFirst(1000)))
	}
	// One probe a second until the first clean interval ends, then eight
	// times more per interval, up to the last pace that limited before the
	// outage.
	want := []int{1, 8, 64, int(good)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sent per second after the outage mismatch (-want +got):\n%s", diff)
	}
}

func TestPacedDemandDropStopsLimiting(t *testing.T) {
	th := mustNew(t, paced, nil)
	for s := range 20 {
		batch(th, sec(float64(s)), 400, acceptFirst(100))
	}
	if !th.State().Limited {
		t.Fatalf("got Limited false under 4× overload, want true")
	}
	// The burst ends: 40 a second, which the backend accepts.
	batch(th, sec(20), 40, acceptFirst(40))
	if got := batch(th, sec(21), 40, acceptFirst(40)); got != 40 {
		t.Errorf("after the demand fell: got %d of 40 sent, want 40", got)
	}
	if th.State().Limited {
		t.Errorf("got Limited true after the demand fell, want false")
	}
}

func TestPacedRetryAfter(t *testing.T) {
	tests := []struct {
		name       string
		cfg        adaptive.Config
		retryAfter time.Duration
		at         time.Duration // when Decide is asked, after t0
		wantAllow  bool
		wantP      float64
	}{
		{"blocked until d minus a second", paced, 5 * time.Second, 3999 * time.Millisecond, false, 1},
		{"free at d minus a second", paced, 5 * time.Second, 4 * time.Second, true, 0},
		{"one second blocks nothing", paced, time.Second, time.Millisecond, true, 0},
		{"sub-second blocks nothing", paced, 300 * time.Millisecond, time.Millisecond, true, 0},
		{"SRE ignores it", adaptive.Config{}, time.Minute, time.Millisecond, true, 0.5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			th := mustNew(t, tc.cfg, constRand(alwaysAllow))
			th.Decide(t0)
			th.Record(t0, adaptive.Throttled)
			th.RecordRetryAfter(t0, tc.retryAfter)
			allow, p := th.Decide(t0.Add(tc.at))
			if allow != tc.wantAllow || p != tc.wantP {
				t.Errorf("Decide at t0+%v: got (%v, %v), want (%v, %v)", tc.at, allow, p, tc.wantAllow, tc.wantP)
			}
		})
	}
}

func TestPacedProbability(t *testing.T) {
	th := mustNew(t, paced, nil)
	if got := th.Probability(t0); got != 0 {
		t.Errorf("got Probability %v before any event, want 0", got)
	}
	batch(th, sec(0), 100, acceptFirst(50))
	sent := batch(th, sec(1), 100, acceptFirst(100))
	want := float64(100-sent) / 200 // this and the previous interval
	if got := th.Probability(sec(1)); got != want {
		t.Errorf("got Probability %v, want %v", got, want)
	}
	th.RecordRetryAfter(sec(1), 3*time.Second)
	if got := th.Probability(sec(2)); got != 1 {
		t.Errorf("got Probability %v while a Retry-After blocks, want 1", got)
	}
}

func TestPacedCountFailures(t *testing.T) {
	for _, asRejects := range []bool{false, true} {
		cfg := adaptive.Config{Mode: adaptive.ModePaced, CountFailuresAsRejects: asRejects}
		th := mustNew(t, cfg, nil)
		for s := range 5 {
			batch(th, sec(float64(s)), 100, func(int) adaptive.Outcome { return adaptive.Failed })
		}
		if got := th.State().Limited; got != asRejects {
			t.Errorf("CountFailuresAsRejects %v: got Limited %v after only failures, want %v", asRejects, got, asRejects)
		}
	}
}

func TestPacedStateRoundTrip(t *testing.T) {
	cfg := adaptive.Config{Mode: adaptive.ModePaced, Interval: 500 * time.Millisecond, K: 1.1}
	orig := mustNew(t, cfg, nil)
	for s := range 40 {
		batch(orig, sec(float64(s)/2), 300, acceptFirst(40+s))
	}
	orig.RecordRetryAfter(sec(20), 2500*time.Millisecond)
	b, err := json.Marshal(orig.State())
	if err != nil {
		t.Fatalf("json.Marshal(State()) error: %v", err)
	}
	var s adaptive.State
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("json.Unmarshal error: %v", err)
	}
	// Beam's schema coder turns nil slices into empty ones.
	s.BucketRequests, s.BucketAccepts = []int64{}, []int64{}
	restored := mustNew(t, cfg, nil)
	if err := restored.SetState(s); err != nil {
		t.Fatalf("SetState error: %v", err)
	}
	if diff := cmp.Diff(orig.State(), restored.State(), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("State() after SetState mismatch (-want +got):\n%s", diff)
	}
	for s := 41; s < 80; s++ {
		want := batch(orig, sec(float64(s)/2), 300, acceptFirst(60))
		got := batch(restored, sec(float64(s)/2), 300, acceptFirst(60))
		if got != want {
			t.Fatalf("half-second %d: got %d sent after SetState, want %d", s, got, want)
		}
	}
}

// TestSetStateEmptySlices checks that a State whose nil slices became empty
// ones (as Beam's schema coder makes them) restores FixedReset and ModePaced
// throttlers exactly.
func TestSetStateEmptySlices(t *testing.T) {
	for _, cfg := range []adaptive.Config{{}, paced} {
		t.Run(cfg.Mode.String(), func(t *testing.T) {
			orig := mustNew(t, cfg, constRand(alwaysAllow))
			batch(orig, sec(0), 50, acceptFirst(10))
			batch(orig, sec(1), 50, acceptFirst(10))
			s := orig.State()
			if s.BucketRequests != nil || s.BucketAccepts != nil {
				t.Fatalf("got bucket slices %v %v, want nil", s.BucketRequests, s.BucketAccepts)
			}
			s.BucketRequests, s.BucketAccepts = []int64{}, []int64{}
			restored := mustNew(t, cfg, constRand(alwaysAllow))
			if err := restored.SetState(s); err != nil {
				t.Fatalf("SetState with empty slices error: %v", err)
			}
			if diff := cmp.Diff(orig.State(), restored.State()); diff != "" {
				t.Errorf("State() after SetState mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSetStateModeMismatchResets(t *testing.T) {
	sre := mustNew(t, adaptive.Config{}, constRand(alwaysAllow))
	batch(sre, sec(0), 50, acceptFirst(10))
	p := mustNew(t, paced, nil)
	batch(p, sec(0), 50, acceptFirst(10))
	batch(p, sec(1), 50, acceptFirst(10))
	for _, tc := range []struct {
		name     string
		from, to *adaptive.Throttler
		cfg      adaptive.Config
	}{
		{"SRE into paced", sre, mustNew(t, paced, nil), paced},
		{"paced into SRE", p, mustNew(t, adaptive.Config{}, nil), adaptive.Config{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.to.SetState(tc.from.State()); err != nil {
				t.Fatalf("SetState error: %v", err)
			}
			fresh := mustNew(t, tc.cfg, nil)
			if diff := cmp.Diff(fresh.State(), tc.to.State()); diff != "" {
				t.Errorf("State() after SetState of the other mode mismatch (-fresh +got):\n%s", diff)
			}
		})
	}
}

func TestSetStateInvalidPaced(t *testing.T) {
	base := func() adaptive.State {
		th := mustNew(t, paced, nil)
		batch(th, sec(0), 100, acceptFirst(50))
		batch(th, sec(1), 100, acceptFirst(50))
		return th.State()
	}
	tests := []struct {
		name   string
		modify func(*adaptive.State)
	}{
		{"unknown Mode", func(s *adaptive.State) { s.Mode = 7 }},
		{"NaN Rate", func(s *adaptive.State) { s.Rate = math.NaN() }},
		{"infinite Rate", func(s *adaptive.State) { s.Rate = math.Inf(1) }},
		{"negative Tokens", func(s *adaptive.State) { s.Tokens = -1 }},
		{"NaN Good", func(s *adaptive.State) { s.Good = math.NaN() }},
		{"negative Hit", func(s *adaptive.State) { s.Hit = -0.5 }},
		{"infinite Demand", func(s *adaptive.State) { s.Demand = math.Inf(1) }},
		{"negative Sent", func(s *adaptive.State) { s.Sent = -1 }},
		{"negative Streak", func(s *adaptive.State) { s.Streak = -1 }},
		{"negative PrevRejected", func(s *adaptive.State) { s.PrevRejected = -3 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			th := mustNew(t, paced, nil)
			batch(th, sec(0), 10, acceptFirst(10))
			before := th.State()
			s := base()
			tc.modify(&s)
			if err := th.SetState(s); !errors.Is(err, adaptive.ErrInvalidState) {
				t.Errorf("got error %v, want one wrapping ErrInvalidState", err)
			}
			if diff := cmp.Diff(before, th.State()); diff != "" {
				t.Errorf("State() changed by a failed SetState (-before +after):\n%s", diff)
			}
		})
	}
}

func TestLimiterRecordRetryAfter(t *testing.T) {
	l, err := adaptive.NewLimiter(adaptive.Config{Mode: adaptive.ModePaced})
	if err != nil {
		t.Fatalf("NewLimiter error: %v", err)
	}
	if allow, _ := l.Allow(); !allow {
		t.Fatalf("got first Allow false, want true")
	}
	l.Record(adaptive.Throttled)
	l.RecordRetryAfter(time.Hour)
	if allow, p := l.Allow(); allow || p != 1 {
		t.Errorf("got Allow (%v, %v) during a Retry-After of an hour, want (false, 1)", allow, p)
	}
	if got := l.Probability(); got != 1 {
		t.Errorf("got Probability %v during a Retry-After, want 1", got)
	}
}
