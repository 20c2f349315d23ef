package testserver

import (
	"math"
	"math/bits"
	"time"
)

// maxTolerance caps the GCRA tolerance, so that a huge burst cannot
// overflow time arithmetic. A century of tolerance is an unlimited burst
// for any test.
const maxTolerance = 100 * 365 * 24 * time.Hour

// gcra is the generic cell rate algorithm in its virtual scheduling form,
// as API gateways use it. With emission interval T = period/quota and
// tolerance tau = (burst-1)×T, a request at t is accepted iff
// t ≥ TAT - tau, where TAT is the theoretical arrival time; on accept
// TAT = max(TAT, t) + T. Burst 1 means requests must be T apart; burst B
// lets B come back to back after an idle period of (B-1)×T.
//
// A request of cost c counts as c requests arriving at once, all or
// nothing: it is accepted iff t ≥ max(TAT, t) + (c-1)×T - tau, that is iff
// its last unit would be, and then TAT = max(TAT, t) + c×T. The max
// matters: with TAT in the past, TAT + (c-1)×T - tau would let idle time
// pay for a large cost, which GCRA never banks. So a request of cost c
// fits an idle limiter iff (c-1)×T ≤ tau, i.e. c ≤ burst (maxCost), and
// one of a larger cost never fits. Cost 1 is the rule above; cost 0 is
// accepted and changes nothing.
//
// T and tau are kept exactly, as whole nanoseconds plus a remainder in
// units of 1/quota ns, so that a rate such as 3 per second neither drifts
// nor rounds. It is not safe for concurrent use, and quota must be > 0.
type gcra struct {
	quota   int64 // the remainders' denominator
	burst   int64 // ≥ 1
	maxCost int64 // the largest c with (c-1)×T ≤ tau: burst, less if tau is capped

	t, tRem     int64 // T = t + tRem/quota ns
	tau, tauRem int64 // tau = tau + tauRem/quota ns
	tat         time.Time
	tatRem      int64 // TAT = tat + tatRem/quota ns
}

// newGCRA returns a GCRA limiter that accepts burst requests at now.
// quota must be > 0 and period > 0; burst < 1 means 1.
func newGCRA(now time.Time, quota int, period time.Duration, burst int) *gcra {
	g := &gcra{burst: int64(max(burst, 1)), tat: now}
	g.setRate(quota, period)
	return g
}

// setRate sets T, tau and maxCost for quota per period, leaving TAT alone.
func (g *gcra) setRate(quota int, period time.Duration) {
	q := int64(quota)
	g.quota = q
	g.t, g.tRem = int64(period)/q, int64(period)%q
	// tau = (burst-1)×period/quota, in 128 bits, capped at maxTolerance.
	hi, lo := bits.Mul64(uint64(g.burst-1), uint64(period))
	g.tau, g.tauRem = int64(maxTolerance), 0
	if hi < uint64(q) {
		n, r := bits.Div64(hi, lo, uint64(q))
		if n < uint64(maxTolerance) {
			g.tau, g.tauRem = int64(n), int64(r)
		}
	}
	// maxCost - 1 = floor(tau/T) = floor((tau×quota + tauRem) / period),
	// which is burst-1 unless tau was capped; below 2^63, so the division
	// cannot overflow.
	hi, lo = bits.Mul64(uint64(g.tau), uint64(q))
	lo, carry := bits.Add64(lo, uint64(g.tauRem), 0)
	n, _ := bits.Div64(hi+carry, lo, uint64(period))
	g.maxCost = int64(n) + 1
}

// times returns n×T as whole nanoseconds plus a remainder in 1/quota ns.
// n×T must fit in int64 nanoseconds.
func (g *gcra) times(n int64) (ns, rem int64) {
	// n×tRem in 128 bits: tRem < quota, so the quotient fits in 64.
	hi, lo := bits.Mul64(uint64(n), uint64(g.tRem))
	d, r := bits.Div64(hi, lo, uint64(g.quota))
	return n*g.t + int64(d), int64(r)
}

// take accepts a request of cost c at now, or says how long until a
// request of that cost would be accepted. c must be in [1, maxCost].
func (g *gcra) take(now time.Time, c int64) (ok bool, wait time.Duration) {
	// allow = TAT + (c-1)×T - tau; accept iff now ≥ allow. With TAT before
	// now, allow ≤ now as c ≤ maxCost, so TAT can stand for max(TAT, now).
	d, dRem := g.times(c - 1)
	d, dRem = d-g.tau, dRem-g.tauRem
	if dRem < 0 {
		d, dRem = d-1, dRem+g.quota
	}
	allow, allowRem := g.tat.Add(time.Duration(d)), g.tatRem+dRem
	if allowRem >= g.quota {
		allow, allowRem = allow.Add(1), allowRem-g.quota
	}
	wait = allow.Sub(now) // rounded up to whole ns
	if allowRem > 0 {
		wait++
	}
	if wait > 0 {
		return false, wait
	}
	if g.tat.Before(now) {
		g.tat, g.tatRem = now, 0
	}
	n, nRem := g.times(c)
	g.tat, g.tatRem = g.tat.Add(time.Duration(n)), g.tatRem+nRem
	if g.tatRem >= g.quota {
		g.tat, g.tatRem = g.tat.Add(1), g.tatRem-g.quota
	}
	return true, 0
}

// set changes the rate at now. What was used keeps counting: TAT - now is
// the time the accepted requests still occupy, so many emission intervals,
// and they go on occupying as many intervals of the new rate. An idle
// limiter stays idle.
func (g *gcra) set(now time.Time, quota int, period time.Duration) {
	ahead := float64(g.tat.Sub(now)) + float64(g.tatRem)/float64(g.quota)
	oldT := float64(g.t) + float64(g.tRem)/float64(g.quota)
	g.setRate(quota, period)
	newT := float64(g.t) + float64(g.tRem)/float64(g.quota)
	g.tat, g.tatRem = now, 0
	if ahead > 0 {
		ahead = math.Min(math.Round(ahead/oldT*newT), float64(2*maxTolerance))
		g.tat = now.Add(time.Duration(ahead))
	}
}
