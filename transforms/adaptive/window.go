package adaptive

import (
	"math"
	"time"
)

// Unix seconds outside of which UnixNano is not representable.
const (
	maxUnixSec = math.MaxInt64 / int64(time.Second)
	minUnixSec = math.MinInt64 / int64(time.Second)
)

// unixNanos returns t as Unix nanoseconds, saturating instead of overflowing
// outside the years 1678–2262.
func unixNanos(t time.Time) int64 {
	s := t.Unix()
	switch {
	case s >= maxUnixSec:
		return math.MaxInt64
	case s <= minUnixSec:
		return math.MinInt64
	}
	return t.UnixNano()
}

// floorDiv returns ⌊a/b⌋ for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

// floorMod returns a mod b in [0, b) for b > 0.
func floorMod(a, b int64) int64 {
	m := a % b
	if m < 0 {
		m += b
	}
	return m
}

// satAdd returns a+b for non-negative b, saturating at MaxInt64.
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// touch starts the window at now if this is the first event, and otherwise
// moves it forward to now.
func (t *Throttler) touch(now int64) {
	if !t.started {
		t.started = true
		if t.sliding {
			t.head = floorDiv(now, t.bucket)
		} else {
			t.start = now
		}
		return
	}
	t.advance(now)
}

// advance moves a started window forward to now, forgetting what has fallen
// out of it. A now earlier than the window changes nothing.
func (t *Throttler) advance(now int64) {
	if !t.started {
		return
	}
	if t.sliding {
		t.advanceSliding(floorDiv(now, t.bucket))
		return
	}
	if now < t.start {
		return
	}
	// now ≥ start, so the difference is exact in uint64 arithmetic.
	elapsed := uint64(now) - uint64(t.start)
	interval := uint64(t.interval)
	if elapsed < interval {
		return
	}
	// Boundaries stay at start + n·interval; the result lies in [start, now].
	t.start = int64(uint64(t.start) + elapsed/interval*interval)
	t.requests, t.accepts = 0, 0
}

// advanceSliding makes b the newest bucket, clearing every bucket that falls
// out of the window on the way.
func (t *Throttler) advanceSliding(b int64) {
	if b <= t.head {
		return
	}
	n := int64(len(t.bucketRequests))
	if gap := uint64(b) - uint64(t.head); gap >= uint64(n) {
		clear(t.bucketRequests)
		clear(t.bucketAccepts)
		t.requests, t.accepts = 0, 0
	} else {
		for i := t.head + 1; i <= b; i++ {
			slot := floorMod(i, n)
			t.requests -= t.bucketRequests[slot]
			t.accepts -= t.bucketAccepts[slot]
			t.bucketRequests[slot], t.bucketAccepts[slot] = 0, 0
		}
	}
	t.head = b
}

// addRequest counts one request in the current window.
func (t *Throttler) addRequest() {
	if t.sliding {
		slot := floorMod(t.head, int64(len(t.bucketRequests)))
		t.bucketRequests[slot] = satAdd(t.bucketRequests[slot], 1)
	}
	t.requests = satAdd(t.requests, 1)
}

// addAccept counts one accept in the current window.
func (t *Throttler) addAccept() {
	if t.sliding {
		slot := floorMod(t.head, int64(len(t.bucketAccepts)))
		t.bucketAccepts[slot] = satAdd(t.bucketAccepts[slot], 1)
	}
	t.accepts = satAdd(t.accepts, 1)
}
