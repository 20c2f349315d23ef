package adaptive

import "time"

// The Pacer's rules for the quota an API advertises (Answer.Quota): one
// AdvertisedRate per limit, and the rate never above the lowest of theirs.
// A limit's AdvertisedRate is made when an answer first tells it, and is
// told of the requests let through before the first answer as well: they
// were sent against the same quota, and their answers read against them.

// advertisedLimit is one limit an API advertises, as the Pacer follows it.
type advertisedLimit struct {
	rate *AdvertisedRate
	use  float64 // what a request takes of the limit on average; 0 until an answer says
	seen int64   // answers that said (Quota.Used not negative), up to useSamples
}

// earlySends are the send times of the requests let through before the
// first answer, up to sendMarks: an AdvertisedRate is made for a limit
// when an answer first tells it, and learns of the requests already under
// way from them (with a slow API, slow start's requests are most of what
// proves a worker alone on a short window). The first answer ends it.
type earlySends struct {
	at   [sendMarks]int64
	n    int
	done bool
}

// useSamples is how many answers' Used the average of a limit's use per
// request weighs equally before it becomes an exponential average of
// weight 1/useSamples: token counts vary by a factor of several from one
// request to the next, so a short average would move the pace with each.
const useSamples = 32

// perRequest returns what a request takes of the limit, its average use,
// and whether an answer has said.
func (l *advertisedLimit) perRequest() (float64, bool) {
	return l.use, l.seen > 0
}

// observeAdvertised gives each limit of qs, advertised on the answer at n
// to a request sent at sent, to its AdvertisedRate (by position: an API
// sends its limits in the same order), and learns from each what a
// request takes of it.
func (p *Pacer) observeAdvertised(n, sent int64, qs []Quota, o Outcome) {
	for i, q := range qs {
		if i == len(p.adv) {
			a, err := NewAdvertisedRate(AdvertisedRateConfig{})
			if err != nil {
				panic(err) // the zero config is valid
			}
			p.adv = append(p.adv, advertisedLimit{rate: a})
		}
		l := &p.adv[i]
		if used := q.Used; used >= 0 {
			if used == 0 {
				used = 1 // a limit on requests
			}
			l.seen = min(l.seen+1, useSamples)
			l.use += (min(used, maxUnit) - l.use) / float64(l.seen)
		}
		if !p.early.done {
			// A limit the first answer tells: the requests under way were
			// sent against it too.
			use, _ := l.perRequest()
			for _, t := range p.early.at[:p.early.n] {
				l.rate.Sent(time.Unix(0, t), use)
			}
		}
		l.rate.observe(time.Unix(0, n), time.Unix(0, sent), q, o)
	}
	if !p.early.done {
		p.early = earlySends{done: true}
	}
}

// sentAdvertised tells each AdvertisedRate of a request let through at n,
// at what a request takes of its limit (the estimate of a request's
// tokens before the answer says).
func (p *Pacer) sentAdvertised(n int64) {
	if e := &p.early; !e.done && e.n < len(e.at) {
		e.at[e.n] = n
		e.n++
	}
	for i := range p.adv {
		use, _ := p.adv[i].perRequest()
		p.adv[i].rate.Sent(time.Unix(0, n), use)
	}
}

// advertisedCap returns rate, or less if a limit the API advertised allows
// less: its AdvertisedRate's rate over what a request takes of it, in cost
// units (times the typical cost of a request). While a limit binds, the
// curve is held where it is (its time does not advance from the last send
// to n), as over idle time: requests wait for the limit's slots, not the
// curve's, and a curve that climbed on would burst when the limit lets go.
func (p *Pacer) advertisedCap(n int64, rate float64) float64 {
	capped := rate
	if i, r := p.tightest(n); i >= 0 {
		capped = min(capped, r)
	}
	if capped < rate && p.sent > 0 && n > p.sent {
		p.epoch = min(p.epoch+(n-p.sent), n)
	}
	return capped
}

// tightest returns the index of the advertised limit that allows the least
// at n, sized (an answer said what a request takes of it), and that rate
// in cost units per second; -1 if none.
func (p *Pacer) tightest(n int64) (int, float64) {
	best, rate := -1, 0.0
	for i := range p.adv {
		use, sized := p.adv[i].perRequest()
		if r := p.adv[i].rate.Rate(time.Unix(0, n)); r > 0 && sized {
			if r = r / use * p.typical(); best < 0 || r < rate {
				best, rate = i, r
			}
		}
	}
	return best, rate
}
