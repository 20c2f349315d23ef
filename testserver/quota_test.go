package testserver_test

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/testserver"
)

// step advances the clock, then sends requests one after another.
type step struct {
	advance        time.Duration
	requests       int
	wantAccepted   int    // the first wantAccepted get 200, the rest 429
	wantRetryAfter string // Retry-After of the 429s; "" if all are accepted
}

// runSteps runs steps against h, driven by clock.
func runSteps(t *testing.T, h *testserver.Handler, clock *fakeClock, steps []step) {
	t.Helper()
	for i, s := range steps {
		clock.Advance(s.advance)
		for j := range s.requests {
			r := serve(h, "POST", "/api", "x")
			want, wantRetry := http.StatusOK, ""
			if j >= s.wantAccepted {
				want, wantRetry = http.StatusTooManyRequests, s.wantRetryAfter
			}
			if r.status != want || r.retryAfter != wantRetry {
				t.Fatalf("step %d (+%v), request %d: got %d Retry-After %q, want %d Retry-After %q",
					i, s.advance, j, r.status, r.retryAfter, want, wantRetry)
			}
		}
	}
}

func TestTokenBucket(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   testserver.Config
		steps []step
	}{
		{
			name: "10 per second refills one per 100ms",
			cfg:  testserver.Config{Quota: 10},
			steps: []step{
				{0, 12, 10, "1"},
				{100 * time.Millisecond, 2, 1, "1"},
				{99 * time.Millisecond, 1, 0, "1"},
				{time.Millisecond, 2, 1, "1"},
				{10 * time.Second, 11, 10, "1"}, // refills stop at Quota
			},
		},
		{
			name: "fractional refills add up exactly",
			cfg:  testserver.Config{Quota: 3}, // 0.3 tokens per 100ms
			steps: []step{
				{0, 4, 3, "1"},
				{300 * time.Millisecond, 1, 0, "1"}, // 0.9 tokens
				{100 * time.Millisecond, 2, 1, "1"}, // 1.2 tokens
				{2 * time.Second, 4, 3, "1"},
			},
		},
		{
			name: "default refill on a long period",
			cfg:  testserver.Config{Quota: 2, Period: time.Minute}, // 1/300 token per 100ms
			steps: []step{
				{0, 3, 2, "30"},
				{29900 * time.Millisecond, 1, 0, "1"},
				{100 * time.Millisecond, 2, 1, "30"},
			},
		},
		{
			name: "explicit refill step",
			cfg:  testserver.Config{Quota: 5, Period: 5 * time.Second, Refill: time.Second},
			steps: []step{
				{0, 6, 5, "1"},
				{999 * time.Millisecond, 1, 0, "1"},
				{time.Millisecond, 2, 1, "1"},
				{3 * time.Second, 4, 3, "1"},
			},
		},
		{
			name: "Retry-After rounds up whole seconds",
			cfg:  testserver.Config{Quota: 1, Period: 10 * time.Second, Refill: 10 * time.Second},
			steps: []step{
				{0, 2, 1, "10"},
				{2500 * time.Millisecond, 1, 0, "8"},
				{7 * time.Second, 1, 0, "1"},
				{500 * time.Millisecond, 2, 1, "10"},
			},
		},
		{
			name: "refill longer than period",
			cfg:  testserver.Config{Quota: 2, Period: 100 * time.Millisecond, Refill: 300 * time.Millisecond},
			steps: []step{
				{0, 3, 2, "1"},
				{200 * time.Millisecond, 1, 0, "1"},
				{100 * time.Millisecond, 3, 2, "1"},
			},
		},
		{
			name:  "unlimited",
			cfg:   testserver.Config{},
			steps: []step{{0, 1000, 1000, ""}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock()
			tc.cfg.Now = clock.Now
			runSteps(t, newHandler(t, tc.cfg), clock, tc.steps)
		})
	}
}

