package pubsubio

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// extendCall is one call of a leaseKeeper's extend function.
type extendCall struct {
	At       time.Duration // Since the test started.
	IDs      []string
	Deadline time.Duration
}

// recorder records extend calls, failing them with err.
type recorder struct {
	start time.Time
	err   error
	mu    sync.Mutex
	calls []extendCall
}

func (r *recorder) extend(_ context.Context, ids []string, d time.Duration) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, extendCall{time.Since(r.start), slices.Sorted(slices.Values(ids)), d})
	return r.err
}

func TestLeaseKeeperExtendsUntilAckedOrExpired(t *testing.T) {
	for _, failing := range []bool{false, true} {
		name := map[bool]string{false: "extensions succeed", true: "extensions fail"}[failing]
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := &recorder{start: time.Now()}
				if failing {
					r.err = errors.New("unavailable") // Keeps going regardless.
				}
				k := &leaseKeeper{extend: r.extend, deadline: 30 * time.Second} // Extends every 20s.
				k.add([]string{"a", "b"}, r.start.Add(100*time.Second))
				k.add([]string{"c"}, r.start.Add(30*time.Second))
				time.Sleep(50 * time.Second)
				k.remove([]string{"a"}) // Acknowledged.
				if got, want := k.outstanding(), 1; got != want {
					t.Errorf("after acking a: got %d leases, want %d", got, want)
				}
				synctest.Wait()
				time.Sleep(time.Hour) // The goroutine stops once no lease is left.
				synctest.Wait()

				want := []extendCall{
					{20 * time.Second, []string{"a", "b", "c"}, 30 * time.Second},
					{40 * time.Second, []string{"a", "b"}, 30 * time.Second}, // c expired at 30s.
					{60 * time.Second, []string{"b"}, 30 * time.Second},
					{80 * time.Second, []string{"b"}, 30 * time.Second},
					{100 * time.Second, []string{"b"}, 30 * time.Second}, // Not after 100s yet.
				}
				if diff := cmp.Diff(want, r.calls); diff != "" {
					t.Errorf("extensions (-want +got):\n%s", diff)
				}
				if got := k.outstanding(); got != 0 {
					t.Errorf("at the end: got %d leases, want 0", got)
				}
			})
		})
	}
}

func TestLeaseKeeperRestartsAfterIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{start: time.Now()}
		k := &leaseKeeper{extend: r.extend, deadline: 60 * time.Second} // Extends every 40s.
		k.add([]string{"a"}, r.start.Add(10*time.Second))
		time.Sleep(time.Minute) // a expired unextended; the goroutine stopped.
		k.add([]string{"b"}, r.start.Add(2*time.Minute))
		time.Sleep(time.Hour)
		synctest.Wait()
		want := []extendCall{{100 * time.Second, []string{"b"}, 60 * time.Second}}
		if diff := cmp.Diff(want, r.calls); diff != "" {
			t.Errorf("extensions (-want +got):\n%s", diff)
		}
	})
}

func TestLeaseKeeperConcurrentUse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{start: time.Now()}
		k := &leaseKeeper{extend: r.extend, deadline: 10 * time.Second}
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				for j := range 100 {
					id := string(rune('a'+i)) + string(rune('a'+j%26))
					k.add([]string{id}, time.Now().Add(time.Minute))
					time.Sleep(time.Second)
					k.remove([]string{id})
				}
			})
		}
		wg.Wait()
		if got := k.outstanding(); got != 0 {
			t.Errorf("got %d leases after every add was removed, want 0", got)
		}
		time.Sleep(time.Hour)
	})
}
