package adaptive_test

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// event is one step of a scripted run.
type event struct {
	advance time.Duration
	r       float64          // random value for Decide
	outcome adaptive.Outcome // recorded if allowed
}

// decision is what Decide returned, plus the counts after the event.
type decision struct {
	Allow             bool
	P                 float64
	Requests, Accepts int64
}

// script makes n pseudo-random events from a fixed seed, with the backend
// throttling heavily so that p is often above zero.
func script(n int) []event {
	src := rand.New(rand.NewPCG(1, 2))
	evs := make([]event, n)
	for i := range evs {
		evs[i] = event{
			advance: time.Duration(src.IntN(700)) * time.Millisecond,
			r:       src.Float64(),
			outcome: adaptive.Outcome(src.IntN(4) % 3), // half Accepted
		}
		if src.IntN(3) > 0 {
			evs[i].outcome = adaptive.Throttled
		}
	}
	return evs
}

// play runs evs on th starting at now, with r as the random value holder.
func play(th *adaptive.Throttler, r *float64, now time.Time, evs []event) ([]decision, time.Time) {
	var got []decision
	for _, e := range evs {
		now = now.Add(e.advance)
		*r = e.r
		allow, p := th.Decide(now)
		if allow {
			th.Record(now, e.outcome)
		}
		req, acc := th.Counts(now)
		got = append(got, decision{allow, p, req, acc})
	}
	return got, now
}

func TestStateRoundTrip(t *testing.T) {
	configs := []struct {
		name string
		cfg  adaptive.Config
	}{
		{"fixed 10s", adaptive.Config{ResetInterval: 10 * time.Second}},
		{"fixed 3s K=1.1 failures as rejects", adaptive.Config{K: 1.1, ResetInterval: 3 * time.Second, CountFailuresAsRejects: true}},
		{"sliding 10s", adaptive.Config{Window: adaptive.Sliding, WindowSize: 10 * time.Second, Bucket: time.Second}},
		{"sliding 2.5s K=1.1", adaptive.Config{Window: adaptive.Sliding, K: 1.1, WindowSize: 2500 * time.Millisecond, Bucket: 500 * time.Millisecond}},
	}
	evs := script(400)
	for _, c := range configs {
		cfg := c.cfg
		t.Run(c.name, func(t *testing.T) {
			var r float64
			rnd := func() float64 { return r }
			orig := mustNew(t, cfg, rnd)
			_, now := play(orig, &r, t0, evs[:200])

			// Through JSON, as a Beam state coder might store it.
			b, err := json.Marshal(orig.State())
			if err != nil {
				t.Fatalf("json.Marshal(State()) error: %v", err)
			}
			var s adaptive.State
			if err := json.Unmarshal(b, &s); err != nil {
				t.Fatalf("json.Unmarshal error: %v", err)
			}
			if diff := cmp.Diff(orig.State(), s); diff != "" {
				t.Errorf("State after JSON round trip mismatch (-want +got):\n%s", diff)
			}
			restored := mustNew(t, cfg, rnd)
			if err := restored.SetState(s); err != nil {
				t.Fatalf("SetState error: %v", err)
			}
			if diff := cmp.Diff(orig.State(), restored.State()); diff != "" {
				t.Errorf("State() after SetState mismatch (-want +got):\n%s", diff)
			}

			want, _ := play(orig, &r, now, evs[200:])
			got, _ := play(restored, &r, now, evs[200:])
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("decisions after SetState mismatch (-want +got):\n%s", diff)
			}
			var rejected int
			for _, d := range want {
				if !d.Allow {
					rejected++
				}
			}
			if rejected == 0 || rejected == len(want) {
				t.Errorf("got %d of %d requests rejected; want a script that both allows and rejects", rejected, len(want))
			}
		})
	}
}

// TestStateIsCopy checks that State does not alias the ring buffer.
func TestStateIsCopy(t *testing.T) {
	th := mustNew(t, adaptive.Config{Window: adaptive.Sliding}, constRand(alwaysAllow))
	throttledAt(th, t0, 1)
	s := th.State()
	throttledAt(th, t0, 1)
	var sum int64
	for _, v := range s.BucketRequests {
		sum += v
	}
	if sum != 1 || s.Requests != 1 {
		t.Errorf("got snapshot with %d bucket requests and Requests %d, want 1 and 1", sum, s.Requests)
	}
}

