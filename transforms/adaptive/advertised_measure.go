package adaptive

import "math"

// AdvertisedRate's measurement of consumption (see [AdvertisedRate]).

// measure corrects the share by the consumption since the measurement's
// start, once it spans Span or shows a clear overload.
func (q *AdvertisedRate) measure(s int64, rem float64) {
	dt := float64(s-q.refAt) / 1e9
	fall := q.refRem - rem
	if q.refill {
		fall += q.rho*dt - q.spilt
	}
	over := fall >= quotaOver*q.area && fall >= quotaMinFall*max(q.limit, 0)
	if s-q.refAt < int64(q.cfg.Span) && !over {
		return
	}
	step := quotaUp
	if fall > 0 {
		step = min(max(math.Pow(q.area/fall, min(dt/quotaTau, 1)), quotaDown), quotaUp)
	}
	own := q.cost - q.refCost
	switch {
	case step > 1 && own < quotaIdle*q.share*q.area:
		step = 1 // did not use its rate: no sign it needs more
	}
	q.share = min(max(q.share*step, minQuotaShare), 1)
	q.restart(s, rem)
}

// restart starts a measurement at s, with Remaining rem (-1: at the next
// answer that has one).
func (q *AdvertisedRate) restart(s int64, rem float64) {
	q.refAt, q.refRem, q.refCost, q.area, q.spilt = s, rem, q.cost, 0, 0
}

// allowed returns the target in force from the last observation (or the
// measurement's start) to s, integrated: a window's steady target after
// its Reset.
func (q *AdvertisedRate) allowed(s int64) float64 {
	from := max(q.last, q.refAt)
	if s <= from {
		return 0
	}
	if !q.refill && q.reset != 0 && s > q.reset {
		before := float64(max(q.reset-from, 0))
		after := float64(s - max(from, q.reset))
		return (q.target*before + q.steady*after) / 1e9
	}
	return q.target * float64(s-from) / 1e9
}

// epoch follows a fixed window's resets: it starts the measurement again
// in a new window.
func (q *AdvertisedRate) epoch(s int64, rem float64, reset int64) {
	slack := quotaSlack
	if q.window > 0 {
		slack = min(slack, q.window/4)
	}
	if reset != 0 && q.reset != 0 && reset > q.reset+slack {
		if !q.windowKnown {
			q.window = reset - q.reset
		}
		q.restart(s, rem)
	}
	if reset != 0 {
		q.reset = reset
	}
}
