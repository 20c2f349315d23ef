package adaptive

import "math"

// How a worker sees that a limit advertised as a fixed window is not
// counted in one (see [AdvertisedRate]).
//
// A window's Remaining is the server's count when a request arrived,
// after it took its part. A window that showed less left than a request
// takes refuses it until the window ends: when the worker's request is
// accepted although the answer to its previous accepted request showed
// less left than this one took, a new window began between the two
// sends. Windows begin a window apart, so two such pairs that need two
// beginnings less than a window apart (by more than unwindowedSlack of
// it, for the clocks of the sends and of the server) cannot both be one:
// Remaining does not count a window (a strict limiter telling its burst,
// a server telling less than it allows). The worker stops holding back by
// Remaining and takes the advertised rate, Limit less the reserve over
// the window, as a ceiling for itself alone: Remaining shows no share of
// it. A pair that shows company (Remaining fell by more than the worker's
// own requests between) takes the proof back, the window rules return,
// and the test starts again from that send.

// unwindowedSlack is the share of the window by which a beginning may be
// off the sends around it.
const unwindowedSlack = 20

// disprove takes the answer to the i-th send remembered (-1: none), with
// outcome o, into the test of a fixed window of window nanoseconds
// advertised (0: the one last advertised, if any; no test without one),
// and reports whether it showed now that Remaining does not count one.
func (q *AdvertisedRate) disprove(i int, window int64, o Outcome) bool {
	if i < 0 {
		return false
	}
	n := min(q.marks, sendMarks)
	j, k := q.answeredBefore(i), i+1
	for k < n && q.markAt(k).rem < 0 {
		k++
	}
	m := q.markAt(i)
	if q.readPair(j, i, m.limit, 0) == pairCompany || k < n && q.readPair(i, k, m.limit, 0) == pairCompany {
		q.unwindowed, q.since = 0, max(q.since, m.at)
		return false
	}
	if window <= 0 && q.windowKnown {
		window = q.window
	}
	if q.unwindowed > 0 || window <= 0 || o != Accepted {
		return false
	}
	slack := window / unwindowedSlack
	next := int64(math.MinInt64) // the earliest the next window can begin
	var prev *sendMark
	for j := range n {
		b := q.markAt(j)
		if b.rem < 0 || !b.ok || b.at <= q.since {
			continue
		}
		take := b.cost
		if j > 0 {
			take -= q.markAt(j - 1).cost
		}
		if prev != nil && b.limit == prev.limit && prev.rem < take {
			begin := max(prev.at-slack, next) // a window began in (prev.at, b.at]
			if begin > b.at+slack {
				q.unwindowed = window
				return true
			}
			next = begin + window
		}
		prev = b
	}
	return false
}

// unwindowedRate returns the ceiling of a limit whose Remaining was shown
// not to count a window: Limit less the reserve over the window.
func (q *AdvertisedRate) unwindowedRate() float64 {
	return max(q.limit*(1-q.cfg.Reserve), 0) * 1e9 / float64(q.unwindowed)
}
