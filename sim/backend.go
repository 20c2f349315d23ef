package sim

import (
	"math"
	"time"
)

// backend is the simulated service: a token bucket refilled at the
// scenario's capacity and holding up to Config.BackendBurst of it, shared by
// all groups. During an outage it rejects everything and holds no tokens.
// Times are nanoseconds since the start of the run and never go back.
type backend struct {
	sc     *Scenario
	base   float64 // requests per second of Capacity 1
	burst  float64 // bucket depth, seconds of capacity
	tokens float64
	last   int64
	phase  int
}

func newBackend(sc *Scenario, base float64, burst time.Duration) *backend {
	b := &backend{sc: sc, base: base, burst: burst.Seconds()}
	b.tokens = b.depth()
	return b
}

// rate is the refill rate of the current phase, requests per second.
func (b *backend) rate() float64 { return b.sc.Phases[b.phase].capacity() * b.base }

// depth is the bucket capacity in the current phase, at least one token
// unless the capacity is zero.
func (b *backend) depth() float64 {
	r := b.rate()
	if r == 0 {
		return 0
	}
	return max(1, r*b.burst)
}

// advance refills the bucket up to t, phase by phase.
func (b *backend) advance(t int64) {
	for b.last < t {
		end := int64(b.sc.phaseEnd(b.phase))
		seg := min(t, end)
		b.tokens = min(b.depth(), b.tokens+b.rate()*float64(seg-b.last)/1e9)
		b.last = seg
		if seg == end {
			b.phase++
			b.tokens = min(b.tokens, b.depth())
		}
	}
}

// available reports whether a request at t would be accepted.
func (b *backend) available(t int64) bool {
	b.advance(t)
	return b.tokens >= 1
}

// take serves a request at t. A rejected request gets a Retry-After like the
// test server's: the wait until a token is available, rounded up to whole
// seconds, at least one; one second during an outage.
func (b *backend) take(t int64) (ok bool, retryAfter time.Duration) {
	b.advance(t)
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	r := b.rate()
	if r == 0 {
		return false, time.Second
	}
	wait := (1 - b.tokens) / r
	return false, time.Duration(max(1, math.Ceil(wait))) * time.Second
}
