package adaptive

import (
	"fmt"
	"time"
)

// The part of the Pacer's rule that binds its rate (see [Pacer.Binding]).
const (
	bindingStart      = "slow-start"
	bindingCurve      = "curve"
	bindingRefusals   = "refusals"
	bindingRetryAfter = "retry-after"
	bindingAdvertised = "advertised"
	bindingKnown      = "known-rate"
)

// Binding names the part of the Pacer's rule that binds its rate at now,
// and says it with its figures, for a log line when requests wait for
// their slot. part is one of a closed set, stable for metrics:
//
//   - "slow-start": the rate doubles until the backend first refuses;
//   - "curve": the cubic curve after a refusal, back towards the rate
//     that was refused;
//   - "refusals": the backend refused what was sent since the last cut,
//     and the Pacer probes with one request at a time;
//   - "retry-after": a refusal's Retry-After has not ended;
//   - "advertised": a limit the API advertises allows less than the curve;
//   - "known-rate": PacerConfig.Rate, the rate the caller knows.
//
// It changes nothing.
func (p *Pacer) Binding(now time.Time) (part, detail string) {
	n := unixNanos(now)
	if !p.started {
		return bindingStart, fmt.Sprintf("slow start from %s", perSecond(p.cfg.StartRate*p.typical()))
	}
	if n < p.blocked {
		return bindingRetryAfter, fmt.Sprintf("Retry-After: nothing sent for %v more", time.Duration(p.blocked-n).Round(time.Millisecond))
	}
	if p.dark {
		return bindingRefusals, fmt.Sprintf("refusals since the last cut: one request at a time, at most %s", perSecond(p.rate))
	}
	curve := p.curve(n)
	if i, r := p.tightest(n); i >= 0 && r < curve {
		return bindingAdvertised, fmt.Sprintf("advertised limit %d of %d: %s (%s)", i+1, len(p.adv), perSecond(r), p.adv[i].rate.describe(now))
	}
	switch {
	case p.cfg.Rate > 0 && curve >= p.cfg.Rate:
		return bindingKnown, fmt.Sprintf("the known rate, %s", perSecond(p.cfg.Rate))
	case p.ceil == 0:
		return bindingStart, fmt.Sprintf("slow start: %s, doubling every %v", perSecond(curve), time.Duration(p.doubling()*1e9).Round(time.Millisecond))
	}
	steady := ""
	if p.steady {
		steady = ", steady"
	}
	return bindingCurve, fmt.Sprintf("the curve after a refusal: %s, the rate refused %s%s", perSecond(curve), perSecond(p.ceil), steady)
}

// describe says what the limit is known to be and this worker's share of
// it, for Pacer.Binding.
func (q *AdvertisedRate) describe(now time.Time) string {
	what := "a window"
	if q.refill {
		what = "a refilling bucket"
	}
	if q.limit >= 0 {
		what += fmt.Sprintf(" of %.0f", q.limit)
	}
	if q.window > 0 {
		what += fmt.Sprintf(" per %v", time.Duration(q.window).Round(time.Millisecond))
	}
	return fmt.Sprintf("%s; share %.2f of %s for everyone", what, q.share, perSecond(q.target))
}

// perSecond formats a rate.
func perSecond(r float64) string {
	if r >= 100 {
		return fmt.Sprintf("%.0f/s", r)
	}
	return fmt.Sprintf("%.3g/s", r)
}
