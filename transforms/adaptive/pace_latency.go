package adaptive

import "time"

// The Pacer's rules for a slow API: what it measures of the latency and
// what follows from it (see [Pacer]).

// latencyWeight is the weight of a new answer in the latency average.
const latencyWeight = 1.0 / 8

// learnLatency moves the latency average towards an answer's latency d.
func (p *Pacer) learnLatency(d int64) {
	if p.lat == 0 {
		p.lat = max(d, 1)
		return
	}
	p.lat += int64(float64(d-p.lat) * latencyWeight)
	p.lat = max(p.lat, 1)
}

// margin is how far below a steady ceiling the curve flattens: steadyMargin,
// up to three times that in proportion to the latency beyond steadyLatency
// (an overshoot costs more the longer the answers take to say so).
func (p *Pacer) margin() float64 {
	return steadyMargin * min(3, max(1, float64(p.lat)/float64(steadyLatency)))
}

// steadyLatency is the latency up to which the curve climbs above a steady
// ceiling at half its speed; beyond it, slower in proportion.
const steadyLatency = 100 * time.Millisecond

// recoverLatencies is how many latencies the cubic curve takes at least to
// climb back to the ceiling.
const recoverLatencies = 4

// recover is how long the cubic curve takes to climb back to the ceiling
// (for one group): Recover, or recoverLatencies latencies if longer.
func (p *Pacer) recover() time.Duration {
	return max(p.cfg.Recover, time.Duration(recoverLatencies*p.lat))
}

// underWay is how many requests a dark Pacer counts as probes under way:
// those let through since the decrease for a slow API (latency over
// steadyLatency), whose older requests would hold the probe for a whole
// latency; every request not answered yet for a fast one.
func (p *Pacer) underWay() int64 {
	if p.lat > int64(steadyLatency) {
		return p.probes
	}
	return p.out
}
