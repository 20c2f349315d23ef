package cache

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/internal/testenv/services"
)

// counted is a Store that counts the operations that reach the Store under
// it.
type counted struct {
	Store
	ops atomic.Int64
}

func (c *counted) Get(ctx context.Context, key string) ([]byte, bool, error) {
	c.ops.Add(1)
	return c.Store.Get(ctx, key)
}

func (c *counted) Set(ctx context.Context, key string, val []byte, ttl time.Duration) error {
	c.ops.Add(1)
	return c.Store.Set(ctx, key, val, ttl)
}

// TestBreakerHungServer: a server that accepts connections and never
// answers (a frozen Redis) is asked once, then once per back-off (1, 2, 4,
// 8 s of the test's clock): 1,000 reads and writes over 10 s make 4 round
// trips, each given up within the timeout, and every other operation is
// ErrDown without a round trip.
func TestBreakerHungServer(t *testing.T) {
	const timeout = 50 * time.Millisecond
	hung := services.StartSilent(t)
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	under := &counted{Store: NewRedis(hung.Addr, timeout)}
	b := NewBreaker(under, clock.now)
	defer b.Close()
	ctx := context.Background()
	var down, failed int
	var slowest time.Duration
	for i := range 1000 {
		start := time.Now()
		var err error
		if i%2 == 0 {
			_, _, err = b.Get(ctx, "k")
		} else {
			err = b.Set(ctx, "k", []byte("v"), time.Minute)
		}
		slowest = max(slowest, time.Since(start))
		switch {
		case errors.Is(err, ErrDown):
			down++
		case err != nil:
			failed++
		default:
			t.Fatalf("operation %d on a hung server: no error", i)
		}
		clock.t = clock.t.Add(10 * time.Millisecond)
	}
	// Round trips at 0 s, then after back-offs of 1, 2 and 4 s: at 1 s,
	// 3 s and 7 s; the next would be at 15 s.
	if got := under.ops.Load(); got != 4 || failed != 4 || down != 996 {
		t.Errorf("%d round trips (%d failed), %d skipped; want 4 round trips, all failed, and 996 skipped", got, failed, down)
	}
	// The timeout is 50 ms; the margin is for a busy machine.
	if slowest > 5*time.Second {
		t.Errorf("the slowest operation took %v, want it given up within its timeout", slowest)
	}
}

// TestBreakerRecovers: Redis killed, the breaker opens at the first failure
// and skips until its back-off ends; with Redis back, the probe succeeds and
// closes it, and values round-trip again.
func TestBreakerRecovers(t *testing.T) {
	srv := services.StartRedis(t)
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	under := &counted{Store: NewRedis(srv.Addr, 200*time.Millisecond)}
	b := NewBreaker(under, clock.now)
	defer b.Close()
	ctx := context.Background()
	if err := b.Set(ctx, "k", []byte("v"), 0); err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	if _, _, err := b.Get(ctx, "k"); err == nil || errors.Is(err, ErrDown) {
		t.Fatalf("Get on a killed server: %v, want the server's error", err)
	}
	if _, _, err := b.Get(ctx, "k"); !errors.Is(err, ErrDown) {
		t.Fatalf("Get right after a failure: %v, want ErrDown", err)
	}
	srv.Restart(t)
	if err := b.Set(ctx, "k", []byte("v2"), 0); !errors.Is(err, ErrDown) {
		t.Fatalf("Set within the back-off: %v, want ErrDown", err)
	}
	clock.t = clock.t.Add(minBackoff)
	if err := b.Set(ctx, "k", []byte("v2"), 0); err != nil {
		t.Fatalf("the probe after the back-off: %v, want it to reach the restarted server", err)
	}
	if v, ok, err := b.Get(ctx, "k"); err != nil || !ok || string(v) != "v2" {
		t.Fatalf("Get after the probe = %q, %v, %v; want v2", v, ok, err)
	}
	if got := under.ops.Load(); got != 4 {
		t.Errorf("%d operations reached the server, want 4 (set, failed get, probe, get)", got)
	}
}

// TestBreakerCancelled: an operation whose own context ended does not open
// the breaker.
func TestBreakerCancelled(t *testing.T) {
	hung := services.StartSilent(t)
	b := NewBreaker(NewRedis(hung.Addr, time.Minute), nil)
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, _, err := b.Get(ctx, "k"); err == nil || errors.Is(err, ErrDown) {
		t.Fatalf("Get with a context that ends: %v, want its error", err)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel2()
	if _, _, err := b.Get(ctx2, "k"); errors.Is(err, ErrDown) {
		t.Errorf("Get after a cancelled one: ErrDown, want it tried")
	}
}
