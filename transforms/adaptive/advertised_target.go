package adaptive

// AdvertisedRate's target for everyone and a bucket's refill rate (see
// [AdvertisedRate]).

// learnLimits takes Limit and Window, or estimates them, and the refill
// rate of a bucket, from an answer seen at n to a request sent at s.
func (q *AdvertisedRate) learnLimits(n, s int64, rem float64, reset int64, a Quota) {
	if a.Limit >= 0 {
		q.limit, q.limitKnown = float64(a.Limit), true
	}
	if a.Window > 0 {
		q.window, q.windowKnown = int64(a.Window), true
	}
	if !a.Refill {
		return
	}
	switch {
	case q.limitKnown && q.windowKnown:
		q.rho = q.limit * 1e9 / float64(q.window)
	case q.limit > 0 && rem >= 0 && rem < q.limit && reset > n:
		r := (q.limit - rem) * 1e9 / float64(reset-s)
		if q.rho == 0 {
			q.rho = r
		} else {
			q.rho += (r - q.rho) * unitWeight
		}
	}
}

// targetOf returns the target for everyone from an answer seen at n to a
// request sent at s.
func (q *AdvertisedRate) targetOf(n, s int64, rem float64, reset int64) (float64, bool) {
	if q.refill {
		if q.rho == 0 {
			return 0, false
		}
		if rem < 0 || q.limit <= 0 {
			return q.rho, true
		}
		// ρ + (R − level·L)/(drain·L/ρ): between ρ/2 (empty) and 2.5ρ (full).
		// A surplus seen late is spent over twice the answer's delay.
		over := rem - bucketLevel*q.limit
		drain := bucketDrain * q.limit / q.rho
		if over > 0 {
			drain = max(drain, bucketLate*float64(n-s)/1e9)
		}
		return max(q.rho+over/drain, 0), true
	}
	reserve := q.cfg.Reserve * max(q.limit, 0)
	steady := 0.0
	if q.limit > 0 && q.window > 0 {
		steady = (q.limit - reserve) * 1e9 / float64(q.window)
	}
	if w := q.shortOf(0); q.alone && w > 0 && q.limit > 0 {
		// Alone on a short window, whose Reset is too coarse to spread
		// Remaining over: its Limit over its length.
		q.steady = (q.limit - reserve) * 1e9 / float64(w)
		return q.steady, true
	}
	if rem >= 0 && reset > s {
		t := max(rem-reserve, 0) * 1e9 / float64(reset-s)
		switch {
		case steady > 0:
			q.steady = steady
		case q.steady == 0:
			q.steady = t
		default:
			q.steady += (t - q.steady) * unitWeight
		}
		return t, true
	}
	if steady > 0 {
		q.steady = steady
		return steady, true
	}
	return 0, false
}
