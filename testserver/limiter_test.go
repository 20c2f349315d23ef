package testserver

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// clone returns a deep copy of l.
func (l *limiter) clone() *limiter {
	c := *l
	if l.rule != nil {
		r := *l.rule
		c.rule = &r
	}
	if l.windowSrc != nil {
		src := *l.windowSrc
		c.windowSrc = &src
	}
	return &c
}

var cmpLimiter = cmp.AllowUnexported(limiter{}, gcra{}, rand.PCG{})

// TestTakeCostIsUnitsAtOnce checks take(now, c) against an independent
// reading of the rule: a request of cost c is accepted iff c requests of
// cost 1 at the same instant would all be, leaving the limiter as they
// would; otherwise it takes nothing, and the wait it returns is exact: at
// now + wait the request would be accepted, a nanosecond earlier not.
func TestTakeCostIsUnitsAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"token bucket", Config{Quota: 10}},
		{"token bucket, fractional refills", Config{Quota: 7, Period: time.Minute}},
		{"token bucket, refill step", Config{Quota: 12, Period: 3 * time.Second, Refill: 700 * time.Millisecond}},
		{"fixed window", Config{Quota: 10, Mode: FixedWindow}},
		{"fixed window, drifting", Config{Quota: 10, Mode: FixedWindow, WindowJitter: 700 * time.Millisecond, Seed: 3}},
		{"gcra, no burst", Config{Quota: 10, Mode: GCRA}},
		{"gcra, burst 8", Config{Quota: 10, Mode: GCRA, Burst: 8}},
		{"gcra, thirds of a nanosecond", Config{Quota: 3, Period: 3*time.Second + 1, Mode: GCRA, Burst: 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := tc.cfg.withDefaults()
			if err != nil {
				t.Fatal(err)
			}
			now := time.Unix(1_000_000, 0)
			l := newLimiter(now, cfg)
			rng := rand.New(rand.NewPCG(1, 2))
			var accepted, rejected int
			for i := range 3000 {
				now = now.Add(time.Duration(rng.Int64N(int64(cfg.Period / 4))))
				cost := rng.Int64N(l.maxCost() + 1)

				units, unitsOK := l.clone(), true
				for range cost {
					if ok, _ := units.take(now, 1); !ok {
						unitsOK = false
						break
					}
				}
				before := l.clone()
				ok, wait := l.take(now, cost)
				if ok != unitsOK {
					t.Fatalf("request %d at %v, cost %d: take got %v, want %v as %d unit requests", i, now, cost, ok, unitsOK, cost)
				}
				if ok {
					accepted++
					if diff := cmp.Diff(units, l, cmpLimiter); diff != "" {
						t.Fatalf("request %d, cost %d: state differs from %d unit requests (-units +take):\n%s", i, cost, cost, diff)
					}
					continue
				}
				rejected++
				before.advance(now)
				if diff := cmp.Diff(before, l, cmpLimiter); diff != "" {
					t.Fatalf("request %d, cost %d: a rejected request changed the state (-before +after):\n%s", i, cost, diff)
				}
				if wait <= 0 {
					t.Fatalf("request %d, cost %d: rejected with wait %v, want > 0", i, cost, wait)
				}
				if ok, _ := l.clone().take(now.Add(wait-1), cost); ok {
					t.Fatalf("request %d, cost %d: accepted at wait-1ns = %v, want the wait to be the least", i, cost, wait-1)
				}
				if ok, _ := l.clone().take(now.Add(wait), cost); !ok {
					t.Fatalf("request %d, cost %d: rejected after the wait %v", i, cost, wait)
				}
			}
			if accepted < 100 || rejected < 100 {
				t.Errorf("accepted %d, rejected %d: want at least 100 of each for a meaningful test", accepted, rejected)
			}
		})
	}
}

func TestMaxCost(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want int64
	}{
		{"unlimited", Config{}, math.MaxInt64},
		{"unlimited gcra", Config{Mode: GCRA, Burst: 3}, math.MaxInt64},
		{"token bucket: the capacity", Config{Quota: 60000, Period: time.Minute}, 60000},
		{"fixed window: the quota", Config{Quota: 10, Mode: FixedWindow}, 10},
		{"gcra, no burst", Config{Quota: 10, Mode: GCRA}, 1},
		{"gcra, burst 1", Config{Quota: 10, Mode: GCRA, Burst: 1}, 1},
		{"gcra, burst 7", Config{Quota: 3, Mode: GCRA, Burst: 7}, 7},
		{"gcra, burst beyond the period", Config{Quota: 3, Mode: GCRA, Burst: 3000}, 3000},
		// A tolerance capped at a century: 876000 hours, plus one.
		{"gcra, huge burst", Config{Quota: 1, Period: time.Hour, Mode: GCRA, Burst: 1 << 40}, 876001},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := tc.cfg.withDefaults()
			if err != nil {
				t.Fatal(err)
			}
			if got := newLimiter(time.Unix(0, 0), cfg).maxCost(); got != tc.want {
				t.Errorf("maxCost(): got %d, want %d", got, tc.want)
			}
		})
	}
}

// TestTakeCostZero checks that cost 0 is accepted and takes nothing, even
// with the quota used up or over-used after a cut.
func TestTakeCostZero(t *testing.T) {
	for _, mode := range []Mode{TokenBucket, FixedWindow, GCRA} {
		t.Run(string(mode), func(t *testing.T) {
			cfg, _ := Config{Quota: 4, Mode: mode}.withDefaults()
			now := time.Unix(0, 0)
			l := newLimiter(now, cfg)
			if ok, _ := l.take(now, 1); !ok {
				t.Fatal("first request rejected")
			}
			l.set(now, 1, time.Second)
			for range 2 {
				l.take(now, 1) // use it up
			}
			before := l.clone()
			if ok, wait := l.take(now, 0); !ok || wait != 0 {
				t.Errorf("take(now, 0): got %v %v, want true 0", ok, wait)
			}
			if diff := cmp.Diff(before, l, cmpLimiter); diff != "" {
				t.Errorf("take(now, 0) changed the state (-before +after):\n%s", diff)
			}
		})
	}
}

// TestDriftingWindowStart checks where a drifting fixed window limiter's
// first window lies: it began up to a Period before the limiter was made,
// lasts Period plus up to WindowJitter, and differs from seed to seed.
func TestDriftingWindowStart(t *testing.T) {
	cfg, err := Config{Quota: 99, Period: 4 * time.Second, WindowJitter: time.Second, Mode: FixedWindow}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_000_000, 0)
	offsets := map[time.Duration]bool{}
	for seed := range uint64(20) {
		cfg.Seed = seed
		l := newLimiter(now, cfg)
		offset := now.Sub(l.windowStart)
		if offset < 0 || offset >= cfg.Period {
			t.Errorf("seed %d: the first window began %v before the limiter, want in [0, %v)", seed, offset, cfg.Period)
		}
		if l.windowLen < cfg.Period || l.windowLen >= cfg.Period+cfg.WindowJitter {
			t.Errorf("seed %d: the first window lasts %v, want in [%v, %v)", seed, l.windowLen, cfg.Period, cfg.Period+cfg.WindowJitter)
		}
		if again := newLimiter(now, cfg); !again.windowStart.Equal(l.windowStart) || again.windowLen != l.windowLen {
			t.Errorf("seed %d: a second limiter's first window is %v+%v, want %v+%v", seed, again.windowStart, again.windowLen, l.windowStart, l.windowLen)
		}
		offsets[offset] = true
	}
	if len(offsets) < 20 {
		t.Errorf("20 seeds: got %d distinct offsets, want 20", len(offsets))
	}
}
