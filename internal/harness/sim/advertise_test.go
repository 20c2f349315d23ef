package sim_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/beamthrottle/beamthrottle/internal/harness/sim"
	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// advStart is the wall-clock time of the run's start in the tests of
// Advertise.
var advStart = time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)

// advStep is what a backend advertises after take requests served at at.
type advStep struct {
	at   time.Duration
	take int // requests served at at
	want adaptive.Quota
}

// TestAdvertise: each backend advertises its state after the requests
// served: a fixed window its quota, what is left and its end; a bucket
// its depth, its whole tokens and when it is full again. Advertising
// changes nothing the backend answers.
func TestAdvertise(t *testing.T) {
	steady := []sim.Phase{{Capacity: 1}}
	outage := []sim.Phase{{Capacity: 1}, {At: 10 * time.Second, Capacity: 1, Outage: true}}
	reset := func(d time.Duration) time.Time { return advStart.Add(d) }
	window := func(rem int64, r time.Duration) adaptive.Quota {
		return adaptive.Quota{Limit: 600, Remaining: rem, Reset: reset(r), Window: time.Minute}
	}
	tests := []struct {
		name     string
		model    sim.BackendModel
		capacity float64
		phases   []sim.Phase
		steps    []advStep
	}{
		{"fixed window", sim.FixedWindow(time.Minute, false), 10, steady, []advStep{
			{0, 1, window(599, time.Minute)},
			{30 * time.Second, 599, window(0, time.Minute)},
			{59 * time.Second, 1, window(0, time.Minute)}, // refused
			{time.Minute, 0, window(600, 2*time.Minute)},
			{90 * time.Second, 10, window(590, 2*time.Minute)},
		}},
		{"fixed window, outage", sim.FixedWindow(time.Minute, true), 10, outage, []advStep{
			{0, 5, window(595, time.Minute)},
			{10 * time.Second, 0, adaptive.Quota{Remaining: 0, Reset: reset(time.Minute), Window: time.Minute}},
		}},
		{"aligned to the clock, 40 s into a window", sim.AlignedWindow(time.Minute, 40*time.Second, false), 10, steady, []advStep{
			{0, 1, window(599, 20*time.Second)},
			{19 * time.Second, 599, window(0, 20*time.Second)},
			{20 * time.Second, 1, window(599, 80*time.Second)},
		}},
		{"500 a minute, refilling", sim.TokenBucket(time.Minute, true), 500.0 / 60, steady, []advStep{
			{0, 0, adaptive.Quota{Limit: 500, Remaining: 500, Reset: reset(0), Refill: true}},
			{0, 1, adaptive.Quota{Limit: 500, Remaining: 499, Reset: reset(120 * time.Millisecond), Refill: true}},
			{0, 99, adaptive.Quota{Limit: 500, Remaining: 400, Reset: reset(12 * time.Second), Refill: true}},
			{6 * time.Second, 0, adaptive.Quota{Limit: 500, Remaining: 450, Reset: reset(12 * time.Second), Refill: true}},
			// 450 + 0.1 s × 500/60 − 51 left: 12.02 s from full.
			{6100 * time.Millisecond, 51, adaptive.Quota{Limit: 500, Remaining: 399, Reset: reset(18120 * time.Millisecond), Refill: true}},
			{6100 * time.Millisecond, 0, adaptive.Quota{Limit: 500, Remaining: 399, Reset: reset(18120 * time.Millisecond), Refill: true}},
			// One more: 120 ms later; from a time between milliseconds, the
			// time to full (1,239.5 ms) rounded up.
			{17*time.Second + 500*time.Microsecond, 1, adaptive.Quota{Limit: 500, Remaining: 489,
				Reset: reset(18240500 * time.Microsecond), Refill: true}},
			{time.Minute, 0, adaptive.Quota{Limit: 500, Remaining: 500, Reset: reset(time.Minute), Refill: true}},
		}},
		{"refilled every 100 ms", sim.SteppedTokenBucket(time.Second, 100*time.Millisecond, false), 10, steady, []advStep{
			{0, 3, adaptive.Quota{Limit: 10, Remaining: 7, Reset: reset(300 * time.Millisecond), Refill: true}},
			{150 * time.Millisecond, 0, adaptive.Quota{Limit: 10, Remaining: 8, Reset: reset(300 * time.Millisecond), Refill: true}},
			{200 * time.Millisecond, 0, adaptive.Quota{Limit: 10, Remaining: 9, Reset: reset(300 * time.Millisecond), Refill: true}},
		}},
		{"bucket, outage", sim.TokenBucket(time.Second, true), 10, outage, []advStep{
			{0, 4, adaptive.Quota{Limit: 10, Remaining: 6, Reset: reset(400 * time.Millisecond), Refill: true}},
			{10 * time.Second, 0, adaptive.Quota{Limit: 0, Remaining: 0, Refill: true}},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := sim.NewCapacity(tc.capacity, tc.phases)
			b, ok := tc.model.New(c, 1).(sim.Advertiser)
			if !ok {
				t.Fatalf("%s is not an Advertiser", tc.model.Name)
			}
			plain := tc.model.New(c, 1) // the same requests, never asked to advertise
			for _, s := range tc.steps {
				for range s.take {
					ok, ra := b.Take(s.at)
					if ok2, ra2 := plain.Take(s.at); ok != ok2 || ra != ra2 {
						t.Fatalf("at %v: Take got %v, %v after advertising, want %v, %v as without", s.at, ok, ra, ok2, ra2)
					}
				}
				if diff := cmp.Diff([]adaptive.Quota{s.want}, b.Advertise(advStart, s.at)); diff != "" {
					t.Errorf("at %v after %d taken: Advertise mismatch (-want +got):\n%s", s.at, s.take, diff)
				}
			}
		})
	}
}

