package cache

import (
	"context"
	"errors"
	"sync"
	"time"
)

// The back-off of a cache server after a failed round trip: it starts at
// minBackoff and doubles with each failure in a row, up to maxBackoff. A
// cache that is down or hung then costs one round trip (at most its
// timeout) a second at first and one every 30 s at most, instead of one per
// element; it is seen back within 30 s, which costs only calls the cache
// would have saved meanwhile (a cache, unlike a quota, is never needed).
const (
	minBackoff = time.Second
	maxBackoff = 30 * time.Second
)

// ErrDown is the error of a Breaker's Get or Set while its server is left
// alone after a failure: the operation was not tried.
var ErrDown = errors.New("cache: server down, skipped until its back-off ends")

// Breaker is a Store that stops asking a server that failed: after a Get or
// Set fails (an error or a timeout), every operation returns ErrDown at once
// for a back-off (1 s, doubling with each failure in a row up to 30 s),
// counted from the end of the failed one. Then one operation at a time, a
// probe, goes through: success closes the breaker, a failure doubles the
// back-off. While the server answers, operations go through concurrently.
// An operation whose own context ended does not count either way.
//
// A Breaker is safe for concurrent use. Make one with NewBreaker.
type Breaker struct {
	store Store
	now   func() time.Time

	mu      sync.Mutex
	down    bool
	probing bool          // while down: a probe is under way
	backoff time.Duration // while down: the back-off after the last failure
	retry   time.Time     // while down: when the next probe may start
}

// NewBreaker returns a Breaker over s, whose back-offs are measured with
// now (time.Now if nil).
func NewBreaker(s Store, now func() time.Time) *Breaker {
	if now == nil {
		now = time.Now
	}
	return &Breaker{store: s, now: now}
}

// begin reports whether an operation may go to the server now; probe says
// that it is the one probe of a server that is down.
func (b *Breaker) begin() (ok, probe bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case !b.down:
		return true, false
	case b.probing || b.now().Before(b.retry):
		return false, false
	}
	b.probing = true
	return true, true
}

// end records the outcome of an operation begun with begin: failed, or
// abandoned (its context ended) without an outcome.
func (b *Breaker) end(probe, failed, abandoned bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if probe {
		b.probing = false
	}
	switch {
	case abandoned:
	case !failed:
		if probe || b.down {
			b.down, b.backoff = false, 0
		}
	case b.down && !probe:
		// A failure of an operation begun before the server went down: the
		// back-off already runs.
	default:
		b.down = true
		b.backoff = min(max(2*b.backoff, minBackoff), maxBackoff)
		b.retry = b.now().Add(b.backoff)
	}
}

// Get returns the value under key, or ErrDown while the server is left
// alone.
func (b *Breaker) Get(ctx context.Context, key string) ([]byte, bool, error) {
	ok, probe := b.begin()
	if !ok {
		return nil, false, ErrDown
	}
	val, found, err := b.store.Get(ctx, key)
	b.end(probe, err != nil, err != nil && ended(ctx))
	return val, found, err
}

// Set stores val under key for ttl, or returns ErrDown while the server is
// left alone.
func (b *Breaker) Set(ctx context.Context, key string, val []byte, ttl time.Duration) error {
	ok, probe := b.begin()
	if !ok {
		return ErrDown
	}
	err := b.store.Set(ctx, key, val, ttl)
	b.end(probe, err != nil, err != nil && ended(ctx))
	return err
}

// ended reports whether ctx is done or past its deadline (a read that
// timed out at the deadline may return before ctx says so).
func ended(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
}

// Close closes the Store under the Breaker.
func (b *Breaker) Close() error { return b.store.Close() }

var _ Store = (*Breaker)(nil)
