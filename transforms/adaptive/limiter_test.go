package adaptive_test

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// TestLimiterParallel hammers one Limiter over an SRE policy from several
// goroutines; run it with -race.
func TestLimiterParallel(t *testing.T) {
	for _, w := range []adaptive.Window{adaptive.FixedReset, adaptive.Sliding} {
		t.Run(w.String(), func(t *testing.T) {
			t.Parallel()
			// Windows far longer than the test, so nothing is forgotten.
			sre, err := adaptive.NewSRE(adaptive.Config{Window: w, ResetInterval: time.Hour, WindowSize: time.Hour, Bucket: time.Minute}, nil, 0)
			if err != nil {
				t.Fatalf("NewSRE error: %v", err)
			}
			l := adaptive.NewLimiter(sre)
			const goroutines, calls = 8, 500
			var wg sync.WaitGroup
			var mu sync.Mutex
			var accepted int64
			for g := range goroutines {
				wg.Go(func() {
					var acc int64
					for i := range calls {
						d, sent := l.Decide()
						if p := d.Probability; p < 0 || p > 1 || math.IsNaN(p) {
							t.Errorf("got p %v from Decide, want in [0, 1]", p)
						}
						if d.Verdict != adaptive.Send {
							continue
						}
						o := adaptive.Throttled
						if (g+i)%4 == 0 {
							o = adaptive.Accepted
							acc++
						}
						l.Record(adaptive.Answer{Outcome: o, Sent: sent})
					}
					mu.Lock()
					accepted += acc
					mu.Unlock()
				})
			}
			wg.Wait()
			if req, acc := sre.Throttler().Counts(time.Now()); req != goroutines*calls || acc != accepted {
				t.Errorf("got counts (%d, %d), want (%d, %d)", req, acc, goroutines*calls, accepted)
			}
		})
	}
}

// TestLimiterInFlight: the requests let through and not recorded yet are
// passed to the policy as in flight, which the SRE rule leaves out of p.
func TestLimiterInFlight(t *testing.T) {
	sre, err := adaptive.NewSRE(adaptive.Config{ResetInterval: time.Hour}, constRand(0.01), 0)
	if err != nil {
		t.Fatal(err)
	}
	l := adaptive.NewLimiter(sre)
	var sent []time.Time
	for i := range 9 {
		d, at := l.Decide()
		if d.Verdict != adaptive.Send {
			t.Fatalf("decision %d with %d in flight: got %+v, want Send", i, i, d)
		}
		sent = append(sent, at)
	}
	for _, at := range sent {
		l.Record(adaptive.Answer{Outcome: adaptive.Throttled, Sent: at})
	}
	// Nothing in flight: p = 9/10, and r = 0.01 rejects.
	if d, _ := l.Decide(); d.Verdict != adaptive.Reject || d.Probability != adaptive.Probability(9, 0, adaptive.DefaultK) {
		t.Errorf("decision after 9 recorded rejections: got %+v, want Reject with p 0.9", d)
	}
}

// TestLimiterWait: Wait sleeps until each postponement's RetryAt, so the
// requests go out at the times the Pacer gives them, as a caller driving
// an identical Pacer by hand would see them.
func TestLimiterWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		newPacer := func() *adaptive.Pacer {
			p, err := adaptive.NewPacer(adaptive.PacerConfig{StartRate: 2})
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		l := adaptive.NewLimiter(newPacer())
		var got []time.Time
		for range 8 {
			sent, err := l.Wait(t.Context())
			if err != nil {
				t.Fatalf("Wait error: %v", err)
			}
			got = append(got, sent)
			l.Record(adaptive.Answer{Outcome: adaptive.Accepted, Sent: sent})
		}

		p, now := newPacer(), got[0]
		var want []time.Time
		for len(want) < 8 {
			d := p.Decide(now, 0)
			if d.Verdict == adaptive.Postpone {
				now = d.RetryAt
				continue
			}
			want = append(want, now)
			p.Record(now, adaptive.Answer{Outcome: adaptive.Accepted, Sent: now})
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("send times mismatch (-want +got):\n%s", diff)
		}
		if !got[7].After(got[0]) {
			t.Errorf("got all sends at %v, want them spaced", got[0])
		}
	})
}

