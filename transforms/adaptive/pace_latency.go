package adaptive

import (
	"math"
	"time"
)

// The Pacer's rules for a slow API: what it measures of the latency and
// what follows from it (see [Pacer]).

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
		p.lat = max(p.lat+int64(float64(d-p.lat)*unitWeight), 1)
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
// up to refusedMargins times that in proportion to the latency beyond
// steadyLatency (an overshoot costs more the longer the answers take to
// say so, and a refused rate is further above the limit the longer the
// curve climbed before the refusal came back), or up to acceptedMargins
// times that below a ceiling that is a rate the backend accepted.
func (p *Pacer) margin() float64 {
	k := float64(refusedMargins)
	if p.okCeil {
		k = acceptedMargins
	}
	return steadyMargin * min(k, max(1, float64(p.lat)/float64(steadyLatency)))
}

// steadyLatency is the latency up to which the curve climbs above a steady
// ceiling at half its speed; beyond it, slower in proportion.
const steadyLatency = 100 * time.Millisecond

// refusedMargins and acceptedMargins bound the margin of a slow API, in
// steadyMargins, below a ceiling that is a refused rate and one the backend
// accepted. Below an accepted rate the margin only has to cover the send
// times' jitter: loopback arrivals jitter by a millisecond or two, a few
// hundredths of a strict limiter's spacing at tens of requests a second,
// and two hundredths keep the refusals at the flat within jitterShare,
// where they pass as jitter.
const (
	refusedMargins  = 3
	acceptedMargins = 2
)

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

// satInt converts a non-negative whole float64 to an int, saturating at
// the largest int.
func satInt(f float64) int {
	if !(f < math.MaxInt) {
		return math.MaxInt
	}
	return int(f)
}

// slowStartCeiling returns the rate a slow API's first refusal in slow
// start, of a request sent at sent at rate r, makes the ceiling: the rate
// when the latest request accepted was sent, if that was before, but not
// more than a tenth (steadyBand) below r. The rate climbs during slow
// start, a little between one send and the next; a strict limiter refuses
// the first request spaced closer than its rate allows, and the last one it
// accepted is the better estimate of that rate. A flat a margin below a
// refused rate that overshot by one step of the climb would still be above
// the limit. It reports whether the ceiling is that accepted rate. A
// refusal that took no longer than steadyLatency (took) while accepted
// answers take longer came from a gateway that refuses before the backend
// works: the latest accepted request it knows of was sent about a latency
// before the refused one, at a rate slow start has doubled since, and the
// refused rate is the better estimate.
func (p *Pacer) slowStartCeiling(r float64, sent, took int64) (float64, bool) {
	if p.ceil != 0 || p.lat <= int64(steadyLatency) || took <= int64(steadyLatency) || p.okSent == 0 || p.okSent >= sent {
		return r, false
	}
	ok, low := p.curve(p.okSent), r*(1-steadyBand)
	switch {
	case ok >= r:
		return r, false
	case ok < low:
		return low, false
	}
	return ok, true
}

// A slow API's refusals at a steady ceiling: jitterShare and jitterAnswers
// (see [Pacer.jitter]), and jitterWindow, the answers after which the
// counts behind the share are halved, so that it follows recent answers.
const (
	jitterShare   = 0.01
	jitterAnswers = 100
	jitterWindow  = 2 * jitterAnswers
)

// countAnswer counts an answer to a request sent since the last decrease,
// refused or not.
func (p *Pacer) countAnswer(refused bool) {
	p.answers++
	if refused {
		p.refused++
	}
	if p.answers >= jitterWindow {
		p.answers /= 2
		p.refused /= 2
	}
}

// jitter reports whether a refusal of a request sent at rate r, with
// Retry-After ra, is the send times' jitter against a strict limiter rather
// than a limit: a slow API, a steady ceiling, r at most a tenth
// (steadyBand) below it and not above it, a request sent since the last
// decrease accepted, no Retry-After beyond retryAfterSlack (a used-up
// window asks for longer), and the refusals (this one counted) within
// jitterShare of the recent answers to requests sent since the last
// decrease, or of jitterAnswers if fewer. A strict
// limiter (GCRA with no burst) refuses a request that arrives a
// millisecond early after one that arrived a millisecond late, however far
// below its rate the sends are spaced on average; cutting on each such
// refusal, and taking its rate as the new ceiling, would ratchet the rate
// down a margin at a time. A rate above the limit is refused far more
// often (a strict limiter refuses every second request, a token bucket the
// excess), and the next refusal cuts.
func (p *Pacer) jitter(r float64, ra time.Duration) bool {
	return p.lat > int64(steadyLatency) && p.steady && p.okCut && r <= p.ceil && r >= p.ceil*(1-steadyBand) &&
		ra <= retryAfterSlack &&
		float64(p.refused) <= jitterShare*float64(max(p.answers, jitterAnswers))
}
