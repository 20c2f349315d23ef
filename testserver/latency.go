package testserver

import (
	"math"
	"math/rand/v2"
	"time"
)

// z99 is the standard normal distribution's 99th percentile.
const z99 = 2.3263478740408408

// lognormalSigma returns the σ of a lognormal latency whose median is
// median and whose 99th percentile is p99: ln(p99/median) / z99; 0 (a
// constant latency) when p99 is not above the median.
func lognormalSigma(median, p99 time.Duration) float64 {
	if median <= 0 || p99 <= median {
		return 0
	}
	return math.Log(float64(p99)/float64(median)) / z99
}

// latencyDraw returns one request's latency: median × e^(σZ), Z standard
// normal from r, which with σ = 0 is median itself. Heavy-tailed service
// times of LLM and translation APIs are modelled this way; the result is
// capped at an hour so that a far tail cannot overflow.
func latencyDraw(r *rand.Rand, median time.Duration, sigma float64) time.Duration {
	if sigma == 0 || median <= 0 {
		return median
	}
	d := float64(median) * math.Exp(sigma*r.NormFloat64())
	return time.Duration(min(d, float64(time.Hour)))
}

// serviceQueue is the queue of a server that slows down instead of
// refusing (Mode Queue): requests are served one cost unit per interval,
// in arrival order, as nginx's limit_req with a burst and no nodelay
// serves them, and as an inference server's queue does. The zero value
// with interval set serves at once until its first request.
type serviceQueue struct {
	interval time.Duration // Period ÷ Quota
	next     time.Time     // when the next request's turn begins
}

// admit queues a request of cost units that arrives at now and returns
// how long it waits for its turn.
func (q *serviceQueue) admit(now time.Time, cost int64) time.Duration {
	turn := now
	if q.next.After(now) {
		turn = q.next
	}
	q.next = turn.Add(time.Duration(cost) * q.interval)
	return turn.Sub(now)
}
