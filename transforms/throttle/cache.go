package throttle

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync/atomic"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/beamthrottle/beamthrottle/transforms/throttle/internal/cache"
)

// cacheEntries is the size of the in-process response cache (WithCache
// without a Redis address).
const cacheEntries = 100_000

// cacheTimeout bounds each read and write of a Redis response cache: past
// it the cache is skipped (fails open), and left alone for a back-off (see
// cache.Breaker), so that a hung server holds a firing at most this long
// once per back-off, not once per element.
const cacheTimeout = 100 * time.Millisecond

// workerCaches are the worker's response caches, one per Redis address
// and one in-process LRU, shared by every transform of the process (their
// keys begin with a hash of the caller's type and configuration).
var workerCaches = &registry[cache.Store]{m: map[string]*shared[cache.Store]{}}

// cacheID is the registry id of the cache at addr ("" for the LRU).
func cacheID(addr string) string {
	if addr == "" {
		return "memory"
	}
	return "redis:" + addr
}

// cachePrefix begins the cache keys of a transform calling caller: the
// caller's type and JSON configuration, hashed, so that transforms and jobs
// that call the same API the same way share responses, and others do not.
func cachePrefix(caller userValue) string {
	h := sha256.New()
	if caller.set() {
		h.Write([]byte(caller.Type.T.String()))
	}
	h.Write([]byte{0})
	h.Write([]byte(caller.JSON))
	return "beamthrottle:cache:" + hex.EncodeToString(h.Sum(nil)[:8]) + ":"
}

// acquireCache returns the worker's response cache at addr.
func acquireCache(addr string) (cache.Store, error) {
	return workerCaches.acquire(cacheID(addr), func() (cache.Store, error) {
		if addr == "" {
			return cache.NewLRU(cacheEntries, nil), nil
		}
		return cache.NewBreaker(cache.NewRedis(addr, cacheTimeout), nil), nil
	})
}

// releaseCache drops a reference to the cache at addr, closing it with the
// last one.
func releaseCache(addr string) {
	if c, last := workerCaches.release(cacheID(addr)); last {
		c.Close()
	}
}

// cacheWarned is when the worker last logged a cache fault (unix nanos):
// a cache that is down is logged once a minute, not once per element.
var cacheWarned atomic.Int64

// cacheFault counts a fault of the response cache and logs it now and then.
func (fr *driver) cacheFault(ctx context.Context, op string, err error) {
	fr.t.cacheErrors++
	now, last := time.Now().UnixNano(), cacheWarned.Load()
	if now-last >= int64(time.Minute) && cacheWarned.CompareAndSwap(last, now) {
		log.Warnf(ctx, "throttle: response cache %s failed, calling instead (logged once a minute): %v", op, err)
	}
}

// cached routes it to Success if the response cache holds its response,
// and reports whether it did. A cache fault is a miss.
func (fr *driver) cached(it *item) bool {
	resp, ok, err := fr.fn.cache.Get(fr.ctx, it.CacheKey)
	switch {
	case err != nil:
		fr.cacheFault(fr.ctx, "read", err)
		return false
	case !ok:
		fr.t.cacheMisses++
		return false
	}
	fr.t.cacheHits++
	fr.ended(it, fr.now(), true)
	fr.out.ok(it, resp)
	return true
}

// remember stores the response of a successful call for it.
func (fr *driver) remember(it *item, resp []byte) {
	if fr.fn.cache == nil || it.CacheKey == "" {
		return
	}
	if err := fr.fn.cache.Set(fr.ctx, it.CacheKey, resp, fr.fn.CacheTTL); err != nil {
		fr.cacheFault(fr.ctx, "write", err)
	}
}

// fromCache sorts the items a firing took: those the cache answers go to
// Success, those whose key another item of this firing already holds wait
// for the next firing (by then its call has answered them through the
// cache, or failed), and it returns the rest, to be decided on.
func (fr *driver) fromCache(got []item) []item {
	if fr.fn.cache == nil {
		return got
	}
	if fr.keys == nil {
		fr.keys = map[string]bool{}
	}
	live := got[:0:0]
	for i := range got {
		it := &got[i]
		switch {
		case it.CacheKey == "":
			live = append(live, *it)
		case fr.keys[it.CacheKey]:
			fr.waiting = append(fr.waiting, *it)
		case !fr.cached(it):
			fr.keys[it.CacheKey] = true
			live = append(live, *it)
		}
	}
	return live
}