func TestFixedWindow(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   testserver.Config
		steps []step
	}{
		{
			name: "3 per second",
			cfg:  testserver.Config{Quota: 3},
			steps: []step{
				{0, 5, 3, "1"},
				{999 * time.Millisecond, 1, 0, "1"},
				{time.Millisecond, 4, 3, "1"}, // the boundary resets the counter
				{500 * time.Millisecond, 1, 0, "1"},
			},
		},
		{
			name: "2 per minute",
			cfg:  testserver.Config{Quota: 2, Period: time.Minute},
			steps: []step{
				{0, 3, 2, "60"},
				{30500 * time.Millisecond, 1, 0, "30"},
				{29500 * time.Millisecond, 2, 2, ""},
				// Windows stay aligned to the start: 190s is in [180s, 240s).
				{130 * time.Second, 3, 2, "50"},
			},
		},
		{
			name: "no partial refill inside a window",
			cfg:  testserver.Config{Quota: 10, Refill: time.Millisecond},
			steps: []step{
				{0, 10, 10, ""},
				{900 * time.Millisecond, 1, 0, "1"},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock()
			tc.cfg.Mode = testserver.FixedWindow
			tc.cfg.Now = clock.Now
			runSteps(t, newHandler(t, tc.cfg), clock, tc.steps)
		})
	}
}

