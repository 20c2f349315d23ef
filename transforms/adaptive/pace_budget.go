package adaptive

import (
	"math"
	"time"
)

// Budget returns the cost units the Pacer would let through in
// [now, until] at its current rate: its unit (the typical cost of a
// request, rounded up; 1 until a request with a cost sets it) at the first
// slot, then rate × the time from that slot to until, rounded down. With
// every cost 1 that is the number of slots in [now, until]. While it
// probes a backend that rejected everything, the budget is one unit, and
// none while that probe is unanswered; it is none before a Retry-After
// ends.
func (p *Pacer) Budget(now, until time.Time) int {
	n, u := unixNanos(now), unixNanos(until)
	first := math.Ceil(p.typical())
	if !p.started {
		return satInt(first)
	}
	start := max(n, p.next, p.blocked)
	switch {
	case start > u:
		return 0
	case p.dark && p.underWay() > 0:
		return 0
	case p.dark:
		return satInt(first)
	}
	return satInt(first + math.Floor(float64(u-start)*p.rate/1e9))
}
