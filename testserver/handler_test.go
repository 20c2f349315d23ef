package testserver_test

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/testserver"
)

// fakeClock is a manually advanced clock for Config.Now.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Unix(1_000_000, 0)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// newHandler returns a Handler for cfg, failing the test on error.
func newHandler(t testing.TB, cfg testserver.Config) *testserver.Handler {
	t.Helper()
	h, err := testserver.NewHandler(cfg)
	if err != nil {
		t.Fatalf("NewHandler(%+v): %v", cfg, err)
	}
	return h
}

// response is what serve returns: status, Retry-After, body.
type response struct {
	status     int
	retryAfter string
	header     http.Header
	body       string
}

// serve sends one request straight to h.
func serve(h http.Handler, method, target, body string) response {
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	res := rec.Result()
	b, _ := io.ReadAll(res.Body)
	return response{status: res.StatusCode, retryAfter: res.Header.Get("Retry-After"), header: res.Header, body: string(b)}
}

func TestNewHandlerRejectsBadConfig(t *testing.T) {
	for _, cfg := range []testserver.Config{
		{Quota: -1},
		{Period: -time.Second},
		{Mode: "leaky"},
		{Refill: -1},
		{Latency: -1},
		{Jitter: -1},
		{ErrorRate: -0.1},
		{ErrorRate: 1.1},
		{MaxBodyBytes: -1},
		{MaxConns: -1},
		{Quota: 1 << 62, Period: time.Hour},
		{Mode: testserver.GCRA, Burst: -1},
		{Burst: 2}, // a burst only for GCRA
		{Mode: testserver.FixedWindow, Burst: 1},
		{ItemErrorRate: -0.1},
		{ItemErrorRate: 1.1},
		{ItemErrorRate: math.NaN()},
		{CostHeader: "X Cost"},
		{CostHeader: "X-Cost:"},
	} {
		if _, err := testserver.NewHandler(cfg); err == nil {
			t.Errorf("NewHandler(%+v) = nil error, want an error", cfg)
		}
	}
}

func TestEcho(t *testing.T) {
	h := newHandler(t, testserver.Config{})
	for _, tc := range []struct {
		method, target, contentType, body string
	}{
		{"POST", "/api", "application/json", `{"a":1}`},
		{"PUT", "/api/v1/items/7", "text/plain", "hello"},
		{"GET", "/api/", "", ""},
		{"POST", "/api", "", "<html>no sniffing</html>"},
	} {
		t.Run(tc.method+" "+tc.target, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, tc.target, strings.NewReader(tc.body))
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if got, want := rec.Code, http.StatusOK; got != want {
				t.Errorf("status: got %d, want %d", got, want)
			}
			if got, want := rec.Body.String(), tc.body; got != want {
				t.Errorf("body: got %q, want %q", got, want)
			}
			if got, want := rec.Header().Get("Content-Type"), tc.contentType; got != want {
				t.Errorf("Content-Type: got %q, want %q", got, want)
			}
		})
	}
}

func TestBodyLimit(t *testing.T) {
	for _, tc := range []struct {
		name     string
		maxBody  int64
		size     int
		want     int
		quotaOut int // Accepted after the request and one small one, with Quota 1
	}{
		{"at custom limit", 10, 10, http.StatusOK, 1},
		{"over custom limit", 10, 11, http.StatusRequestEntityTooLarge, 1},
		{"at default limit", 0, 1 << 20, http.StatusOK, 1},
		{"over default limit", 0, 1<<20 + 1, http.StatusRequestEntityTooLarge, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock()
			h := newHandler(t, testserver.Config{Quota: 1, MaxBodyBytes: tc.maxBody, Now: clock.Now})
			body := strings.Repeat("x", tc.size)
			r := serve(h, "POST", "/api", body)
			if r.status != tc.want {
				t.Fatalf("status: got %d, want %d", r.status, tc.want)
			}
			if r.status == http.StatusOK && r.body != body {
				t.Errorf("body: got %d bytes, want %d", len(r.body), len(body))
			}
			// A 413 uses no quota, so the quota of 1 is still there.
			if tc.want == http.StatusRequestEntityTooLarge {
				if got, want := serve(h, "POST", "/api", "small").status, http.StatusOK; got != want {
					t.Errorf("after 413: got %d, want %d", got, want)
				}
				if got, want := h.Stats().TooLarge, int64(1); got != want {
					t.Errorf("Stats().TooLarge: got %d, want %d", got, want)
				}
			}
			if got, want := h.Stats().Accepted, int64(tc.quotaOut); got != want {
				t.Errorf("Stats().Accepted: got %d, want %d", got, want)
			}
		})
	}
}