func TestSetQuota(t *testing.T) {
	type setQuota struct {
		quota  int
		period time.Duration
	}
	for _, tc := range []struct {
		name   string
		cfg    testserver.Config
		before int // requests sent (and accepted) before SetQuota
		set    setQuota
		steps  []step
	}{
		{
			name: "token bucket drop keeps used tokens",
			cfg:  testserver.Config{Quota: 10}, before: 3, set: setQuota{5, time.Second},
			steps: []step{{0, 3, 2, "1"}},
		},
		{
			name: "token bucket drop below used",
			cfg:  testserver.Config{Quota: 10}, before: 8, set: setQuota{5, time.Second},
			steps: []step{
				{0, 1, 0, "1"},
				{100 * time.Millisecond, 1, 0, "1"}, // 0.5 tokens per step now
				{100 * time.Millisecond, 2, 1, "1"},
			},
		},
		{
			name: "token bucket raise",
			cfg:  testserver.Config{Quota: 2}, before: 2, set: setQuota{10, time.Second},
			steps: []step{{0, 9, 8, "1"}},
		},
		{
			name: "token bucket new period keeps used tokens",
			cfg:  testserver.Config{Quota: 10}, before: 5, set: setQuota{10, time.Minute},
			steps: []step{{0, 6, 5, "6"}, {600 * time.Millisecond, 1, 0, "6"}, {5400 * time.Millisecond, 2, 1, "6"}},
		},
		{
			name: "token bucket to unlimited",
			cfg:  testserver.Config{Quota: 2}, before: 2, set: setQuota{0, time.Second},
			steps: []step{{0, 100, 100, ""}},
		},
		{
			name: "token bucket from unlimited",
			cfg:  testserver.Config{}, before: 50, set: setQuota{3, time.Second},
			steps: []step{{0, 4, 3, "1"}},
		},
		{
			name: "fixed window drop keeps the counter",
			cfg:  testserver.Config{Quota: 10, Mode: testserver.FixedWindow}, before: 3, set: setQuota{5, time.Second},
			steps: []step{{0, 3, 2, "1"}, {time.Second, 6, 5, "1"}},
		},
		{
			name: "fixed window drop below used",
			cfg:  testserver.Config{Quota: 10, Mode: testserver.FixedWindow}, before: 8, set: setQuota{5, time.Second},
			steps: []step{{0, 1, 0, "1"}, {time.Second, 6, 5, "1"}},
		},
		{
			name: "fixed window raise",
			cfg:  testserver.Config{Quota: 2, Mode: testserver.FixedWindow}, before: 2, set: setQuota{20, time.Second},
			steps: []step{{0, 19, 18, "1"}},
		},
		{
			name: "fixed window new period starts a window now",
			cfg:  testserver.Config{Quota: 10, Mode: testserver.FixedWindow}, before: 4, set: setQuota{10, 2 * time.Second},
			steps: []step{
				{0, 7, 6, "2"},
				{1900 * time.Millisecond, 1, 0, "1"},
				{100 * time.Millisecond, 11, 10, "2"},
			},
		},
		{
			name: "fixed window from unlimited",
			cfg:  testserver.Config{Mode: testserver.FixedWindow}, before: 50, set: setQuota{3, time.Second},
			steps: []step{{0, 4, 3, "1"}},
		},
		{
			// 4 used of 10 at 100ms each leave TAT 400ms ahead; at 200ms each
			// that is 800ms, and the tolerance is 9×200ms.
			name: "gcra drop keeps what was used",
			cfg:  testserver.Config{Quota: 10, Mode: testserver.GCRA, Burst: 10}, before: 4, set: setQuota{5, time.Second},
			steps: []step{{0, 7, 6, "1"}, {199 * time.Millisecond, 1, 0, "1"}, {time.Millisecond, 2, 1, "1"}},
		},
		{
			name: "gcra raise",
			cfg:  testserver.Config{Quota: 2, Mode: testserver.GCRA}, before: 1, set: setQuota{10, time.Second},
			steps: []step{{0, 1, 0, "1"}, {100 * time.Millisecond, 2, 1, "1"}},
		},
		{
			name: "gcra new period keeps what was used",
			cfg:  testserver.Config{Quota: 10, Mode: testserver.GCRA, Burst: 10}, before: 5, set: setQuota{10, time.Minute},
			steps: []step{{0, 6, 5, "6"}, {5999 * time.Millisecond, 1, 0, "1"}, {time.Millisecond, 2, 1, "6"}},
		},
		{
			name: "gcra to unlimited",
			cfg:  testserver.Config{Quota: 2, Mode: testserver.GCRA}, before: 1, set: setQuota{0, time.Second},
			steps: []step{{0, 100, 100, ""}},
		},
		{
			name: "gcra from unlimited",
			cfg:  testserver.Config{Mode: testserver.GCRA, Burst: 3}, before: 50, set: setQuota{3, time.Second},
			steps: []step{{0, 4, 3, "1"}, {333 * time.Millisecond, 1, 0, "1"}, {time.Millisecond, 2, 1, "1"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock()
			tc.cfg.Now = clock.Now
			h := newHandler(t, tc.cfg)
			runSteps(t, h, clock, []step{{0, tc.before, tc.before, ""}})
			h.SetQuota(tc.set.quota, tc.set.period)
			s := h.Stats()
			if s.Quota != tc.set.quota || s.Period != tc.set.period.String() {
				t.Errorf("Stats(): got quota %d period %s, want %d %s", s.Quota, s.Period, tc.set.quota, tc.set.period)
			}
			runSteps(t, h, clock, tc.steps)
		})
	}
}

func TestSetQuotaPanicsOnBadQuota(t *testing.T) {
	for _, tc := range []struct {
		quota  int
		period time.Duration
	}{{-1, time.Second}, {1, -time.Second}, {1 << 62, time.Hour}} {
		t.Run(fmt.Sprintf("%d per %v", tc.quota, tc.period), func(t *testing.T) {
			h := newHandler(t, testserver.Config{})
			defer func() {
				if recover() == nil {
					t.Errorf("SetQuota(%d, %v) did not panic", tc.quota, tc.period)
				}
			}()
			h.SetQuota(tc.quota, tc.period)
		})
	}
}

// TestConcurrentRequestsNeverExceedQuota is meant for -race: many
// goroutines at a fixed time get exactly Quota acceptances between them.
func TestConcurrentRequestsNeverExceedQuota(t *testing.T) {
	const quota, goroutines, each = 50, 8, 40
	for _, tc := range []struct {
		name  string
		mode  testserver.Mode
		burst int
	}{
		{"token bucket", testserver.TokenBucket, 0},
		{"fixed window", testserver.FixedWindow, 0},
		{"gcra with a burst of the quota", testserver.GCRA, quota},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock()
			h := newHandler(t, testserver.Config{Quota: quota, Mode: tc.mode, Burst: tc.burst, Now: clock.Now})
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
			if got, want := ok.Load(), int64(quota); got != want {
				t.Errorf("accepted: got %d, want %d", got, want)
			}
			if got, want := rejected.Load(), int64(goroutines*each-quota); got != want {
				t.Errorf("rejected: got %d, want %d", got, want)
			}
			s := h.Stats()
			if s.Accepted != quota || s.Rejected != goroutines*each-quota {
				t.Errorf("Stats(): got accepted %d rejected %d, want %d %d", s.Accepted, s.Rejected, quota, goroutines*each-quota)
			}
		})
	}
}

