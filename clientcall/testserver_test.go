package clientcall_test

import (
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/beamthrottle/beamthrottle/testserver"
)

// fakeClock is a settable clock for the quota server, safe for concurrent use.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func newQuotaServer(t *testing.T, cfg testserver.Config) (*testserver.Server, *fakeClock) {
	t.Helper()
	clock := &fakeClock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	cfg.Now = clock.Now
	srv, err := testserver.NewServer(cfg)
	if err != nil {
		t.Fatalf("testserver.NewServer: %v", err)
	}
	t.Cleanup(srv.Close)
	return srv, clock
}

func TestQuotaServer(t *testing.T) {
	srv, clock := newQuotaServer(t, testserver.Config{Quota: 5, Period: time.Minute})
	h := newHTTP(t, &clientcall.HTTP{URL: srv.Endpoint()})

	for i := range 5 {
		want := "element " + strconv.Itoa(i)
		got, err := h.Call(t.Context(), []byte(want))
		if err != nil || string(got) != want {
			t.Fatalf("call %d = %q, %v; want %q, nil", i, got, err, want)
		}
	}
	_, err := h.Call(t.Context(), []byte("over quota"))
	if got := clientcall.Classify(err); got != clientcall.Throttled {
		t.Fatalf("Classify(%v) = %v, want throttled", err, got)
	}
	if !errors.Is(err, clientcall.ErrThrottled) {
		t.Errorf("errors.Is(%v, ErrThrottled) = false, want true", err)
	}
	ra, ok := clientcall.RetryAfter(err)
	if !ok || ra < time.Second || ra > time.Minute {
		t.Fatalf("RetryAfter(%v) = %v, %v; want within [1s, 1m], true", err, ra, ok)
	}
	// Waiting as long as the server asked is enough.
	clock.Advance(ra)
	if _, err := h.Call(t.Context(), []byte("after waiting")); err != nil {
		t.Errorf("call after Retry-After = %v, want nil", err)
	}
	st := srv.Handler.Stats()
	if st.Accepted != 6 || st.Rejected != 1 {
		t.Errorf("got %d accepted, %d rejected; want 6, 1", st.Accepted, st.Rejected)
	}
}

func TestQuotaServerConcurrent(t *testing.T) {
	const quota, calls = 5, 40
	srv, _ := newQuotaServer(t, testserver.Config{Quota: quota, Period: time.Minute})
	h := newHTTP(t, &clientcall.HTTP{URL: srv.Endpoint(), MaxConnsPerHost: 4})

	var (
		mu     sync.Mutex
		counts = map[clientcall.Class]int{}
		wg     sync.WaitGroup
	)
	for i := range calls {
		wg.Go(func() {
			body := []byte(strconv.Itoa(i))
			got, err := h.Call(t.Context(), body)
			if err == nil && string(got) != string(body) {
				t.Errorf("got echo %q, want %q", got, body)
			}
			mu.Lock()
			counts[clientcall.Classify(err)]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if counts[clientcall.Success] != quota || counts[clientcall.Throttled] != calls-quota {
		t.Errorf("got %v, want %d success and %d throttled", counts, quota, calls-quota)
	}
}

func TestQuotaServerFaults(t *testing.T) {
	tests := []struct {
		name      string
		set       func(*testserver.Handler)
		wantClass clientcall.Class
		wantCode  int
	}{
		{"outage 503", func(h *testserver.Handler) { h.SetOutage(503) }, clientcall.Throttled, 503},
		{"outage 429", func(h *testserver.Handler) { h.SetOutage(429) }, clientcall.Throttled, 429},
		{"errors", func(h *testserver.Handler) { h.SetErrorRate(1) }, clientcall.Failed, 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := newQuotaServer(t, testserver.Config{})
			tt.set(srv.Handler)
			h := newHTTP(t, &clientcall.HTTP{URL: srv.Endpoint()})
			_, err := h.Call(t.Context(), []byte("x"))
			if got := clientcall.Classify(err); got != tt.wantClass {
				t.Errorf("Classify(%v) = %v, want %v", err, got, tt.wantClass)
			}
			if se, ok := errors.AsType[*clientcall.StatusError](err); !ok || se.StatusCode != tt.wantCode {
				t.Errorf("got error %v, want a *StatusError with StatusCode %d", err, tt.wantCode)
			}
		})
	}
}
