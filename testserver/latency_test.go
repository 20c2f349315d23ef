package testserver

import (
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestLatencyLognormal: a seeded lognormal latency has the configured
// median and 99th percentile, within the sampling error of 20,000 draws.
func TestLatencyLognormal(t *testing.T) {
	for _, tc := range []struct {
		median, p99 time.Duration
	}{
		{3 * time.Second, 20 * time.Second},
		{2 * time.Second, 0}, // constant
		{100 * time.Millisecond, 110 * time.Millisecond},
	} {
		r := rand.New(rand.NewPCG(1, 2))
		sigma := lognormalSigma(tc.median, tc.p99)
		const n = 20000
		ds := make([]time.Duration, n)
		for i := range ds {
			ds[i] = latencyDraw(r, tc.median, sigma)
		}
		slices.Sort(ds)
		want99 := tc.p99
		if want99 == 0 {
			want99 = tc.median
		}
		for _, q := range []struct {
			name string
			got  time.Duration
			want time.Duration
		}{{"median", ds[n/2], tc.median}, {"p99", ds[n*99/100], want99}} {
			if lo, hi := q.want*95/100, q.want*105/100; q.got < lo || q.got > hi {
				t.Errorf("median %v, p99 %v: %s %v, want %v ± 5 %%", tc.median, tc.p99, q.name, q.got, q.want)
			}
		}
	}
}

// TestServiceQueue: requests that come together are served one interval
// apart, in arrival order; a cost takes that many intervals; an idle queue
// serves at once.
func TestServiceQueue(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	q := serviceQueue{interval: 20 * time.Millisecond}
	for i, tc := range []struct {
		at   time.Duration
		cost int64
		want time.Duration
	}{
		{0, 1, 0},
		{0, 1, 20 * time.Millisecond},
		{5 * time.Millisecond, 2, 35 * time.Millisecond},
		{10 * time.Millisecond, 1, 70 * time.Millisecond},
		{time.Second, 1, 0},
	} {
		if got := q.admit(t0.Add(tc.at), tc.cost); got != tc.want {
			t.Errorf("request %d at %v: waits %v, want %v", i, tc.at, got, tc.want)
		}
	}
}

// TestQueueModeNeverRefuses: in Mode Queue a burst of requests far over
// the quota is answered 200, never 429, and counted as accepted.
func TestQueueModeNeverRefuses(t *testing.T) {
	srv, err := NewServer(Config{Quota: 100, Period: time.Second, Mode: Queue})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	const n = 20
	codes := make(chan int, n)
	for range n {
		go func() {
			resp, err := http.Post(srv.Endpoint(), "application/json", strings.NewReader(`{"id":1}`))
			if err != nil {
				codes <- 0
				return
			}
			resp.Body.Close()
			codes <- resp.StatusCode
		}()
	}
	for range n {
		if c := <-codes; c != http.StatusOK {
			t.Errorf("status %d, want 200", c)
		}
	}
	if st := srv.Handler.Stats(); st.Accepted != n || st.Rejected != 0 {
		t.Errorf("accepted %d, rejected %d; want %d and 0", st.Accepted, st.Rejected, n)
	}
}

func TestQueueModeConfig(t *testing.T) {
	for _, cfg := range []Config{
		{Mode: Queue},
		{Quota: 10, Latency: time.Second, LatencyP99: time.Second},
		{Quota: 10, LatencyP99: time.Second},
	} {
		if _, err := NewHandler(cfg); err == nil {
			t.Errorf("NewHandler(%+v): no error, want one", cfg)
		}
	}
}
