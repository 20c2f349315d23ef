package testserver_test

import (
	"fmt"
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
