package quota_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/beamthrottle/beamthrottle/transforms/throttle/quota"
)

// windowQuota is a backend written outside this repository: at most
// Rate.N permits per key in each fixed window of Rate.Per. It counts in
// memory to keep the example short; a backend shared by workers and jobs
// keeps the count in a service they all reach, which it dials on first
// use, not in its open function.
type windowQuota struct {
	rate quota.Rate

	mu    sync.Mutex
	start map[string]time.Time // per key, the window counted in used
	used  map[string]int
}

// Take grants what is left of the window holding now, up to n.
func (q *windowQuota) Take(_ context.Context, key string, n int, now time.Time) (quota.Grant, error) {
	if n <= 0 {
		return quota.Grant{}, nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	start := now.Truncate(q.rate.Per)
	if !q.start[key].Equal(start) {
		q.start[key], q.used[key] = start, 0
	}
	g := quota.Grant{Granted: min(n, q.rate.N-q.used[key])}
	q.used[key] += g.Granted
	if g.Granted < n {
		g.RetryAt = start.Add(q.rate.Per)
	}
	return g, nil
}

// WindowEnd makes windowQuota a quota.Windowed: its permits lapse with
// their window.
func (q *windowQuota) WindowEnd(_ string, now time.Time) time.Time {
	return now.Truncate(q.rate.Per).Add(q.rate.Per)
}

// openWindow opens the backend "window" for s: it checks the settings it
// uses, each fault a *quota.ConfigError, and refuses those it cannot use.
func openWindow(_ context.Context, s quota.Settings) (quota.Quota, error) {
	var errs []error
	if s.Rate == (quota.Rate{}) {
		errs = append(errs, &quota.ConfigError{Field: "Rate", Err: errors.New("required with the window backend")})
	}
	if s.Addr != "" {
		errs = append(errs, &quota.ConfigError{Field: "Addr", Err: errors.New("not used with the window backend")})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &windowQuota{rate: s.Rate, start: map[string]time.Time{}, used: map[string]int{}}, nil
}

// The backend's package registers it when it is imported.
func init() { quota.Register("window", openWindow) }

// A backend of one's own: its package registers it under a name, and a
// program that imports the package names it where transforms/throttle
// takes a backend, throttle.QuotaConfig{Backend: "window", Rate: "5/s"},
// or opens it with Open.
func ExampleRegister() {
	ctx := context.Background()
	q, err := quota.Open(ctx, "window", quota.Settings{Key: "translate", Rate: quota.Rate{N: 5, Per: time.Second}})
	if err != nil {
		panic(err)
	}
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, d := range []time.Duration{0, 500 * time.Millisecond, time.Second} {
		g, _ := q.Take(ctx, "translate", 3, now.Add(d))
		fmt.Printf("at +%v: %d of 3", d, g.Granted)
		if !g.RetryAt.IsZero() {
			fmt.Printf(", more at +%v", g.RetryAt.Sub(now))
		}
		fmt.Println()
	}

	_, err = quota.Open(ctx, "window", quota.Settings{Addr: "10.0.0.3:6379"})
	fmt.Println(err)
	_, err = quota.Open(ctx, "memcached", quota.Settings{})
	fmt.Println(err)
	// Output:
	// at +0s: 3 of 3
	// at +500ms: 2 of 3, more at +1s
	// at +1s: 3 of 3
	// quota: Rate: required with the window backend
	// quota: Addr: not used with the window backend
	// quota: no backend "memcached" (registered: local, window); a backend registers itself when its package is imported
}
