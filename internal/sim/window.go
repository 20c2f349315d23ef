package sim

import (
	"math"
	"time"
)

// fixedWindow is the Backend of FixedWindow.
type fixedWindow struct {
	cap    Capacity
	window time.Duration
	ra     bool
	k      int64 // number of the current window
	used   int64 // requests accepted in it
}

// quota is the number of requests a window accepts at rate.
func (w *fixedWindow) quota(rate float64) int64 {
	return int64(math.Floor(rate*w.window.Seconds() + tolerance))
}

// roll moves to the window holding t.
func (w *fixedWindow) roll(t time.Duration) {
	if k := int64(t / w.window); k != w.k {
		w.k, w.used = k, 0
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
	t, used := at, w.used
	for {
		rate, until := w.cap.At(t)
		q := w.quota(rate)
		if used < q {
			return t
		}
		if q == 0 && until == Never {
			return Never
		}
		end := (t/w.window + 1) * w.window
		if until < end {
			t = until
			continue
		}
		t, used = end, 0
	}
}
