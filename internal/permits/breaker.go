package permits

import "time"

// The back-off of the shared quota's service after a failed round trip: it
// starts at minQuotaBackoff and doubles with each failure in a row, up to
// maxQuotaBackoff. A worker then asks a service that is down once a second
// at first and every 10 s at most, so it sees it come back within 10 s
// (what matters when failing closed, where nothing is sent meanwhile), at
// the cost of one round trip per worker per 10 s (nothing for Redis or the
// rate-limit service).
const (
	minQuotaBackoff = time.Second
	maxQuotaBackoff = 10 * time.Second
)

// breaker is the state of the shared quota's service as a Pool sees
// it, a circuit breaker with no I/O of its own: fed the time and the outcome
// of each round trip, it says whether to make the next one. The service is
// up until a round trip fails (an error or a timeout); it is then down, and
// left alone for a back-off (see minQuotaBackoff) counted from the end of
// the failed round trip. Then one round trip at a time, a probe, checks it
// again: an answer makes it up, a failure doubles the back-off. At most one
// round trip is under way at any time, up or down.
//
// The zero value is a service that is up. A breaker is not safe for
// concurrent use: a Pool calls it.
type breaker struct {
	down     bool
	inFlight bool          // a round trip is under way
	backoff  time.Duration // while down: the back-off after the last failure
	retry    time.Time     // while down: when the next probe may start
	failures int           // round trips failed in a row
}

// breakerStep is what a breaker says to do about a round trip.
type breakerStep int

const (
	// stepCall: make the round trip now and wait for its answer; the
	// service is up.
	stepCall breakerStep = iota
	// stepWait: another round trip is under way while the service is up;
	// wait for its answer, then ask again.
	stepWait
	// stepProbe: the service is down and its back-off is over; make one
	// round trip to check it, without waiting for its answer.
	stepProbe
	// stepSkip: the service is down (or being probed); decide without it.
	stepSkip
)

// next says what to do at now about a round trip. When it says stepCall or
// stepProbe, the round trip is deemed begun: the breaker says stepWait or
// stepSkip to everyone else until done or abandon.
func (b *breaker) next(now time.Time) breakerStep {
	switch {
	case b.inFlight && !b.down:
		return stepWait
	case b.inFlight || b.down && now.Before(b.retry):
		return stepSkip
	}
	b.inFlight = true
	if b.down {
		return stepProbe
	}
	return stepCall
}

// done records the end, at now, of the round trip under way: answered or
// failed. It reports whether the service changed from up to down or back.
func (b *breaker) done(now time.Time, answered bool) (changed bool) {
	b.inFlight = false
	if answered {
		changed = b.down
		*b = breaker{}
		return changed
	}
	changed = !b.down
	b.down = true
	b.failures++
	b.backoff = min(max(2*b.backoff, minQuotaBackoff), maxQuotaBackoff)
	b.retry = now.Add(b.backoff)
	return changed
}

// abandon records the end of the round trip under way without an outcome
// (its caller gave up, not the service).
func (b *breaker) abandon() { b.inFlight = false }
