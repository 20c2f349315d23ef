package sim

import (
	"math/rand/v2"
	"time"
)

// clock gives the arrival times of a group's elements.
type clock interface {
	// next returns the first arrival after the one at t (Never if none).
	next(t time.Duration) time.Duration
}

// listClock replays arrival times.
type listClock struct {
	times []time.Duration
	i     int
}

func (c *listClock) next(time.Duration) time.Duration {
	if c.i == len(c.times) {
		return Never
	}
	c.i++
	return c.times[c.i-1]
}

// poissonClock draws the arrival times of a Poisson process whose rate, in
// requests per second, is a step function of the scenario's phases.
type poissonClock struct {
	rnd  *rand.Rand
	sc   *Scenario
	rate func(Phase) float64
}

// next returns the first arrival after t, or Never if none comes.
func (c *poissonClock) next(t time.Duration) time.Duration {
	e := c.rnd.ExpFloat64() // in units of expected arrivals
	for {
		i := c.sc.phaseAt(t)
		end := c.sc.phaseEnd(i)
		rate := c.rate(c.sc.Phases[i])
		if rate > 0 {
			if need := e / rate * 1e9; end == Never || need < float64(end-t) {
				return t + max(1, time.Duration(need))
			}
		}
		if end == Never {
			return Never
		}
		e -= rate * (end - t).Seconds()
		t = end
	}
}

// stream returns a random source for run seed, actor a and purpose k, so
// that streams are independent of each other and of the algorithm.
func stream(seed uint64, a int, k uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, uint64(a)<<8|k))
}

// Purposes of the random streams.
const (
	streamArrivals   = 1
	streamJitter     = 2
	streamPolicy     = 3
	streamCompetitor = 4
	streamOrder      = 5 // of events at the same time
	streamLatency    = 6 // of each call's latency (Config.LatencyP99)
)
