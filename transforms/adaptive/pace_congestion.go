package adaptive

import "slices"

// The Pacer's measure of a slow API's first congestion (see [Pacer]): of
// the requests under way when the first refusal came back, how many the
// backend accepted.

// sendLogSize is how many send times the Pacer keeps during a slow API's
// slow start: a latency's requests at up to 500 a second over 2 s. A
// congestion whose first refused request is older than the log goes
// unmeasured.
const sendLogSize = 1024

// congestionAnswers is how many answers to requests sent in the first
// congestion the measure waits for before it first sets the ceiling; it
// measures again at twice as many, and so on up to congestionMaxAnswers,
// each time with more of a token bucket's refill steps behind it.
const (
	congestionAnswers    = 16
	congestionMaxAnswers = 64
)

// congestionLatencies is how many latencies after the cut the measure ends,
// however few answers came.
const congestionLatencies = 4

// burstPairs: at least one in burstPairs of the accepted requests of the
// congestion must follow another accepted one, with no request sent between
// them, for the measure to set the ceiling; the limiter has a burst (a
// token bucket). A strict limiter (GCRA with no burst) refuses the request
// after each one it accepts while the requests come faster than its rate,
// accepting every other one at most: what it accepted is not its rate.
const burstPairs = 4

// congestion is the measure of a slow API's first congestion: the answers
// to the requests sent from the first refused one until the cut it made,
// and the send times of slow start, kept until then. It is not part of the
// saved state: a Pacer restored mid-measure goes without it.
type congestion struct {
	from, to int64   // the congestion's send times: [from, to)
	ceil     float64 // the ceiling the cut set
	last     int64   // the latest send time answered
	ok, no   int64   // accepted and refused answers
	oks      []int64 // the send times of the accepted ones
	at       int64   // how many answers the next measure waits for
	set      float64 // the ceiling the measure set; 0 before
	done     bool

	sends []int64 // ring of send times
	head  int     // where the next send time goes
	kept  int     // send times in the ring
}

// logSend keeps the send time n while a slow API is in slow start.
func (p *Pacer) logSend(n int64) {
	c := &p.con
	if p.ceil != 0 || c.done || p.lat <= int64(steadyLatency) {
		return
	}
	if c.sends == nil {
		c.sends = make([]int64, sendLogSize)
	}
	c.sends[c.head] = n
	c.head = (c.head + 1) % sendLogSize
	c.kept = min(c.kept+1, sendLogSize)
}

// sentBetween counts the requests sent in [from, to], and reports whether
// the log reaches back to from.
func (c *congestion) sentBetween(from, to int64) (int64, bool) {
	var k int64
	reach := c.kept < sendLogSize
	for _, t := range c.sends[:c.kept] {
		reach = reach || t < from
		if t >= from && t <= to {
			k++
		}
	}
	return k, reach
}

// startCongestion begins the measure at a slow API's first cut, at n, made
// by the refusal of a request sent at sent, which sets the ceiling to ceil.
func (p *Pacer) startCongestion(sent, n int64, ceil float64) {
	c := &p.con
	if p.ceil != 0 || c.to != 0 || c.sends == nil {
		return
	}
	c.from, c.to, c.ceil, c.at = sent, n, ceil, congestionAnswers
}

// measureCongestion counts an answer, received at n, to a request sent at
// sent, and once enough have come sets the ceiling at the rate the backend
// accepted of those requests, if that is lower than the cut's and the
// limiter has a burst: a token bucket lets slow start climb past its rate
// until the burst is spent, the first refusal comes back a latency later
// with the rate far above the limit, and cutting a tenth at a time, each
// cut's refusals a latency later again, would waste several latencies'
// excess.
//
// The rate is the requests sent in the congestion per second, from its
// first refused request to the latest answered, times the share of the
// answers accepted: answers that come back out of order (a heavy-tailed
// latency) are a sample of those sent.
func (p *Pacer) measureCongestion(n, sent int64, refused bool) {
	c := &p.con
	if c.to == 0 || c.done {
		return
	}
	if n-c.to > congestionLatencies*p.lat {
		c.end() // what is still under way is the latency's tail
		return
	}
	if sent < c.from || sent >= c.to {
		return
	}
	if refused {
		c.no++
	} else {
		c.ok++
		c.oks = append(c.oks, sent)
	}
	c.last = max(c.last, sent)
	if c.ok+c.no < c.at || c.last <= c.from {
		return
	}
	c.at *= 2
	if c.at > congestionMaxAnswers {
		defer c.end()
	}
	k, reach := c.sentBetween(c.from, c.last)
	if !reach || !c.burst() {
		return
	}
	r := float64(k) / (float64(c.last-c.from) / 1e9) * float64(c.ok) / float64(c.ok+c.no)
	switch {
	case r >= c.ceil:
	case c.set == 0:
		// A cut, to a steady ceiling, on its flat at once: the rate is
		// measured, not a refused rate slow start overshot.
		c.set = r
		p.ceil, p.okCeil, p.steady = r, false, true
		p.epoch = n - int64(p.recover())*int64(p.cfg.Groups)
		p.rate = p.curve(n)
		p.cutAt, p.okCut = n, false
		p.answers, p.refused = 0, 0
		p.dark, p.cuts = false, 0
	case p.ceil == c.set:
		// A closer measure, while no refusal since has moved the ceiling.
		c.set, p.ceil = r, r
		if !p.dark {
			p.rate = p.curve(n)
		}
	}
}

// burst reports whether, of the accepted requests answered, at least one
// in burstPairs followed another accepted one with no request sent between.
func (c *congestion) burst() bool {
	slices.Sort(c.oks)
	pairs := 0
	for i := 1; i < len(c.oks); i++ {
		if k, _ := c.sentBetween(c.oks[i-1], c.oks[i]); k == 2 {
			pairs++
		}
	}
	return pairs*burstPairs >= len(c.oks)
}

// end ends the measure and lets its logs go.
func (c *congestion) end() {
	c.done, c.sends, c.oks, c.kept = true, nil, nil, 0
}