func TestOutage(t *testing.T) {
	for _, status := range []int{http.StatusServiceUnavailable, http.StatusTooManyRequests} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			clock := newFakeClock()
			h := newHandler(t, testserver.Config{Quota: 2, MaxBodyBytes: 4, Now: clock.Now})
			h.SetOutage(status)
			requests := []struct{ method, target, body string }{
				{"POST", "/api", "x"},
				{"GET", "/api/deep/path", ""},
				{"DELETE", "/api", ""},
				{"POST", "/api", "longer than the body limit"},
			}
			for _, req := range requests {
				r := serve(h, req.method, req.target, req.body)
				if r.status != status || r.retryAfter != "1" {
					t.Errorf("%s %s: got %d Retry-After %q, want %d Retry-After %q", req.method, req.target, r.status, r.retryAfter, status, "1")
				}
			}
			if got, want := h.Stats().Rejected, int64(len(requests)); got != want {
				t.Errorf("Stats().Rejected: got %d, want %d", got, want)
			}
			// The outage used no quota.
			h.SetOutage(0)
			var got []int
			for range 3 {
				got = append(got, serve(h, "POST", "/api", "x").status)
			}
			want := []int{200, 200, 429}
			if !slices.Equal(got, want) {
				t.Errorf("after the outage: got %v, want %v", got, want)
			}
		})
	}
}

func TestNoRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		name         string
		noRetryAfter bool
		want         string // Retry-After of both the 429 and the outage answer
	}{
		{"default", false, "1"},
		{"NoRetryAfter", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock()
			h := newHandler(t, testserver.Config{Quota: 1, Mode: testserver.FixedWindow, NoRetryAfter: tc.noRetryAfter, Now: clock.Now})
			if r := serve(h, "POST", "/api", "x"); r.status != http.StatusOK || r.retryAfter != "" {
				t.Errorf("first request: got %d Retry-After %q, want 200 and none", r.status, r.retryAfter)
			}
			if r := serve(h, "POST", "/api", "x"); r.status != http.StatusTooManyRequests || r.retryAfter != tc.want {
				t.Errorf("over quota: got %d Retry-After %q, want 429 Retry-After %q", r.status, r.retryAfter, tc.want)
			}
			h.SetOutage(http.StatusServiceUnavailable)
			if r := serve(h, "POST", "/api", "x"); r.status != http.StatusServiceUnavailable || r.retryAfter != tc.want {
				t.Errorf("outage: got %d Retry-After %q, want 503 Retry-After %q", r.status, r.retryAfter, tc.want)
			}
		})
	}
}

func TestSetOutagePanicsOnBadStatus(t *testing.T) {
	h := newHandler(t, testserver.Config{})
	defer func() {
		if recover() == nil {
			t.Errorf("SetOutage(500) did not panic")
		}
	}()
	h.SetOutage(500)
}

func TestSetRatePanics(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(h *testserver.Handler, rate float64)
	}{
		{"SetErrorRate", (*testserver.Handler).SetErrorRate},
		{"SetItemErrorRate", (*testserver.Handler).SetItemErrorRate},
	} {
		for _, rate := range []float64{-0.1, 1.1, math.NaN()} {
			t.Run(fmt.Sprint(tc.name, " ", rate), func(t *testing.T) {
				h := newHandler(t, testserver.Config{})
				defer func() {
					if recover() == nil {
						t.Errorf("%s(%v) did not panic", tc.name, rate)
					}
				}()
				tc.set(h, rate)
			})
		}
	}
}

func TestErrorRate(t *testing.T) {
	const n = 1000
	for _, tc := range []struct {
		name     string
		rate     float64
		seed     uint64
		min, max int // bounds on the 500 count, to check the rate is roughly honoured
	}{
		{"zero", 0, 1, 0, 0},
		{"all", 1, 1, n, n},
		{"30% seed 1", 0.3, 1, 250, 350},
		{"30% seed 2", 0.3, 2, 250, 350},
		{"5% seed 0", 0.05, 0, 20, 80},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := func() []int {
				h := newHandler(t, testserver.Config{ErrorRate: tc.rate, Seed: tc.seed})
				var statuses []int
				for range n {
					statuses = append(statuses, serve(h, "POST", "/api", "x").status)
				}
				if got, want := h.Stats().Errors, int64(count(statuses, 500)); got != want {
					t.Errorf("Stats().Errors: got %d, want %d", got, want)
				}
				return statuses
			}
			first, second := run(), run()
			if !slices.Equal(first, second) {
				t.Errorf("two runs with seed %d differ", tc.seed)
			}
			if got := count(first, 500); got < tc.min || got > tc.max {
				t.Errorf("500s: got %d, want within [%d, %d]", got, tc.min, tc.max)
			}
			if got, want := count(first, 500)+count(first, 200), n; got != want {
				t.Errorf("200s + 500s: got %d, want %d", got, want)
			}
		})
	}
}

// TestErrorRateExactCount pins the count for one seed, so that a change in
// the random source is noticed.
func TestErrorRateExactCount(t *testing.T) {
	h := newHandler(t, testserver.Config{ErrorRate: 0.3, Seed: 42})
	for range 100 {
		serve(h, "POST", "/api", "x")
	}
	if got, want := h.Stats().Errors, int64(errorsSeed42); got != want {
		t.Errorf("Errors after 100 requests at 30%% with seed 42: got %d, want %d", got, want)
	}
}

