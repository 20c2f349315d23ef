package adaptive

import "time"

// How a worker proves it is alone on a short window's quota (see
// [AdvertisedRate]). Remaining is the server's count when a request
// arrived (about when it was sent), after it took its part. Between two
// of this worker's requests, sent at s0 < s1, a window's Remaining falls
// by what everyone's requests that arrived in (s0, s1] took: by exactly
// this worker's sends over that time if no one else sent and no window
// began, and never by more. A new window brings it back to the Limit less
// what the worker sent since the window began, and windows begin a window
// apart. So over the worker's answered sends in the order it sent them
// (the answers come back in any order), each pair of neighbours reads as
// one of:
//   - company: a fall larger than the worker's own sends between them:
//     someone else took part of the quota (a refill cannot do that);
//   - alone: a fall by exactly its own sends, less than a window apart,
//     the quota not used up (a quota used up falls by no more than was
//     left, and refuses what the others would have taken);
//   - a new window: Remaining back to the Limit less its own sends;
//   - anything else (a bucket's refill, a refusal): it proves nothing.
//
// The chain of alone pairs and new windows ending with the latest answered
// send proves the worker alone if its alone pairs span aloneProof of its
// requests. One pair showing company ends the proof: the share goes back
// to Start.

// sendMarks is how many of its latest sends a worker remembers: many
// seconds at a quota of dozens a second, more than the answers in flight
// but the slowest.
const sendMarks = 256

// aloneProof is how many of the worker's own requests the alone pairs of
// the chain must span.
const aloneProof = 8

// shortWindow is the longest window whose target, for a worker alone on
// it, is its Limit over its length rather than Remaining over the time to
// its Reset: a Reset in whole seconds is up to a second off, a whole
// window.
const shortWindow = 2 * time.Second

// horizonOf takes the time from the answer seen at n, to a request sent
// at s, to its Reset into the longest seen.
func (q *AdvertisedRate) horizonOf(n, s int64, reset time.Time) {
	if reset.IsZero() {
		return
	}
	if q.horizonFrom == 0 {
		q.horizonFrom = s
	}
	q.horizon = max(q.horizon, unixNanos(reset)-n)
}

// shortOf returns the length of a short window: the advertised window if
// any (advertised, or the one last advertised), or else the longest time
// from an answer to its Reset seen over answers to requests sent at least
// shortWindow apart (a window's Reset is at most its length away, and
// right after it begins about that); 0 if the window is not short or not
// known.
func (q *AdvertisedRate) shortOf(advertised time.Duration) int64 {
	w := int64(advertised)
	switch {
	case w > 0:
	case q.windowKnown:
		w = q.window
	case q.horizonFrom != 0 && q.lastSent-q.horizonFrom >= int64(shortWindow):
		w = q.horizon
	}
	if w >= int64(shortWindow) {
		return 0
	}
	return w
}

// How a pair of neighbouring answered sends reads (see above).
const (
	pairCompany = iota // fell by more than its own sends
	pairAlone          // fell by exactly its own sends
	pairWindow         // a new window
	pairOther          // proves nothing
)

// sendMark is one of the worker's sends: its time, its cost sent in all up
// to and including it, the Remaining its answer showed (negative: not
// answered) of what Limit, and whether it was accepted.
type sendMark struct {
	at    int64
	cost  float64
	rem   float64
	limit float64
	ok    bool
}

// mark remembers a send at now, the cost sent in all being q.cost.
func (q *AdvertisedRate) mark(now int64) {
	q.sends[q.marks%sendMarks] = sendMark{at: now, cost: q.cost, rem: -1}
	q.marks++
}

// markAt returns the i-th of the sends remembered, the oldest first.
func (q *AdvertisedRate) markAt(i int) *sendMark {
	return &q.sends[(q.marks-min(q.marks, sendMarks)+i)%sendMarks]
}

// answer marks the send at s answered, rem left (negative: unknown) of a
// limit of limit, accepted or not, and returns its index among the sends
// remembered; -1 if not remembered, or nothing is left to tell.
func (q *AdvertisedRate) answer(s int64, rem, limit float64, accepted bool) int {
	n := min(q.marks, sendMarks)
	if rem < 0 || limit <= 0 || n == 0 {
		return -1
	}
	// The send answered: the first not answered at s, by bisection.
	lo, hi := 0, n
	for lo < hi {
		mid := (lo + hi) / 2
		if q.markAt(mid).at < s {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	for lo < n && q.markAt(lo).at == s && q.markAt(lo).rem >= 0 {
		lo++
	}
	if lo == n || q.markAt(lo).at != s {
		return -1 // not remembered
	}
	m := q.markAt(lo)
	m.rem, m.limit, m.ok = rem, limit, accepted
	return lo
}

// proveAlone takes the answer to the i-th send remembered (-1: none), of
// a limit of limit per window (0: not a short window), into the proof
// that the worker is alone on the quota, and reports whether it proved it
// now. A proof sets the share to 1; company seen after sets it back to
// Start.
func (q *AdvertisedRate) proveAlone(i int, limit float64, window int64) bool {
	if i < 0 {
		return false
	}
	n := min(q.marks, sendMarks)
	j, k := q.answeredBefore(i), i+1
	for k < n && q.markAt(k).rem < 0 {
		k++
	}
	if q.readPair(j, i, limit, window) == pairCompany || k < n && q.readPair(i, k, limit, window) == pairCompany {
		if q.alone {
			q.alone, q.share = false, q.cfg.Start
		}
		return false
	}
	if q.alone || window <= 0 {
		return false
	}
	// The chain ending with the latest answered send, from the latest
	// back: the own cost over its alone pairs (proof).
	proof := 0.0
scan:
	for k = q.answeredBefore(n); k >= 0; k = j {
		j = q.answeredBefore(k)
		switch q.readPair(j, k, limit, window) {
		case pairAlone:
			proof += q.markAt(k).cost - q.markAt(j).cost
		case pairWindow:
		default:
			break scan
		}
	}
	if proof >= aloneProof*max(q.unit, 1) {
		q.alone, q.share = true, 1
		return true
	}
	return false
}

// answeredBefore returns the latest answered send before the i-th
// remembered, or -1.
func (q *AdvertisedRate) answeredBefore(i int) int {
	for i--; i >= 0 && q.markAt(i).rem < 0; i-- {
	}
	return i
}

// readPair reads the pair of answered sends j < i (j negative: none) of
// a limit of limit per window (0: unknown).
func (q *AdvertisedRate) readPair(j, i int, limit float64, window int64) int {
	if j < 0 {
		return pairOther
	}
	a, b := q.markAt(j), q.markAt(i)
	own, fall := b.cost-a.cost, a.rem-b.rem
	const eps = 1e-9
	switch {
	case fall > own+eps:
		return pairCompany
	case fall > own-eps && b.rem > 0 && b.at-a.at < window:
		return pairAlone
	case b.rem >= limit-own-eps:
		return pairWindow
	}
	return pairOther
}