// TestDriftingFixedWindow drives windows with a WindowJitter by a fake
// clock. It finds each window's end to the nanosecond from outside (see
// windowEnds), then checks the lengths, and that one handler, sent
// requests at each window's first and last instants, accepts exactly
// Quota per window, with a Retry-After to the window's real end.
func TestDriftingFixedWindow(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cfg     testserver.Config
		windows int
	}{
		{
			name:    "99 per 4s, up to 1s longer",
			cfg:     testserver.Config{Quota: 99, Period: 4 * time.Second, WindowJitter: time.Second, Seed: 1},
			windows: 12,
		},
		{
			name:    "3 per second, up to 3s longer",
			cfg:     testserver.Config{Quota: 3, Period: time.Second, WindowJitter: 3 * time.Second, Seed: 42},
			windows: 12,
		},
		{
			name:    "seed 0, 1ms of jitter",
			cfg:     testserver.Config{Quota: 5, Period: 250 * time.Millisecond, WindowJitter: time.Millisecond},
			windows: 12,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Mode = testserver.FixedWindow
			start := newFakeClock().Now() // a whole second
			ends := windowEnds(t, cfg, start, tc.windows)

			// The first window began before the handler, at a random
			// offset: it ends within a window's longest length of the
			// start, not a whole Period after it.
			if d := ends[0].Sub(start); d <= 0 || d >= cfg.Period+cfg.WindowJitter || d == cfg.Period {
				t.Errorf("first window ends %v after the start: want in (0, %v), not %v", d, cfg.Period+cfg.WindowJitter, cfg.Period)
			}
			lengths := map[time.Duration]bool{}
			for i := 1; i < len(ends); i++ {
				d := ends[i].Sub(ends[i-1])
				if d < cfg.Period || d >= cfg.Period+cfg.WindowJitter {
					t.Errorf("window %d lasts %v: want in [%v, %v)", i, d, cfg.Period, cfg.Period+cfg.WindowJitter)
				}
				lengths[d] = true
			}
			if len(lengths) < 2 {
				t.Errorf("window lengths: got %d distinct among %d, want them to differ", len(lengths), len(ends)-1)
			}
			for i, e := range ends {
				if e.Nanosecond() == 0 {
					t.Errorf("window %d ends at %v, on a whole second", i, e)
				}
			}
			other := cfg
			other.Seed++
			if otherEnds := windowEnds(t, other, start, 1); otherEnds[0].Equal(ends[0]) {
				t.Errorf("seeds %d and %d: both first windows end at %v, want different windows", cfg.Seed, other.Seed, ends[0])
			}

			// One handler, sent requests at each window's first and last
			// instants and in its middle, sees the windows found above.
			clock := newFakeClock()
			cfg.Now = clock.Now
			h := newHandler(t, cfg)
			from := start
			for i, end := range ends {
				var accepted, rejected int
				send := func(at time.Time, n int) {
					clock.Advance(at.Sub(clock.Now()))
					for range n {
						r := serve(h, "POST", "/api", "x")
						switch {
						case r.status == http.StatusOK && accepted < cfg.Quota:
							accepted++
						case r.status == http.StatusTooManyRequests && accepted == cfg.Quota:
							rejected++
							if want := retryAfter(end.Sub(at)); r.retryAfter != want {
								t.Errorf("window %d, 429 at %v before its end: got Retry-After %q, want %q", i, end.Sub(at), r.retryAfter, want)
							}
						default:
							t.Fatalf("window %d, request at %v before its end: got %d after %d accepted, want 200 for the first %d, then 429",
								i, end.Sub(at), r.status, accepted, cfg.Quota)
						}
					}
				}
				send(from, cfg.Quota-1)            // the counter was reset at from
				send(from.Add(end.Sub(from)/2), 3) // 1 accepted, 2 rejected
				send(end.Add(-time.Nanosecond), 1) // rejected
				if accepted != cfg.Quota || rejected != 3 {
					t.Errorf("window %d: got %d accepted, %d rejected, want %d, 3", i, accepted, rejected, cfg.Quota)
				}
				from = end
			}
			s := h.Stats()
			if want := int64(len(ends) * cfg.Quota); s.Accepted != want || s.Rejected != int64(3*len(ends)) {
				t.Errorf("Stats(): got accepted %d rejected %d, want %d %d", s.Accepted, s.Rejected, want, 3*len(ends))
			}
			if got, want := s.WindowJitter, cfg.WindowJitter.String(); got != want {
				t.Errorf("Stats().WindowJitter: got %q, want %q", got, want)
			}
		})
	}
}

