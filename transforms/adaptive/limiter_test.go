package adaptive_test

import (
	"math"
	"sync"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// TestLimiterParallel hammers one Limiter from several goroutines; run it
// with -race.
func TestLimiterParallel(t *testing.T) {
	for _, w := range []adaptive.Window{adaptive.FixedReset, adaptive.Sliding} {
		t.Run(w.String(), func(t *testing.T) {
			t.Parallel()
			// Windows far longer than the test, so nothing is forgotten.
			l, err := adaptive.NewLimiter(adaptive.Config{Window: w, ResetInterval: time.Hour, WindowSize: time.Hour, Bucket: time.Minute})
			if err != nil {
				t.Fatalf("NewLimiter error: %v", err)
			}
			const goroutines, calls = 8, 500
			var wg sync.WaitGroup
			var mu sync.Mutex
			var accepted int64
			for g := range goroutines {
				wg.Go(func() {
					var acc int64
					for i := range calls {
						allow, p := l.Allow()
						if p < 0 || p > 1 || math.IsNaN(p) {
							t.Errorf("got p %v from Allow, want in [0, 1]", p)
						}
						if !allow {
							continue
						}
						if (g+i)%4 == 0 {
							l.Record(adaptive.Accepted)
							acc++
						} else {
							l.Record(adaptive.Throttled)
						}
						if p := l.Probability(); p < 0 || p > 1 || math.IsNaN(p) {
							t.Errorf("got Probability %v, want in [0, 1]", p)
						}
					}
					mu.Lock()
					accepted += acc
					mu.Unlock()
				})
			}
			wg.Wait()
			req, acc := l.Counts()
			if req != goroutines*calls || acc != accepted {
				t.Errorf("got counts (%d, %d), want (%d, %d)", req, acc, goroutines*calls, accepted)
			}
			if got, want := l.Probability(), adaptive.Probability(req, acc, adaptive.DefaultK); got != want {
				t.Errorf("got Probability %v, want %v", got, want)
			}
		})
	}
}

// TestLimiterSeed checks that a Limiter with a Seed decides reproducibly.
func TestLimiterSeed(t *testing.T) {
	run := func() []bool {
		l, err := adaptive.NewLimiter(adaptive.Config{Seed: 42, ResetInterval: time.Hour})
		if err != nil {
			t.Fatalf("NewLimiter error: %v", err)
		}
		var got []bool
		for range 100 {
			allow, _ := l.Allow()
			if allow {
				l.Record(adaptive.Throttled)
			}
			got = append(got, allow)
		}
		return got
	}
	a, b := run(), run()
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("decision %d: got %v and %v in two runs with Seed 42, want equal", i, a[i], b[i])
		}
	}
}
