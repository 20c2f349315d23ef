package adaptive_test

import (
	"bytes"
	"errors"
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
func play(th *adaptive.SRE, r *float64, now time.Time, evs []event) ([]decision, time.Time) {
	var got []decision
	for _, e := range evs {
		now = now.Add(e.advance)
		*r = e.r
		allow, p := decide(th, now)
		if allow {
			record(th, now, e.outcome)
		}
		req, acc := adaptive.Counts(th, now)
		got = append(got, decision{allow, p, req, acc})
	}
	return got, now
}

// marshal returns th's state, failing the test on an error.
func marshal(t *testing.T, th *adaptive.SRE) []byte {
	t.Helper()
	b, err := th.MarshalBinary()
	if err != nil {
		t.Fatalf("MarshalBinary error: %v", err)
	}
	return b
}

func TestStateRoundTrip(t *testing.T) {
	configs := []struct {
		name string
		cfg  adaptive.SREConfig
	}{
		{"fixed 10s", adaptive.SREConfig{ResetInterval: 10 * time.Second}},
		{"fixed 3s K=1.1 failures as rejects", adaptive.SREConfig{K: 1.1, ResetInterval: 3 * time.Second, CountFailuresAsRejects: true}},
		{"sliding 10s", adaptive.SREConfig{Sliding: true, WindowSize: 10 * time.Second, Bucket: time.Second}},
		{"sliding 2.5s K=1.1", adaptive.SREConfig{Sliding: true, K: 1.1, WindowSize: 2500 * time.Millisecond, Bucket: 500 * time.Millisecond}},
	}
	evs := script(400)
	for _, c := range configs {
		cfg := c.cfg
		t.Run(c.name, func(t *testing.T) {
			var r float64
			rnd := func() float64 { return r }
			orig := mustNew(t, cfg, rnd)
			_, now := play(orig, &r, t0, evs[:200])

			b := marshal(t, orig)
			restored := mustNew(t, cfg, rnd)
			if err := restored.UnmarshalBinary(b); err != nil {
				t.Fatalf("UnmarshalBinary error: %v", err)
			}
			if got := marshal(t, restored); !bytes.Equal(got, b) {
				t.Errorf("state after UnmarshalBinary:\n%q\nwant\n%q", got, b)
			}

			want, _ := play(orig, &r, now, evs[200:])
			got, _ := play(restored, &r, now, evs[200:])
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("decisions after UnmarshalBinary mismatch (-want +got):\n%s", diff)
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

func TestUnmarshalShapes(t *testing.T) {
	fixed := adaptive.SREConfig{ResetInterval: time.Minute}
	sliding := func(size, bucket time.Duration) adaptive.SREConfig {
		return adaptive.SREConfig{Sliding: true, WindowSize: size, Bucket: bucket}
	}
	tests := []struct {
		name         string
		from, to     adaptive.SREConfig
		at           time.Duration // when counts are read, after t0
		wantRequests int64
		wantStarted  bool
	}{
		{"fixed to fixed", fixed, fixed, 0, 10, true},
		{"fixed to longer fixed keeps start and counts", fixed, adaptive.SREConfig{ResetInterval: time.Hour}, 30 * time.Minute, 10, true},
		{"fixed to shorter fixed keeps start", fixed, adaptive.SREConfig{ResetInterval: 20 * time.Second}, 20 * time.Second, 0, true},
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
			if err := to.UnmarshalBinary(marshal(t, from)); err != nil {
				t.Fatalf("UnmarshalBinary error: %v", err)
			}
			if got := adaptive.Started(to); got != tc.wantStarted {
				t.Errorf("got started %v, want %v", got, tc.wantStarted)
			}
			if req, acc := adaptive.Counts(to, t0.Add(tc.at)); req != tc.wantRequests || acc != 0 {
				t.Errorf("got counts (%d, %d), want (%d, 0)", req, acc, tc.wantRequests)
			}
		})
	}
}

// TestUnmarshalResets: empty data, and the state of an unstarted
// SRE, reset a SRE to its state after New.
func TestUnmarshalResets(t *testing.T) {
	for _, w := range []bool{false, true} {
		fresh := mustNew(t, adaptive.SREConfig{Sliding: w}, constRand(alwaysAllow))
		for name, data := range map[string][]byte{"empty": nil, "unstarted": marshal(t, fresh)} {
			t.Run(windowName(w)+"/"+name, func(t *testing.T) {
				th := mustNew(t, adaptive.SREConfig{Sliding: w}, constRand(alwaysAllow))
				throttledAt(th, t0, 5)
				if err := th.UnmarshalBinary(data); err != nil {
					t.Fatalf("UnmarshalBinary error: %v", err)
				}
				if got, want := marshal(t, th), marshal(t, fresh); !bytes.Equal(got, want) {
					t.Errorf("state after UnmarshalBinary(%q):\n%q\nwant that of a new SRE\n%q", data, got, want)
				}
			})
		}
	}
}

// TestUnmarshalInvalid: state no SRE could have written is refused
// with ErrState, and leaves the SRE reset.
func TestUnmarshalInvalid(t *testing.T) {
	state := func(js string) []byte { return append([]byte{adaptive.StateVersion}, js...) }
	tests := []struct {
		name string
		data []byte
	}{
		{"unknown version", append([]byte{adaptive.StateVersion + 1}, `{"Started":true}`...)},
		{"pacer state", []byte{0x22, 0}},
		{"not JSON", state("{")},
		{"unknown window", state(`{"Started":true,"Window":9}`)},
		{"negative requests", state(`{"Started":true,"Requests":-1}`)},
		{"negative accepts", state(`{"Started":true,"Accepts":-1}`)},
		{"bucket lengths differ", state(`{"Started":true,"Window":1,"BucketNanos":1000000000,"BucketRequests":[0,0,0],"BucketAccepts":[0,0]}`)},
		{"negative bucket", state(`{"Started":true,"Window":1,"BucketNanos":1000000000,"BucketRequests":[1,-1],"BucketAccepts":[0,0]}`)},
		{"bucket sum overflows", state(`{"Started":true,"Window":1,"BucketNanos":1000000000,"BucketRequests":[9223372036854775807,1],"BucketAccepts":[0,0]}`)},
	}
	for _, tc := range tests {
		for _, w := range []bool{false, true} {
			t.Run(tc.name+"/"+windowName(w), func(t *testing.T) {
				th := mustNew(t, adaptive.SREConfig{Sliding: w}, constRand(alwaysAllow))
				throttledAt(th, t0, 5)
				if err := th.UnmarshalBinary(tc.data); !errors.Is(err, adaptive.ErrState) {
					t.Errorf("got error %v, want one wrapping ErrState", err)
				}
				if adaptive.Started(th) {
					t.Errorf("got a started SRE after a refused state, want it reset")
				}
				if req, acc := adaptive.Counts(th, t0); req != 0 || acc != 0 {
					t.Errorf("got counts (%d, %d) after a refused state, want (0, 0)", req, acc)
				}
			})
		}
	}
}