func TestSetStateShapes(t *testing.T) {
	fixed := adaptive.Config{ResetInterval: time.Minute}
	sliding := func(size, bucket time.Duration) adaptive.Config {
		return adaptive.Config{Window: adaptive.Sliding, WindowSize: size, Bucket: bucket}
	}
	tests := []struct {
		name         string
		from, to     adaptive.Config
		at           time.Duration // when counts are read, after t0
		wantRequests int64
		wantStarted  bool
	}{
		{"fixed to fixed", fixed, fixed, 0, 10, true},
		{"fixed to longer fixed keeps start and counts", fixed, adaptive.Config{ResetInterval: time.Hour}, 30 * time.Minute, 10, true},
		{"fixed to shorter fixed keeps start", fixed, adaptive.Config{ResetInterval: 20 * time.Second}, 20 * time.Second, 0, true},
		{"sliding to same sliding", sliding(10*time.Second, time.Second), sliding(10*time.Second, time.Second), 9 * time.Second, 10, true},
		{"sliding to fewer buckets keeps newest", sliding(10*time.Second, time.Second), sliding(3*time.Second, time.Second), 9 * time.Second, 3, true},
		{"sliding to more buckets keeps all", sliding(10*time.Second, time.Second), sliding(20*time.Second, time.Second), 9 * time.Second, 10, true},
		{"sliding to more buckets forgets later", sliding(10*time.Second, time.Second), sliding(20*time.Second, time.Second), 20 * time.Second, 9, true},
		{"sliding bucket width changed resets", sliding(10*time.Second, time.Second), sliding(10*time.Second, 2*time.Second), 9 * time.Second, 0, false},
		{"fixed to sliding resets", fixed, sliding(10*time.Second, time.Second), 9 * time.Second, 0, false},
		{"sliding to fixed resets", sliding(10*time.Second, time.Second), fixed, 9 * time.Second, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			from := mustNew(t, tc.from, constRand(alwaysAllow))
			for i := range 10 { // one throttled request per second, t0 .. t0+9s
				throttledAt(from, t0.Add(time.Duration(i)*time.Second), 1)
			}
			to := mustNew(t, tc.to, constRand(alwaysAllow))
			throttledAt(to, t0, 100) // to be overwritten
			if err := to.SetState(from.State()); err != nil {
				t.Fatalf("SetState error: %v", err)
			}
			if got := to.State().Started; got != tc.wantStarted {
				t.Errorf("got Started %v, want %v", got, tc.wantStarted)
			}
			if req, acc := to.Counts(t0.Add(tc.at)); req != tc.wantRequests || acc != 0 {
				t.Errorf("got counts (%d, %d), want (%d, 0)", req, acc, tc.wantRequests)
			}
		})
	}
}

func TestSetStateZeroResets(t *testing.T) {
	for _, w := range []adaptive.Window{adaptive.FixedReset, adaptive.Sliding} {
		t.Run(w.String(), func(t *testing.T) {
			th := mustNew(t, adaptive.Config{Window: w}, constRand(alwaysAllow))
			throttledAt(th, t0, 5)
			if err := th.SetState(adaptive.State{}); err != nil {
				t.Fatalf("SetState(State{}) error: %v", err)
			}
			fresh := mustNew(t, adaptive.Config{Window: w}, constRand(alwaysAllow))
			if diff := cmp.Diff(fresh.State(), th.State()); diff != "" {
				t.Errorf("State() after SetState(State{}) mismatch (-fresh +got):\n%s", diff)
			}
		})
	}
}

func TestSetStateInvalid(t *testing.T) {
	tests := []struct {
		name string
		s    adaptive.State
	}{
		{"unknown window", adaptive.State{Started: true, Window: 9}},
		{"negative requests", adaptive.State{Started: true, Requests: -1}},
		{"negative accepts", adaptive.State{Started: true, Accepts: -1}},
		{"bucket lengths differ", adaptive.State{Started: true, Window: 1, BucketNanos: 1e9,
			BucketRequests: make([]int64, 3), BucketAccepts: make([]int64, 2)}},
		{"negative bucket", adaptive.State{Started: true, Window: 1, BucketNanos: 1e9,
			BucketRequests: []int64{1, -1}, BucketAccepts: []int64{0, 0}}},
		{"bucket sum overflows", adaptive.State{Started: true, Window: 1, BucketNanos: 1e9,
			BucketRequests: []int64{math.MaxInt64, 1}, BucketAccepts: []int64{0, 0}}},
	}
	for _, tc := range tests {
		for _, w := range []adaptive.Window{adaptive.FixedReset, adaptive.Sliding} {
			t.Run(tc.name+"/"+w.String(), func(t *testing.T) {
				th := mustNew(t, adaptive.Config{Window: w}, constRand(alwaysAllow))
				throttledAt(th, t0, 5)
				before := th.State()
				err := th.SetState(tc.s)
				if !errors.Is(err, adaptive.ErrInvalidState) {
					t.Errorf("got error %v, want one wrapping ErrInvalidState", err)
				}
				if diff := cmp.Diff(before, th.State()); diff != "" {
					t.Errorf("State() changed by a failed SetState (-before +after):\n%s", diff)
				}
			})
		}
	}
}
