package adaptive

import (
	"math"
	"time"
)

// window is the SRE rule's seam between counting and forgetting: it counts
// requests and accepts over time and sums what it still remembers. Times
// are Unix nanoseconds. The first event (sums or add) starts the window;
// a time earlier than one seen before counts in the current window. The
// two kinds are fixedWindow and slidingWindow.
type window interface {
	// sums moves the window to now and returns the counts in it.
	sums(now int64) (requests, accepts int64)
	// add moves the window to now and counts requests and accepts in it.
	add(now, requests, accepts int64)
	// save returns the window's state for MarshalBinary.
	save() sreState
	// restore replaces the window's state with s, which check has
	// accepted, when s fits this window; otherwise the window stays reset.
	restore(s sreState)
	// reset forgets everything: the window is as made.
	reset()
}

// fixedWindow counts in consecutive windows of interval and zeroes both
// counts when one ends. The first window starts at the first event; window
// boundaries are start + n·interval for whole n, so idle time never shifts
// them, and an event at a boundary belongs to the new window.
type fixedWindow struct {
	interval int64 // nanoseconds

	started           bool
	start             int64 // of the current window
	requests, accepts int64
}

func (w *fixedWindow) sums(now int64) (int64, int64) {
	w.advance(now)
	return w.requests, w.accepts
}

func (w *fixedWindow) add(now, requests, accepts int64) {
	w.advance(now)
	w.requests = satAdd(w.requests, requests)
	w.accepts = satAdd(w.accepts, accepts)
}

// advance starts the window at the first event and moves it forward to now
// after that.
func (w *fixedWindow) advance(now int64) {
	if !w.started {
		w.started, w.start = true, now
		return
	}
	if now < w.start {
		return
	}
	// now ≥ start, so the difference is exact in uint64 arithmetic.
	elapsed := uint64(now) - uint64(w.start)
	interval := uint64(w.interval)
	if elapsed < interval {
		return
	}
	// Boundaries stay at start + n·interval; the result lies in [start, now].
	w.start = int64(uint64(w.start) + elapsed/interval*interval)
	w.requests, w.accepts = 0, 0
}

func (w *fixedWindow) save() sreState {
	return sreState{Started: w.started, Window: fixedKind, Start: w.start, Requests: w.requests, Accepts: w.accepts}
}

// restore keeps the window's start and the counts whatever the interval
// they were counted with; the next boundary is start + n·interval of w.
func (w *fixedWindow) restore(s sreState) {
	if s.Window != fixedKind {
		return
	}
	w.started, w.start = true, s.Start
	w.requests, w.accepts = s.Requests, s.Accepts
}

func (w *fixedWindow) reset() { *w = fixedWindow{interval: w.interval} }

// slidingWindow counts over its last len(requests) buckets of bucket
// nanoseconds, aligned to the Unix epoch, and forgets the oldest bucket
// whenever time enters a new one. Bucket number b (Unix nanoseconds divided
// by bucket, rounded down) is at index b mod len: a ring.
type slidingWindow struct {
	bucket int64 // nanoseconds

	started           bool
	head              int64   // number of the newest bucket
	requests, accepts []int64 // per bucket
	sumR, sumA        int64   // over the buckets
}

// newSlidingWindow returns a window of ceil(size/bucket) buckets.
func newSlidingWindow(size, bucket time.Duration) *slidingWindow {
	n := bucketCount(size, bucket)
	return &slidingWindow{bucket: int64(bucket), requests: make([]int64, n), accepts: make([]int64, n)}
}

func (w *slidingWindow) sums(now int64) (int64, int64) {
	w.advance(now)
	return w.sumR, w.sumA
}

func (w *slidingWindow) add(now, requests, accepts int64) {
	w.advance(now)
	slot := floorMod(w.head, int64(len(w.requests)))
	w.requests[slot] = satAdd(w.requests[slot], requests)
	w.accepts[slot] = satAdd(w.accepts[slot], accepts)
	w.sumR = satAdd(w.sumR, requests)
	w.sumA = satAdd(w.sumA, accepts)
}

// advance starts the window at the first event and, after that, makes the
// bucket of now the newest, clearing every bucket that falls out of the
// window on the way.
func (w *slidingWindow) advance(now int64) {
	b := floorDiv(now, w.bucket)
	if !w.started {
		w.started, w.head = true, b
		return
	}
	if b <= w.head {
		return
	}
	n := int64(len(w.requests))
	if gap := uint64(b) - uint64(w.head); gap >= uint64(n) {
		clear(w.requests)
		clear(w.accepts)
		w.sumR, w.sumA = 0, 0
	} else {
		for i := w.head + 1; i <= b; i++ {
			slot := floorMod(i, n)
			w.sumR -= w.requests[slot]
			w.sumA -= w.accepts[slot]
			w.requests[slot], w.accepts[slot] = 0, 0
		}
	}
	w.head = b
}

func (w *slidingWindow) save() sreState {
	return sreState{Started: w.started, Window: slidingKind, Requests: w.sumR, Accepts: w.sumA,
		BucketNanos: w.bucket, Head: w.head, BucketRequests: w.requests, BucketAccepts: w.accepts}
}

// restore keeps, when the bucket width is the same, the newest buckets
// that fit in w and drops the rest; history in buckets of another width
// cannot be mapped onto w's, and is dropped.
func (w *slidingWindow) restore(s sreState) {
	if s.Window != slidingKind || s.BucketNanos != w.bucket || len(s.BucketRequests) == 0 {
		return
	}
	w.started, w.head = true, s.Head
	oldN, newN := int64(len(s.BucketRequests)), int64(len(w.requests))
	// Copy buckets Head, Head−1, …, newest first, while they fit.
	for i := int64(0); i < min(oldN, newN); i++ {
		b := s.Head - i
		if b > s.Head { // wrapped past MinInt64: no older buckets exist
			break
		}
		from, to := floorMod(b, oldN), floorMod(b, newN)
		w.requests[to] = s.BucketRequests[from]
		w.accepts[to] = s.BucketAccepts[from]
		w.sumR += s.BucketRequests[from]
		w.sumA += s.BucketAccepts[from]
	}
}

func (w *slidingWindow) reset() {
	w.started, w.head, w.sumR, w.sumA = false, 0, 0, 0
	clear(w.requests)
	clear(w.accepts)
}

// bucketCount returns ceil(size/bucket) for positive durations.
func bucketCount(size, bucket time.Duration) int64 {
	n := int64(size / bucket)
	if size%bucket != 0 {
		n++
	}
	return n
}

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
