package throttle

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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

// cacheWarned paces the log of cache faults: a cache that is down is
// logged once a minute, not once per element.
var cacheWarned minutely

// cacheFault counts a fault of the response cache and logs it now and then.
func (fr *driver) cacheFault(ctx context.Context, op string, err error) {
	fr.t.cacheErrors++
	if cacheWarned.due() {
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

// remember stores the response of a successful call for it, and reports
// whether the cache now holds it.
func (fr *driver) remember(it *item, resp []byte) bool {
	if fr.fn.cache == nil || it.CacheKey == "" {
		return false
	}
	if err := fr.fn.cache.Set(fr.ctx, it.CacheKey, resp, fr.fn.CacheTTL); err != nil {
		fr.cacheFault(fr.ctx, "write", err)
		return false
	}
	return true
}

// fromCache sorts the items a firing took: those the cache answers go to
// Success, those whose key another item of this firing already holds wait
// for its answer (see release), and it returns the rest, to be decided on.
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

// settled is a cache key whose element the firing routed: with the
// response the cache now holds, if stored.
type settled struct {
	key    string
	resp   []byte
	stored bool
}

// decided notes that it was routed for good (not requeued): resp is its
// response, stored whether the cache holds it. The elements waiting for its
// key are then released (see release).
func (fr *driver) decided(it *item, resp []byte, stored bool) {
	if it.CacheKey == "" || !fr.keys[it.CacheKey] {
		return
	}
	fr.settled = append(fr.settled, settled{key: it.CacheKey, resp: resp, stored: stored})
}

// release ends the wait of the elements whose cache key was settled, and
// returns items with those it added to the firing's core. Duplicates wait
// only for an answer the cache holds: if the cache stored the response,
// they are answered with it at once, as a read of the cache would answer
// them; if not (an error answer, or a cache that failed or is down), they
// are called for in this firing, not held for the next, as long as the
// firing has room (its batch size), and wait in the queue otherwise, as
// any element beyond a batch does.
func (fr *driver) release(now time.Time, items []item) []item {
	if len(fr.settled) == 0 || len(fr.waiting) == 0 || interrupted() {
		fr.settled = fr.settled[:0]
		return items
	}
	for _, st := range fr.settled {
		kept := fr.waiting[:0]
		for _, it := range fr.waiting {
			switch {
			case it.CacheKey != st.key:
				kept = append(kept, it)
			case st.stored:
				fr.t.cacheHits++
				fr.ended(&it, now, true)
				fr.out.ok(&it, st.resp)
			case fr.core.Live() < fr.fn.BatchSize:
				fr.t.cacheMisses++
				fr.core.Add(now, elemOf(&it)) // its index is len(items): the core numbers as items holds them
				items = append(items, it)
			default:
				kept = append(kept, it)
			}
		}
		fr.waiting = kept
	}
	fr.settled = fr.settled[:0]
	return items
}
