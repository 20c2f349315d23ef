package redisquota

import (
	"sync"
	"time"
)

// Mapping the quota server's clock onto the local one, as NTP's clock
// filter does: every round trip that reads the server's clock is a sample
// of the offset between the clocks, true within half its round trip; the
// sample with the shortest round trip, aged by the drift the clocks may
// have had since, is the estimate. A round trip slowed on one way only
// (a busy client that reads its answer late, a first call that dials the
// connection or loads the script) would put the server's time in its
// middle and be off by up to half of it; the shortest round trip is the
// least slowed, and its error bound the smallest.
const (
	// clockSamples is how many of the latest samples the filter keeps (NTP
	// keeps 8; slots are asked for several times a second, so more cover a
	// busy spell of a few seconds).
	clockSamples = 32
	// clockDrift is how fast the error of a sample grows with its age, the
	// drift two clocks may have (NTP's PHI, 15 ppm).
	clockDrift = 15e-6
	// clockWarmSamples is how many reads of the server's clock (TIME) a
	// client makes before its first reservation, so that it places its first
	// slots from more than the round trip that dialled the connection.
	clockWarmSamples = 3
)

// clockSample is one round trip's reading of the server's clock.
type clockSample struct {
	offset time.Duration // server's clock − the local one at the round trip's middle
	rtt    time.Duration
	at     time.Duration // the round trip's end, on the filter's monotonic clock
}

// serverClock estimates the offset of a server's clock from the local one.
// Local times are read with time.Now, so the estimate follows Go's
// monotonic clock and is not upset when the local wall clock is stepped.
// The zero value is not ready: use newServerClock. It is safe for
// concurrent use.
type serverClock struct {
	base time.Time // origin of the filter's monotonic clock

	mu      sync.Mutex
	samples [clockSamples]clockSample
	n, next int // samples held, and where the next one goes
}

func newServerClock() *serverClock { return &serverClock{base: time.Now()} }

// observe records a round trip sent and answered at those local times, in
// which the server's clock read server (nanoseconds since the Unix epoch).
func (c *serverClock) observe(sent, answered time.Time, server int64) {
	rtt := max(answered.Sub(sent), 0)
	mid := sent.Sub(c.base) + rtt/2
	s := clockSample{offset: time.Duration(server) - mid, rtt: rtt, at: answered.Sub(c.base)}
	c.mu.Lock()
	c.samples[c.next] = s
	c.next = (c.next + 1) % clockSamples
	c.n = min(c.n+1, clockSamples)
	c.mu.Unlock()
}

// samples reports how many samples the filter holds.
func (c *serverClock) held() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// local returns the local time at which the server's clock reads server
// (nanoseconds since the Unix epoch), from the best sample at now, a local
// time; ok is false before the first sample.
func (c *serverClock) local(server int64, now time.Time) (t time.Time, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == 0 {
		return time.Time{}, false
	}
	at := now.Sub(c.base)
	best, bestErr := clockSample{}, time.Duration(-1)
	for _, s := range c.samples[:c.n] {
		e := s.rtt/2 + time.Duration(clockDrift*float64(max(at-s.at, 0)))
		if bestErr < 0 || e < bestErr {
			best, bestErr = s, e
		}
	}
	return c.base.Add(time.Duration(server) - best.offset), true
}
