package adaptive

import "time"

// The Pacer's rules for the quota an API advertises (Answer.Quota): one
// AdvertisedRate per limit, and the rate never above the lowest of theirs.

// observeAdvertised gives each limit of qs, advertised on the answer at n
// to a request sent at sent, to its AdvertisedRate (by position: an API
// sends its limits in the same order).
func (p *Pacer) observeAdvertised(n, sent int64, qs []Quota) {
	for i, q := range qs {
		if i == len(p.adv) {
			a, err := NewAdvertisedRate(AdvertisedRateConfig{})
			if err != nil {
				panic(err) // the zero config is valid
			}
			p.adv = append(p.adv, a)
		}
		p.adv[i].Observe(time.Unix(0, n), time.Unix(0, sent), q)
	}
}

// sentAdvertised tells each AdvertisedRate of a request let through at n.
// The limits count requests: each counts one, whatever its cost.
func (p *Pacer) sentAdvertised(n int64) {
	for _, a := range p.adv {
		a.Sent(time.Unix(0, n), 1)
	}
}

// advertisedCap returns rate, or less if a limit the API advertised allows
// less: its AdvertisedRate's requests per second, in cost units (times
// the typical cost of a request). While a limit binds, the curve is held
// where it is (its time does not advance from the last send to n), as
// over idle time: requests wait for the limit's slots, not the curve's,
// and a curve that climbed on would burst when the limit lets go.
func (p *Pacer) advertisedCap(n int64, rate float64) float64 {
	capped := rate
	for _, a := range p.adv {
		if r := a.Rate(time.Unix(0, n)); r > 0 {
			capped = min(capped, r*p.typical())
		}
	}
	if capped < rate && p.sent > 0 && n > p.sent {
		p.epoch = min(p.epoch+(n-p.sent), n)
	}
	return capped
}