// TestLimiterWaitErrors: Wait fails fast when the policy rejects, and
// returns ctx's error when ctx ends before the policy lets a request
// through.
func TestLimiterWaitErrors(t *testing.T) {
	t.Run("rejected", func(t *testing.T) {
		sre, err := adaptive.NewSRE(adaptive.Config{}, constRand(0), 0)
		if err != nil {
			t.Fatal(err)
		}
		l := adaptive.NewLimiter(sre)
		sent, err := l.Wait(t.Context())
		if err != nil {
			t.Fatalf("first Wait error: %v", err)
		}
		l.Record(adaptive.Answer{Outcome: adaptive.Throttled, Sent: sent})
		if _, err := l.Wait(t.Context()); !errors.Is(err, adaptive.ErrRejected) {
			t.Errorf("Wait after a rejection with r 0: got error %v, want ErrRejected", err)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p, err := adaptive.NewPacer(adaptive.PacerConfig{})
			if err != nil {
				t.Fatal(err)
			}
			l := adaptive.NewLimiter(p)
			sent, err := l.Wait(t.Context())
			if err != nil {
				t.Fatalf("first Wait error: %v", err)
			}
			l.Record(adaptive.Answer{Outcome: adaptive.Throttled, Sent: sent, RetryAfter: time.Hour})
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			start := time.Now()
			if _, err := l.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Wait during a Retry-After of an hour: got error %v, want DeadlineExceeded", err)
			}
			if waited := time.Since(start); waited != time.Minute {
				t.Errorf("Wait returned after %v, want the context's minute", waited)
			}
		})
	})
}

// TestLimiterWaitN: WaitN passes each request's cost to the Pacer, so the
// requests go out at the times a Pacer driven by hand with DecideCost gives
// them, and not at those of requests of cost 1.
func TestLimiterWaitN(t *testing.T) {
	tests := []struct {
		name  string
		costs []int
	}{
		{"rising", []int{1, 10, 100, 1000}},
		{"mixed", []int{40, 3, 77, 12, 1, 50}},
		{"free among others", []int{20, 0, 20, 0, -1, 20}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				newPacer := func() *adaptive.Pacer {
					p, err := adaptive.NewPacer(adaptive.PacerConfig{StartRate: 2})
					if err != nil {
						t.Fatal(err)
					}
					return p
				}
				cost := func(i int) int { return tc.costs[i%len(tc.costs)] }
				l := adaptive.NewLimiter(newPacer())
				var got []time.Time
				for i := range 12 {
					sent, err := l.WaitN(t.Context(), cost(i))
					if err != nil {
						t.Fatalf("WaitN error: %v", err)
					}
					got = append(got, sent)
					l.Record(adaptive.Answer{Outcome: adaptive.Accepted, Sent: sent})
				}

				byHand := func(cost func(int) int) []time.Time {
					p, now := newPacer(), got[0]
					var sends []time.Time
					for len(sends) < 12 {
						d := p.DecideCost(now, 0, cost(len(sends)))
						if d.Verdict == adaptive.Postpone {
							now = d.RetryAt
							continue
						}
						sends = append(sends, now)
						p.Record(now, adaptive.Answer{Outcome: adaptive.Accepted, Sent: now})
					}
					return sends
				}
				if diff := cmp.Diff(byHand(cost), got); diff != "" {
					t.Errorf("send times mismatch (-want +got):\n%s", diff)
				}
				if ones := byHand(func(int) int { return 1 }); cmp.Equal(ones, got) {
					t.Errorf("got the send times of requests of cost 1, want their costs to count")
				}
			})
		})
	}
}

// TestLimiterDecideN: DecideN asks a policy that is not a Coster about
// one request, whatever its cost.
func TestLimiterDecideN(t *testing.T) {
	sre, err := adaptive.NewSRE(adaptive.Config{ResetInterval: time.Hour}, constRand(alwaysAllow), 0)
	if err != nil {
		t.Fatal(err)
	}
	l := adaptive.NewLimiter(sre)
	for i, c := range []int{1, 100, 0} {
		d, sent := l.DecideN(c)
		if d.Verdict != adaptive.Send {
			t.Fatalf("request %d of cost %d: got %+v, want Send", i, c, d)
		}
		l.Record(adaptive.Answer{Outcome: adaptive.Accepted, Sent: sent})
	}
	if req, acc := sre.Throttler().Counts(time.Now()); req != 3 || acc != 3 {
		t.Errorf("got counts (%d, %d), want (3, 3)", req, acc)
	}
}
