package adaptive

import (
	"math"
	"time"
)

// The Pacer's rules for a slow API: what it measures of the latency and
// what follows from it (see [Pacer]).

// latencyWeight is the weight of a new answer in the latency average.
const latencyWeight = 1.0 / 8

// learnLatency moves the latency average towards an answer's latency d,
// received at n. In slow start the curve's time moves with it, so that
// the rate at n stays where it was: the curve doubles once per second, or
// per latency if longer, and the first answer of a slow API would
// otherwise halve the rate it had reached before the latency was known.
func (p *Pacer) learnLatency(n, d int64) {
	r, was := p.curve(n), p.doubling()
	if p.lat == 0 {
		p.lat = max(d, 1)
	} else {
		p.lat = max(p.lat+int64(float64(d-p.lat)*latencyWeight), 1)
	}
	start := min(p.cfg.StartRate*p.typical(), maxRate)
	if p.ceil != 0 || p.dark || p.doubling() == was || r <= start {
		return
	}
	p.epoch = n - int64(math.Log2(r/start)*p.doubling()*1e9)
}

// doubling is how long slow start takes to double the rate, in seconds: a
// second, or the latency if longer.
func (p *Pacer) doubling() float64 { return max(1, float64(p.lat)/1e9) }

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

// forgive is how late a request of cost c may come after its slot and
// still space the next one from the slot rather than from its send: half
// the margin of a steady ceiling's flat, none otherwise. A pacer woken a
// little after each slot (a timer's resolution, a busy machine) would
// otherwise send below its rate by that much on every request; forgiving
// half the margin keeps the sends at least the other half of it above the
// spacing of the ceiling.
func (p *Pacer) forgive(c float64) int64 {
	if !p.steady || c == 0 {
		return 0
	}
	return int64(1e9 * c / p.rate * p.margin() / 2)
}

// steadyAt reports whether a new congestion at rate r makes the ceiling
// steady: r within steadyBand of the ceiling before it. For a slow API also
// its first refusal (the best estimate there is), and a refusal below its
// steady ceiling while the backend still accepts (a request sent since the
// last decrease was accepted): the ceiling was too high (a burst the limiter
// absorbed let the rate climb past its limit before the refusals came
// back), and r is a better estimate, not a limit that moved. Left
// unsteady, the curve would climb above r at full speed and a limiter
// whose burst refilled would accept that for a while, setting the ceiling
// too high again. A backend that accepts nothing sent since the cut (an
// outage, a used-up window) gets the dark spell.
func (p *Pacer) steadyAt(r float64) bool {
	slow := p.lat > int64(steadyLatency)
	return p.ceil > 0 && math.Abs(r-p.ceil) <= p.ceil*steadyBand ||
		p.ceil == 0 && slow ||
		slow && p.steady && r < p.ceil && p.okCut
}

// refusedAt returns the ceiling after a refusal at n of a request sent at
// rate r: r, except for a slow API's refusal below its steady ceiling (on
// the flat or climbing to it) more than two recoveries after the last cut.
// There the limiter is about at the ceiling and the send times' jitter
// crossed it, and the ceiling stays. Sooner, the limit may have fallen (or
// the first ceiling, taken at a refusal after a burst the limiter
// absorbed, was too high): the ceiling is r, and the flat a whole margin
// below it.
func (p *Pacer) refusedAt(n int64, r float64) float64 {
	if !p.steady || p.ceil == 0 || r >= p.ceil || p.lat <= int64(steadyLatency) {
		return r
	}
	if n-p.cutAt > 2*int64(p.recover()) {
		return p.ceil
	}
	return r
}

// satInt converts a non-negative whole float64 to an int, saturating at
// the largest int.
func satInt(f float64) int {
	if !(f < math.MaxInt) {
		return math.MaxInt
	}
	return int(f)
}