// errorsSeed42 is the number of 500s in 100 requests at rate 0.3, seed 42.
const errorsSeed42 = 31

func TestErrorsUseQuota(t *testing.T) {
	clock := newFakeClock()
	h := newHandler(t, testserver.Config{Quota: 3, ErrorRate: 1, Now: clock.Now})
	var got []int
	for range 4 {
		got = append(got, serve(h, "POST", "/api", "x").status)
	}
	if want := []int{500, 500, 500, 429}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestLatency(t *testing.T) {
	for _, tc := range []struct {
		name            string
		latency, jitter time.Duration
		status          int // answers of every kind are delayed
	}{
		{"latency", 30 * time.Millisecond, 0, http.StatusOK},
		{"latency and jitter", 20 * time.Millisecond, 20 * time.Millisecond, http.StatusOK},
		{"on 429", 30 * time.Millisecond, 0, http.StatusTooManyRequests},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock()
			h := newHandler(t, testserver.Config{Quota: 1, Now: clock.Now})
			h.SetLatency(tc.latency, tc.jitter)
			if tc.status == http.StatusTooManyRequests {
				h.SetLatency(0, 0)
				serve(h, "POST", "/api", "x")
				h.SetLatency(tc.latency, tc.jitter)
			}
			start := time.Now()
			r := serve(h, "POST", "/api", "x")
			elapsed := time.Since(start)
			if r.status != tc.status {
				t.Errorf("status: got %d, want %d", r.status, tc.status)
			}
			if elapsed < tc.latency {
				t.Errorf("elapsed: got %v, want at least %v", elapsed, tc.latency)
			}
		})
	}
}

func TestRoutes(t *testing.T) {
	h := newHandler(t, testserver.Config{})
	for _, tc := range []struct {
		method, target string
		want           int
	}{
		{"GET", "/", http.StatusOK},
		{"GET", "/healthz", http.StatusOK},
		{"GET", "/stats", http.StatusOK},
		{"GET", "/metrics", http.StatusOK},
		{"GET", "/nope", http.StatusNotFound},
		{"GET", "/apix", http.StatusNotFound},
		{"POST", "/stats", http.StatusMethodNotAllowed},
		{"GET", "/admin/quota?quota=1", http.StatusMethodNotAllowed},
		{"GET", "/report?client_throttled=1", http.StatusMethodNotAllowed},
	} {
		if got := serve(h, tc.method, tc.target, "").status; got != tc.want {
			t.Errorf("%s %s: got %d, want %d", tc.method, tc.target, got, tc.want)
		}
	}
}

func count(statuses []int, status int) int {
	n := 0
	for _, s := range statuses {
		if s == status {
			n++
		}
	}
	return n
}

func BenchmarkHandlerAPI(b *testing.B) {
	for _, tc := range []struct {
		name string
		cfg  testserver.Config
	}{
		{"unlimited", testserver.Config{}},
		{"token bucket", testserver.Config{Quota: 1 << 30}},
		{"fixed window", testserver.Config{Quota: 1 << 30, Mode: testserver.FixedWindow}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			h := newHandler(b, tc.cfg)
			rec := httptest.NewRecorder()
			req := httptest.NewRequest("POST", "/api", nil)
			b.ReportAllocs()
			for b.Loop() {
				rec.Body.Reset()
				h.ServeHTTP(rec, req)
			}
		})
	}
}

// TestRefuseAtOnce: with RefuseAtOnce a 429 of the quota is answered
// without the latency and what the quota admits still waits for it;
// without, every answer waits. The delays are the server's own record, not
// the wall clock's.
func TestRefuseAtOnce(t *testing.T) {
	const latency = 30 * time.Millisecond
	for _, tc := range []struct {
		atOnce   bool
		p50, p99 float64 // ms, of one 200 and three 429s, within a hundredth
	}{
		{false, 30, 30},
		{true, 0, 30},
	} {
		t.Run(fmt.Sprint(tc.atOnce), func(t *testing.T) {
			clock := newFakeClock()
			h := newHandler(t, testserver.Config{Quota: 1, Latency: latency, RefuseAtOnce: tc.atOnce, Now: clock.Now})
			var got []int
			for range 4 {
				got = append(got, serve(h, "POST", "/api", "x").status)
			}
			if want := []int{200, 429, 429, 429}; !slices.Equal(got, want) {
				t.Fatalf("statuses: got %v, want %v", got, want)
			}
			s := h.Stats()
			near := func(got, want float64) bool { return math.Abs(got-want) <= want/100 } // the histogram's precision
			if !near(s.DelayP50Ms, tc.p50) || !near(s.DelayP99Ms, tc.p99) {
				t.Errorf("delays: got p50 %v ms and p99 %v ms, want %v and %v", s.DelayP50Ms, s.DelayP99Ms, tc.p50, tc.p99)
			}
		})
	}
}
