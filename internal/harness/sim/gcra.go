package sim

import (
	"math"
	"time"
)

// gcra is the Backend of GCRA. Times are float nanoseconds since the start
// of the run (exact to well under a nanosecond over any run).
type gcra struct {
	cap   Capacity
	burst float64 // ≥ 1
	ra    bool
	tat   float64       // theoretical arrival time
	rate  float64       // the last positive rate in force, requests per second
	last  time.Duration // phase changes up to last are applied
}

// interval is the emission interval T at rate, in nanoseconds.
func interval(rate float64) float64 { return 1e9 / rate }

// rescale applies a change of capacity at p to tat (emission intervals
// ahead of p keep their number at the new rate) and to the remembered
// rate. An outage (rate 0) changes nothing.
func rescale(tat, rate float64, p time.Duration, next float64) (float64, float64) {
	if next == 0 {
		return tat, rate
	}
	if rate > 0 && tat > float64(p) {
		tat = float64(p) + (tat-float64(p))*rate/next
	}
	return tat, next
}

func (g *gcra) advance(t time.Duration) {
	for g.last < t {
		_, until := g.cap.At(g.last)
		if until > t {
			g.last = t
			return
		}
		next, _ := g.cap.At(until)
		g.tat, g.rate = rescale(g.tat, g.rate, until, next)
		g.last = until
	}
}

// Take implements Backend.
func (g *gcra) Take(at time.Duration) (bool, time.Duration) {
	g.advance(at)
	rate, _ := g.cap.At(at)
	if rate > 0 && float64(at)+(g.burst-1)*interval(rate) >= g.tat-1e-3 {
		g.tat = math.Max(g.tat, float64(at)) + interval(rate)
		return true, 0
	}
	if !g.ra {
		return false, 0
	}
	return false, retryAfter(at, g.NextAvailable(at), rate)
}

// NextAvailable implements Backend.
func (g *gcra) NextAvailable(at time.Duration) time.Duration {
	g.advance(at)
	t, tat, last := at, g.tat, g.rate
	for {
		rate, until := g.cap.At(t)
		if rate > 0 {
			c := max(t, time.Duration(math.Ceil(tat-(g.burst-1)*interval(rate))))
			if c < until {
				return c
			}
		}
		if until == Never {
			return Never
		}
		next, _ := g.cap.At(until)
		tat, last = rescale(tat, last, until, next)
		t = until
	}
}
