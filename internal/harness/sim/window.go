package sim

import (
	"math"
	"math/rand/v2"
	"time"
)

// fixedWindow is the Backend of FixedWindow, DriftingWindow and
// AlignedWindow.
type fixedWindow struct {
	cap    Capacity
	window time.Duration // the shortest window
	jitter time.Duration // each window lasts window plus [0, jitter)
	into   time.Duration // without jitter, how far into a window the run starts
	ra     bool
	rng    *rand.Rand      // draws the windows (jitter > 0)
	ends   []time.Duration // the ends of the windows drawn so far
	k      int             // the current window, an index into ends
	used   int64           // requests accepted in it
}

// quota is the number of requests a window accepts at rate: the rate times
// the mean window.
func (w *fixedWindow) quota(rate float64) int64 {
	return int64(math.Floor(rate*(w.window+w.jitter/2).Seconds() + tolerance))
}

// end returns the end of window i, drawing windows as needed: they do not
// depend on the requests. Without jitter they are aligned to the start of
// the run, or began into before it; with it, the first began at a random
// time before the start.
func (w *fixedWindow) end(i int) time.Duration {
	for len(w.ends) <= i {
		d := w.window
		if w.jitter > 0 {
			d += time.Duration(w.rng.Int64N(int64(w.jitter)))
		}
		switch {
		case len(w.ends) > 0:
			w.ends = append(w.ends, w.ends[len(w.ends)-1]+d)
		case w.jitter > 0:
			w.ends = append(w.ends, d-time.Duration(w.rng.Int64N(int64(w.window))))
		default:
			w.ends = append(w.ends, d-w.into)
		}
	}
	return w.ends[i]
}

// roll moves to the window holding t.
func (w *fixedWindow) roll(t time.Duration) {
	for t >= w.end(w.k) {
		w.k, w.used = w.k+1, 0
	}
}

// Take implements Backend.
func (w *fixedWindow) Take(at time.Duration) (bool, time.Duration) {
	w.roll(at)
	rate, _ := w.cap.At(at)
	if w.used < w.quota(rate) {
		w.used++
		return true, 0
	}
	if !w.ra {
		return false, 0
	}
	return false, retryAfter(at, w.NextAvailable(at), rate)
}

// NextAvailable implements Backend.
func (w *fixedWindow) NextAvailable(at time.Duration) time.Duration {
	w.roll(at)
	t, k, used := at, w.k, w.used
	for {
		rate, until := w.cap.At(t)
		q := w.quota(rate)
		if used < q {
			return t
		}
		if q == 0 && until == Never {
			return Never
		}
		end := w.end(k)
		if until < end {
			t = until
			continue
		}
		t, k, used = end, k+1, 0
	}
}
