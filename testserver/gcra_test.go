package testserver_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/beamthrottle/beamthrottle/testserver"
)

func TestGCRA(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   testserver.Config
		steps []step
	}{
		{
			name: "10 per second, no burst: 100ms apart",
			cfg:  testserver.Config{Quota: 10},
			steps: []step{
				{0, 2, 1, "1"},
				{99 * time.Millisecond, 1, 0, "1"},
				{time.Millisecond, 2, 1, "1"},
				{100 * time.Millisecond, 1, 1, ""},
				{250 * time.Millisecond, 2, 1, "1"}, // idle time is not banked
				{100 * time.Millisecond, 2, 1, "1"},
				{10 * time.Second, 2, 1, "1"},
			},
		},
		{
			name: "burst 1 is no burst",
			cfg:  testserver.Config{Quota: 10, Burst: 1},
			steps: []step{
				{0, 2, 1, "1"},
				{99 * time.Millisecond, 1, 0, "1"},
				{time.Millisecond, 2, 1, "1"},
			},
		},
		{
			name: "burst of 10 after idle",
			cfg:  testserver.Config{Quota: 10, Burst: 10},
			steps: []step{
				{0, 11, 10, "1"},
				{99 * time.Millisecond, 1, 0, "1"},
				{time.Millisecond, 2, 1, "1"}, // then one per 100ms
				{100 * time.Millisecond, 2, 1, "1"},
				{500 * time.Millisecond, 6, 5, "1"}, // 500ms idle gives back 5
				{10 * time.Second, 11, 10, "1"},     // never more than the burst
			},
		},
		{
			name: "Retry-After rounds up whole seconds",
			cfg:  testserver.Config{Quota: 1, Period: 10 * time.Second},
			steps: []step{
				{0, 2, 1, "10"},
				{2500 * time.Millisecond, 1, 0, "8"},
				{7 * time.Second, 1, 0, "1"},
				{500 * time.Millisecond, 2, 1, "10"},
			},
		},
		{
			name: "Retry-After with a burst",
			cfg:  testserver.Config{Quota: 6, Period: time.Minute, Burst: 3}, // one per 10s, 3 at once
			steps: []step{
				{0, 4, 3, "10"},
				{4 * time.Second, 1, 0, "6"},
				{6 * time.Second, 2, 1, "10"},
			},
		},
		{
			name: "Retry-After counts a third of a nanosecond",
			cfg:  testserver.Config{Quota: 3, Period: 3*time.Second + 1}, // T = 1s + 1/3 ns
			steps: []step{
				{0, 2, 1, "2"},
				{time.Second, 1, 0, "1"},
				{time.Nanosecond, 2, 1, "2"},
			},
		},
		{
			name: "a third of a second is not rounded down",
			cfg:  testserver.Config{Quota: 3, Burst: 3000}, // the 3000 leave TAT at exactly 1000s
			steps: []step{
				{0, 3001, 3000, "1"},
				{333333333 * time.Nanosecond, 1, 0, "1"},
				{time.Nanosecond, 2, 1, "1"},
			},
		},
		{
			name: "a third of a second is not rounded up",
			cfg:  testserver.Config{Quota: 3, Burst: 3000},
			steps: []step{
				{0, 3000, 3000, ""},
				{1000 * time.Second, 3001, 3000, "1"},
			},
		},
		{
			name: "more requests than nanoseconds per period",
			cfg:  testserver.Config{Quota: 3_000_000_000, Burst: 3}, // one per 1/3 ns
			steps: []step{
				{0, 4, 3, "1"},
				{time.Nanosecond, 4, 3, "1"},
			},
		},
		{
			name:  "a huge burst is capped, not overflowed",
			cfg:   testserver.Config{Quota: 1, Period: time.Hour, Burst: 1 << 40},
			steps: []step{{0, 1000, 1000, ""}},
		},
		{
			name:  "unlimited",
			cfg:   testserver.Config{Burst: 5},
			steps: []step{{0, 1000, 1000, ""}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock()
			tc.cfg.Mode = testserver.GCRA
			tc.cfg.Now = clock.Now
			runSteps(t, newHandler(t, tc.cfg), clock, tc.steps)
		})
	}
}

// tickingClock is a clock that moves on by step at every reading. A Handler
// reads its clock once per API request, under its mutex, so with this clock
// the n-th request decided is at start + n×step, whatever the goroutines'
// interleaving.
type tickingClock struct {
	step time.Duration
	mu   sync.Mutex
	t    time.Time
}

