package sim

import (
	"math"
	"time"
)

// tokenBucket is the Backend of TokenBucket.
type tokenBucket struct {
	cap    Capacity
	burst  float64       // depth as seconds of capacity; 0: one token
	step   time.Duration // refill step; 0: continuous
	ra     bool
	tokens float64
	last   time.Duration // tokens are as of last
}

// depth is the bucket's depth at rate: burst of it, at least one token,
// none while the rate is 0.
func (b *tokenBucket) depth(rate float64) float64 {
	if rate == 0 {
		return 0
	}
	return max(1, rate*b.burst)
}

// refill returns tokens, as of from, refilled up to to, phase by phase.
func (b *tokenBucket) refill(tokens float64, from, to time.Duration) float64 {
	for from < to {
		rate, until := b.cap.At(from)
		seg := min(to, until)
		if b.step == 0 {
			tokens = min(b.depth(rate), tokens+rate*(seg-from).Seconds())
		} else if n := seg/b.step - from/b.step; n > 0 {
			// One refill at every multiple of step in (from, seg].
			tokens = min(b.depth(rate), tokens+float64(n)*rate*b.step.Seconds())
		}
		from = seg
		if seg == until {
			next, _ := b.cap.At(seg)
			tokens = min(tokens, b.depth(next))
		}
	}
	return tokens
}

func (b *tokenBucket) advance(t time.Duration) {
	if t > b.last {
		b.tokens = b.refill(b.tokens, b.last, t)
		b.last = t
	}
}

// Take implements Backend.
func (b *tokenBucket) Take(at time.Duration) (bool, time.Duration) {
	b.advance(at)
	if b.tokens >= 1-tolerance {
		b.tokens = max(0, b.tokens-1)
		return true, 0
	}
	if !b.ra {
		return false, 0
	}
	rate, _ := b.cap.At(at)
	return false, retryAfter(at, b.NextAvailable(at), rate)
}

// NextAvailable implements Backend.
func (b *tokenBucket) NextAvailable(at time.Duration) time.Duration {
	b.advance(at)
	tokens, t := b.tokens, at
	for {
		rate, until := b.cap.At(t)
		if rate > 0 {
			if tokens >= 1-tolerance {
				return t
			}
			var at time.Duration
			if b.step == 0 {
				at = t + time.Duration(math.Ceil((1-tokens)/rate*1e9))
			} else {
				steps := max(1, math.Ceil((1-tolerance-tokens)/(rate*b.step.Seconds())))
				at = (t/b.step + time.Duration(steps)) * b.step
			}
			if until == Never || at < until {
				return at
			}
		} else if until == Never {
			return Never
		}
		tokens = b.refill(tokens, t, until)
		t = until
	}
}
