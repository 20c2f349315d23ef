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
// T and tau are kept exactly, as whole nanoseconds plus a remainder in
// units of 1/quota ns, so that a rate such as 3 per second neither drifts
// nor rounds. It is not safe for concurrent use, and quota must be > 0.
type gcra struct {
	quota int64 // the remainders' denominator
	burst int64 // ≥ 1

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

// setRate sets T and tau for quota per period, leaving TAT alone.
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
}

// take accepts a request at now or says how long until one would be.
func (g *gcra) take(now time.Time) (ok bool, wait time.Duration) {
	// Accept iff now + tau ≥ TAT, comparing nanoseconds, then remainders.
	limit := now.Add(time.Duration(g.tau))
	if c := limit.Compare(g.tat); c < 0 || c == 0 && g.tauRem < g.tatRem {
		wait = g.tat.Sub(limit) // TAT - tau - now, rounded up to whole ns
		if g.tatRem > g.tauRem {
			wait++
		}
		return false, wait
	}
	if g.tat.Before(now) {
		g.tat, g.tatRem = now, 0
	}
	g.tat = g.tat.Add(time.Duration(g.t))
	g.tatRem += g.tRem
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