// windowEnds returns the ends of the first n fixed windows of handlers
// made with cfg at start, to the nanosecond. It relies on the windows
// being the same for a seed: a fresh handler whose window at a is used
// up accepts a request at b iff a window ended in (a, b], so each end is
// found by bisection.
func windowEnds(t *testing.T, cfg testserver.Config, start time.Time, n int) []time.Time {
	t.Helper()
	endedIn := func(a, b time.Time) bool {
		clock := newFakeClock()
		clock.Advance(start.Sub(clock.Now()))
		c := cfg
		c.Now = clock.Now
		h := newHandler(t, c)
		clock.Advance(a.Sub(start))
		for j := range cfg.Quota + 1 {
			want := http.StatusOK
			if j == cfg.Quota {
				want = http.StatusTooManyRequests
			}
			if r := serve(h, "POST", "/api", "x"); r.status != want {
				t.Fatalf("request %d at %v after the start: got %d, want %d", j, a.Sub(start), r.status, want)
			}
		}
		clock.Advance(b.Sub(a))
		return serve(h, "POST", "/api", "x").status == http.StatusOK
	}
	var ends []time.Time
	from := start
	for range n {
		// The next end is in (lo, hi]: a window lasts at most
		// Period+WindowJitter.
		lo, hi := from, from.Add(cfg.Period+cfg.WindowJitter)
		if !endedIn(from, hi) {
			t.Fatalf("no window ends in (%v, %v] after the start", from.Sub(start), hi.Sub(start))
		}
		for hi.Sub(lo) > 1 {
			mid := lo.Add(hi.Sub(lo) / 2)
			if endedIn(from, mid) {
				hi = mid
			} else {
				lo = mid
			}
		}
		ends = append(ends, hi)
		from = hi
	}
	return ends
}

// retryAfter is the Retry-After of a 429 for a wait: whole seconds,
// rounded up, at least 1.
func retryAfter(wait time.Duration) string {
	return fmt.Sprint(max(int64((wait+time.Second-1)/time.Second), 1))
}

func TestWindowJitterConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  testserver.Config
	}{
		{"negative", testserver.Config{Mode: testserver.FixedWindow, WindowJitter: -1}},
		{"token bucket", testserver.Config{WindowJitter: time.Second}},
		{"gcra", testserver.Config{Mode: testserver.GCRA, WindowJitter: time.Second}},
		{"too long", testserver.Config{Mode: testserver.FixedWindow, Period: time.Duration(math.MaxInt64 / 2), WindowJitter: time.Duration(math.MaxInt64/2 + 2)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := testserver.NewHandler(tc.cfg); !errors.Is(err, testserver.ErrConfig) {
				t.Errorf("NewHandler(%+v): got %v, want an error wrapping ErrConfig", tc.cfg, err)
			}
		})
	}
}
