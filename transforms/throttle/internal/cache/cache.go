// Package cache holds the response caches of the throttle transform: an
// in-process LRU and Redis (Memorystore). A cached response spends no call,
// quota or slot. Both fail open at their caller: an error is a miss.
package cache

import (
	"container/list"
	"context"
	"errors"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Store is a response cache: values under keys, each kept for a TTL.
// Implementations are safe for concurrent use.
type Store interface {
	// Get returns the value under key, and whether there is one that has
	// not expired.
	Get(ctx context.Context, key string) (val []byte, ok bool, err error)
	// Set stores val under key for ttl (no expiry if ttl ≤ 0).
	Set(ctx context.Context, key string, val []byte, ttl time.Duration) error
	// Close releases the Store's connections.
	Close() error
}

// LRU is an in-process Store of at most a fixed number of entries: the
// least recently used goes first when it is full. Each worker process has
// its own. The zero value is not usable; make one with NewLRU.
type LRU struct {
	mu      sync.Mutex
	max     int
	now     func() time.Time
	order   *list.List // of *entry, most recently used first
	entries map[string]*list.Element
}

type entry struct {
	key     string
	val     []byte
	expires time.Time // zero: never
}

// NewLRU returns an LRU of at most entries entries (at least 1) whose TTLs
// are measured with now (time.Now if nil).
func NewLRU(entries int, now func() time.Time) *LRU {
	if now == nil {
		now = time.Now
	}
	return &LRU{max: max(entries, 1), now: now, order: list.New(), entries: map[string]*list.Element{}}
}

// Get returns the value under key unless it expired (an expired entry is
// removed).
func (c *LRU) Get(_ context.Context, key string) ([]byte, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return nil, false, nil
	}
	e := el.Value.(*entry)
	if !e.expires.IsZero() && !c.now().Before(e.expires) {
		c.order.Remove(el)
		delete(c.entries, key)
		return nil, false, nil
	}
	c.order.MoveToFront(el)
	return e.val, true, nil
}

// Set stores val under key for ttl, evicting the least recently used entry
// when the LRU is full.
func (c *LRU) Set(_ context.Context, key string, val []byte, ttl time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var exp time.Time
	if ttl > 0 {
		exp = c.now().Add(ttl)
	}
	if el, ok := c.entries[key]; ok {
		e := el.Value.(*entry)
		e.val, e.expires = val, exp
		c.order.MoveToFront(el)
		return nil
	}
	c.entries[key] = c.order.PushFront(&entry{key: key, val: val, expires: exp})
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.entries, last.Value.(*entry).key)
	}
	return nil
}

// Len returns how many entries the LRU holds, expired or not.
func (c *LRU) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

// Close does nothing: an LRU holds no connection.
func (c *LRU) Close() error { return nil }

// Redis is a Store in Redis (Memorystore), shared by every worker and job
// that uses the same server and key prefix.
type Redis struct {
	client  *redis.Client
	timeout time.Duration
}

// NewRedis returns a Redis Store at addr (host:port). Each Get and Set
// gives up after timeout (100 ms if zero or less), so that a slow or down
// server costs a call little time.
func NewRedis(addr string, timeout time.Duration) *Redis {
	if timeout <= 0 {
		timeout = 100 * time.Millisecond
	}
	return &Redis{
		client: redis.NewClient(&redis.Options{
			Addr:                  addr,
			ContextTimeoutEnabled: true,
			MaxRetries:            -1, // fail open at once: a miss costs one call, a retry costs time
			DialerRetries:         1,
			DialTimeout:           timeout,
			ReadTimeout:           timeout,
			WriteTimeout:          timeout,
		}),
		timeout: timeout,
	}
}

// Get returns the value under key; a missing key is a miss, not an error.
func (r *Redis) Get(ctx context.Context, key string) ([]byte, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	val, err := r.client.Get(ctx, key).Bytes()
	switch {
	case errors.Is(err, redis.Nil):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	return val, true, nil
}

// Set stores val under key for ttl (SET with PX).
func (r *Redis) Set(ctx context.Context, key string, val []byte, ttl time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	return r.client.Set(ctx, key, val, max(ttl, 0)).Err()
}

// Close closes the client's connections.
func (r *Redis) Close() error { return r.client.Close() }

var (
	_ Store = (*LRU)(nil)
	_ Store = (*Redis)(nil)
)