func (c *tickingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.t
	c.t = c.t.Add(c.step)
	return t
}

// TestGCRAConcurrent sends requests from many goroutines at once (run it
// with -race) to a GCRA handler whose clock ticks 7ms per request. The
// answers must be those of the same requests sent one at a time, and those
// never exceed the rate: any n accepted requests span at least
// (n-burst) emission intervals.
func TestGCRAConcurrent(t *testing.T) {
	const (
		quota      = 10 // per second: T = 100ms
		interval   = time.Second / quota
		tick       = 7 * time.Millisecond
		goroutines = 8
		each       = 150
		total      = goroutines * each
	)
	for _, tc := range []struct {
		name         string
		burst        int
		wantAccepted int64
	}{
		// 105ms (15 ticks) between acceptances.
		{"no burst", 0, (total + 14) / 15},
		// Counted separately, by the rule in exact fractions.
		{"burst 10", 10, 93},
	} {
		t.Run(tc.name, func(t *testing.T) {
			newGCRA := func() (*testserver.Handler, *tickingClock) {
				clock := &tickingClock{step: tick, t: time.Unix(1_000_000, 0)}
				cfg := testserver.Config{Quota: quota, Mode: testserver.GCRA, Burst: tc.burst, Now: clock.Now}
				return newHandler(t, cfg), clock
			}

			// One at a time: the n-th request is at n ticks.
			h, _ := newGCRA()
			var times []time.Duration // of the accepted requests
			for n := range total {
				if serve(h, "POST", "/api", "x").status == http.StatusOK {
					times = append(times, time.Duration(n)*tick)
				}
			}
			if got := int64(len(times)); got != tc.wantAccepted {
				t.Errorf("one at a time: accepted %d, want %d", got, tc.wantAccepted)
			}
			burst := max(tc.burst, 1)
			for i := range times {
				for j := i + burst; j < len(times); j++ {
					if span, least := times[j]-times[i], time.Duration(j-i+1-burst)*interval; span < least {
						t.Fatalf("accepted %d requests in %v (from %v), want at least %v apart", j-i+1, span, times[i], least)
					}
				}
			}
			sequential := h.Stats()

			h, _ = newGCRA()
			var ok, rejected atomic.Int64
			var wg sync.WaitGroup
			for range goroutines {
				wg.Go(func() {
					for range each {
						rec := httptest.NewRecorder()
						h.ServeHTTP(rec, httptest.NewRequest("POST", "/api", strings.NewReader("x")))
						switch rec.Code {
						case http.StatusOK:
							ok.Add(1)
						case http.StatusTooManyRequests:
							rejected.Add(1)
						}
						h.Stats() // concurrent readers too
					}
				})
			}
			wg.Wait()
			if got, want := ok.Load(), tc.wantAccepted; got != want {
				t.Errorf("concurrent: accepted %d, want %d", got, want)
			}
			if got, want := ok.Load()+rejected.Load(), int64(total); got != want {
				t.Errorf("concurrent: accepted + rejected %d, want %d", got, want)
			}
			if diff := cmp.Diff(sequential.Series, h.Stats().Series); diff != "" {
				t.Errorf("concurrent per-second series differ from one at a time (-sequential +concurrent):\n%s", diff)
			}
		})
	}
}

func TestAdminQuotaGCRA(t *testing.T) {
	clock := newFakeClock()
	h := newHandler(t, testserver.Config{Quota: 10, Mode: testserver.GCRA, Burst: 2, Now: clock.Now})
	if r := serve(h, "POST", "/admin/quota?quota=1&period=2s", ""); r.status != http.StatusOK {
		t.Fatalf("POST /admin/quota: got %d %q, want 200", r.status, r.body)
	}
	// One per 2s with the burst of 2 kept.
	runSteps(t, h, clock, []step{
		{0, 3, 2, "2"},
		{1999 * time.Millisecond, 1, 0, "1"},
		{time.Millisecond, 2, 1, "2"},
	})
	s := h.Stats()
	if s.Mode != testserver.GCRA || s.Quota != 1 || s.Period != "2s" || s.Burst != 2 {
		t.Errorf("Stats(): got mode %s quota %d period %s burst %d, want gcra 1 2s 2", s.Mode, s.Quota, s.Period, s.Burst)
	}
}