// TestAdvertiseDrifting: drifting windows advertise no Window, and when a
// window is used up its Reset is when the backend accepts again.
func TestAdvertiseDrifting(t *testing.T) {
	b := sim.DriftingWindow(4*time.Second, time.Second, false).New(sim.NewCapacity(22, []sim.Phase{{Capacity: 1}}), 7).(sim.Advertiser)
	for at := time.Duration(0); at < time.Minute; at += 10 * time.Millisecond {
		b.Take(at)
		qs := b.Advertise(advStart, at)
		if len(qs) != 1 {
			t.Fatalf("at %v: got %d limits, want 1", at, len(qs))
		}
		q := qs[0]
		if q.Window != 0 || q.Refill || q.Limit != 99 {
			t.Fatalf("at %v: got %+v, want Limit 99, no Window, not Refill", at, q)
		}
		if next := b.NextAvailable(at); q.Remaining == 0 && q.Reset != advStart.Add(next) {
			t.Fatalf("at %v: got Reset %v with none remaining, want %v, when the backend accepts again", at, q.Reset, advStart.Add(next))
		}
	}
}

func TestAlignedWindowPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("AlignedWindow(1m, 1m): no panic, want one")
		}
	}()
	sim.AlignedWindow(time.Minute, time.Minute, false)
}

// quotaSeen records the quotas its answers carried.
type quotaSeen struct {
	script
	seen [][]adaptive.Quota
}

func (q *quotaSeen) Record(now time.Time, a adaptive.Answer) {
	q.seen = append(q.seen, a.Quota)
}

// TestAdvertiseConfig: with Config.Advertise every answer carries the
// backend's quota, each worker's Reset moved by AdvertiseSkew (later on
// even workers, earlier on odd ones); without it none does.
func TestAdvertiseConfig(t *testing.T) {
	tests := []struct {
		name      string
		advertise bool
		skew      time.Duration
		resets    []time.Duration // by group, of the first answer
	}{
		{"off", false, 0, nil},
		{"on", true, 0, []time.Duration{time.Minute, time.Minute}},
		{"skewed", true, time.Second, []time.Duration{61 * time.Second, 59 * time.Second}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pols := map[int]*quotaSeen{}
			alg := sim.Algorithm{Name: "seen", New: func(e sim.Env) adaptive.Policy {
				p := &quotaSeen{script: script{start: e.Start, decide: send}}
				pols[e.Group] = p
				return p
			}}
			var epoch time.Time
			cfg := sim.Config{Groups: 2, Workers: 2, Backend: sim.FixedWindow(time.Minute, false), Capacity: 10,
				Advertise: tc.advertise, AdvertiseSkew: tc.skew}
			if _, err := sim.Run(boundedInput(6, 30*time.Second), alg, cfg); err != nil {
				t.Fatal(err)
			}
			for g, p := range pols {
				epoch = p.start
				if len(p.seen) != 3 {
					t.Fatalf("group %d: got %d answers, want 3", g, len(p.seen))
				}
				for i, qs := range p.seen {
					if tc.resets == nil {
						if qs != nil {
							t.Errorf("group %d, answer %d: got quota %+v, want none", g, i, qs)
						}
						continue
					}
					if len(qs) != 1 || qs[0].Limit != 600 || qs[0].Reset != epoch.Add(tc.resets[g]) || qs[0].Remaining > 599-int64(i) {
						t.Errorf("group %d, answer %d: got %+v, want Limit 600, Remaining at most %d, Reset at %v",
							g, i, qs, 599-i, tc.resets[g])
					}
				}
			}
		})
	}
	cfg := sim.Config{AdvertiseSkew: -time.Second, Advertise: true}
	if _, err := sim.Run(boundedInput(1, time.Second), sim.NoneAlgorithm(), cfg); err == nil {
		t.Error("Run with a negative AdvertiseSkew: no error, want one")
	}
}
