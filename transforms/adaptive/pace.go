package adaptive

import (
	"math"
	"time"
)

// Pacer is the pacing [Policy]: it spaces the requests it lets through
// evenly, one every 1/rate, and postpones the others to their slot; it never
// rejects. Its rate follows the backend's answers:
//
//   - Start: the rate doubles every second from StartRate until the backend
//     first rejects a request (slow start).
//   - Decrease: a rejected request (HTTP 429 and the like) sent after the
//     last decrease cuts the rate to Beta of what it was; answers to requests
//     sent before it are part of the congestion already answered, so calls
//     in flight do not cut twice.
//   - Increase: after a decrease the rate follows a cubic curve in the time
//     since, as TCP CUBIC's window does: back to the rate before the
//     decrease (the ceiling) after Recover, flat around it, then faster and
//     faster above it (30 % above it another Recover later). Near the last
//     point of congestion it probes gently, so little is wasted; far from
//     it, capacity that grew is found within a few Recover.
//   - A steady ceiling: when a congestion comes within a tenth of the
//     ceiling before it, the backend's limit is about there. The curve then
//     flattens a hundredth below the ceiling rather than at it, so that a
//     strict limiter (one that refuses any request ahead of its slot) is
//     not probed at its exact rate on every climb back, and climbs above it
//     half as fast, so that it probes for more half as often. A request
//     let through late after its slot, by less than half of that margin of
//     its spacing, spaces the next one from its slot, not from its send: a
//     Pacer woken a little after every slot would otherwise send below its
//     rate by that much.
//   - Dark spells: after a decrease the rate stays put until a request sent
//     since is accepted. Until then the Pacer probes with one request at a
//     time (no other is let through while one is unanswered), and each
//     further rejection backs off to Backoff of the rate, down to MinRate,
//     so a backend that rejects everything (a used-up quota window, an
//     outage) costs few rejected calls and is found again within 1/MinRate.
//     When the backend rejected everything through several decreases in a
//     row, the first accepted answer puts the rate back at Beta of the rate
//     where the spell began, rather than climbing from the bottom.
//   - Retry-After: a rejection that carries one blocks sending until then,
//     less a second (Retry-After is commonly rounded up to whole seconds:
//     "1" means "somewhere within the next second", and waiting a whole
//     second after every 429 would idle a batch loop that runs once a
//     second). A Retry-After of a second or less therefore blocks nothing;
//     a long one, such as the end of a fixed quota window, saves the
//     requests that would certainly be rejected.
//   - Idle time does not raise the rate: the curve advances only while
//     requests wait for their slot.
//   - Advertised quotas: the limits an answer advertises (Answer.Quota),
//     on requests or tokens, each feed an [AdvertisedRate]; the rate is
//     never above the lowest of theirs, a request counted at what
//     requests took of the limit on average (Quota.Used, 1 for requests),
//     so a quota the API tells is not learnt from refusals. They are not
//     part of the saved state (MarshalBinary):
//     a restored Pacer learns them again from the next answers.
//   - Slow APIs: the Pacer measures the answers' latency (an average over
//     recent answers). Slow start doubles the rate once per latency when
//     that is longer than a second, as TCP's does once per round trip, so
//     that it does not overshoot several times over before the first
//     rejection comes back; learning the latency keeps the rate slow start
//     had reached. A decrease cuts from the rate on the curve when the
//     rejected request was sent, not from where the curve has climbed to
//     since: after a slow answer, the cut lands near the backend's
//     capacity rather than at a share of an overshoot. The
//     cubic curve takes at least four latencies instead of Recover, so
//     that it does not climb far above the ceiling while the answers that
//     would say so are under way. The
//     latency is from the send to when the answer came (Answer.Received).
//     For a slow API (latency over 100 ms), while dark only requests let
//     through since the decrease count as probes under way, the next slot
//     is spaced at the rate after a cut (a strict limiter would refuse the
//     first request after it), the first refusal already makes the
//     ceiling steady, at the rate when the latest accepted request was
//     sent (slow start climbed a little since; at the refused rate if the
//     refusal came back at once, as a gateway's does, while the accepted
//     answers take longer; one below it, while what is
//     sent since a cut is accepted, keeps it steady, lower), the curve
//     flattens up to two hundredths below it (in proportion to the
//     latency), and a refusal at a steady ceiling cuts without a dark
//     spell, which would idle a whole latency. The answers to what was
//     under way at the first cut measure the rate the backend accepted;
//     if the limiter has a burst (accepted requests follow one another
//     with none sent between, which a strict limiter never does above
//     its rate), the ceiling is that rate, with the curve on
//     its flat at once, when it is below the cut's. A token bucket lets
//     slow start climb far past its rate before the first refusal, and
//     cutting a tenth per latency would waste the excess for several
//     latencies. Refusals near a steady
//     ceiling, at most one in a hundred recent answers, are the send
//     times' jitter against a strict limiter and neither cut nor move the
//     ceiling. Under a
//     steady ceiling the curve climbs above it slower in proportion to the
//     latency beyond 100 ms, so that the probes for more capacity, each
//     wasting about a latency's worth of requests against a strict
//     limiter, come rarer as they cost more.
//
// Requests may have a cost (see [Policy]): tokens, bytes, items. The rate
// is in cost units per second, and a request of cost c let through puts
// the next slot c/rate later, so that a request of 100 tokens uses 100
// times the slot of a request of 1. With every cost 1 the rate is in
// requests per second. StartRate and MinRate are in requests per second;
// the Pacer scales them by its unit, an estimate of the cost of a typical
// request: the cost of the first request it lets through, then an
// exponentially weighted moving average over the requests it lets through,
// each weighing unitWeight (1/8). Slow start begins at StartRate × unit
// units per second, the rate never falls below MinRate × unit, and while
// it probes a backend that rejected everything it asks again unit/rate
// later. The cubic curve and its ceiling are rates the backend answered
// to, in units per second already, and need no scaling. A request of cost
// 0 (or less) is free: it waits for its slot, a Retry-After or a probe's
// answer as any other, but does not move the next slot or the unit.
//
// The transform gives every group of a worker one Pacer (see [NewShared]),
// so the worker's calls are one evenly spaced stream; groups with a Pacer
// each (PacerConfig.Groups) share a backend less well.
//
// A Pacer is not safe for concurrent use. The zero value is not usable;
// make one with [NewPacer].
type Pacer struct {
	cfg PacerConfig

	started bool
	rate    float64    // cost units per second, now
	ceil    float64    // rate before the last decrease; 0 in slow start
	epoch   int64      // when the curve's time starts (last decrease, shifted by idle time)
	next    int64      // earliest time of the next send (GCRA's theoretical arrival time)
	last    int64      // time of the last Decide that was limited by the pace
	blocked int64      // Retry-After: no send before this time
	cutAt   int64      // time of the last decrease
	dark    bool       // no accepted answer since the last decrease
	cuts    int64      // decreases since the last accepted answer
	spell   float64    // the ceiling before the first decrease of a dark spell
	out     int64      // requests let through and not answered yet
	sent    int64      // time of the last request let through
	held    int64      // recent Decide calls that postponed (for Probability)
	asked   int64      // recent Decide calls
	unit    float64    // typical cost of a request (EWMA); 0 until a request with a cost is let through
	steady  bool       // the last congestion came within steadyBand of the ceiling before it
	lat     int64      // the answers' latency (EWMA, nanos); 0 until an answer
	probes  int64      // requests let through while dark, not answered yet
	okCut   bool       // a request sent since the last decrease was accepted
	answers int64      // recent answers to requests sent since the last decrease
	refused int64      // how many of them were refusals
	okSent  int64      // send time of the latest request accepted
	okCeil  bool       // the ceiling is a rate the backend accepted
	con     congestion // a slow API's first congestion, measured

	adv   []advertisedLimit // one per limit the answers advertise
	early earlySends        // the sends before the first answer, for the first limits
}

// NewPacer returns a Pacer for cfg, or an error naming the invalid field.
func NewPacer(cfg PacerConfig) (*Pacer, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Pacer{cfg: cfg.withDefaults()}, nil
}

// start begins at the first event.
func (p *Pacer) start(n int64) {
	if p.started {
		return
	}
	p.started = true
	p.rate = min(p.cfg.StartRate*p.typical(), maxRate)
	p.epoch, p.next, p.last = n, n, n
	if p.cfg.Rate > 0 { // known: start at it, where the curve is flat
		p.rate, p.ceil = p.cfg.Rate, p.cfg.Rate
		p.epoch = n - int64(p.cfg.Recover)*int64(p.cfg.Groups)
	}
}

// after returns n plus the time c cost units take at the current rate,
// saturating at the largest time.
func (p *Pacer) after(n int64, c float64) int64 {
	if c == 0 {
		return n
	}
	d := 1e9 * c / p.rate
	if !(d < math.MaxInt64) { // also NaN
		return math.MaxInt64
	}
	return satAdd(n, int64(d))
}

// curve returns the rate at n.
func (p *Pacer) curve(n int64) float64 {
	t := float64(n-p.epoch) / 1e9
	if t < 0 {
		t = 0
	}
	if p.ceil == 0 { // slow start: doubling every second, or every latency if longer
		return min(p.cfg.StartRate*p.typical()*math.Exp2(t/p.doubling()), maxRate)
	}
	x := t/(p.recover().Seconds()*float64(p.cfg.Groups)) - 1
	a := 1 - p.cfg.Beta // below the ceiling: back from Beta·ceil
	c := p.ceil
	if p.steady {
		c *= 1 - p.margin()
	}
	if x > 0 {
		a = probeGain // above it: probing for more
		if p.steady {
			// Half as fast, and slower still when the answers that
			// would stop an overshoot take long: a probe above a strict
			// limiter's rate wastes about half of what is sent until
			// they come back.
			x /= 2 * max(1, float64(p.lat)/float64(steadyLatency))
		}
	}
	r := min(max(c*(1+a*x*x*x), p.floor()), maxRate)
	if p.cfg.Rate > 0 { // known: never above it
		r = min(r, p.cfg.Rate)
	}
	return r
}

// Decide lets the request through when its slot has come, or postpones it
// to its slot (or to the end of a Retry-After, or of a probe). It never
// rejects. When the request is let through, the next slot is cost/rate
// later; a cost of 0 or less is free: the request still waits for its
// slot, but the next slot stays where it is. inFlight is not used: the
// Pacer counts the requests it let through and has no answer to.
func (p *Pacer) Decide(now time.Time, _, cost int) Decision {
	c := max(float64(cost), 0)
	n := unixNanos(now)
	p.start(n)
	p.asked++
	if n < p.blocked {
		p.held++
		return Decision{Verdict: Postpone, RetryAt: time.Unix(0, p.blocked), Probability: p.share()}
	}
	if n < p.next {
		p.held++
		p.last = n
		return Decision{Verdict: Postpone, RetryAt: time.Unix(0, p.next), Probability: p.share()}
	}
	if p.dark && p.underWay() > 0 && n-p.sent < int64(p.cfg.Recover) {
		// Rejected since the last decrease: probe with one request at a
		// time, asking again a typical request's slot later.
		p.held++
		p.last = n
		return Decision{Verdict: Postpone, RetryAt: time.Unix(0, p.after(n, p.typical())), Probability: p.share()}
	}
	// Time since the slot and since the last limited decision was idle:
	// shift the curve so that it does not climb while nothing waits.
	if idle := n - max(p.next, p.last); idle > 0 && p.asked > 1 {
		p.epoch += idle
	}
	p.learn(c)
	if !p.dark { // while dark the rate stays where the last decrease left it
		p.rate = p.curve(n)
	}
	p.rate = p.advertisedCap(n, p.rate) // and the curve held while it binds
	// No burst: the next slot is this request's full spacing away, from
	// its own slot if it came late by less than the lateness the flat's
	// margin forgives.
	p.next = p.after(max(n-p.forgive(c), min(p.next, n)), c)
	p.last, p.sent = n, n
	p.out++
	p.logSend(n)
	p.sentAdvertised(n)
	if p.dark {
		p.probes++
	}
	p.decay()
	return Decision{Verdict: Send}
}

// share is the share of recent decisions that postponed.
func (p *Pacer) share() float64 {
	if p.asked == 0 {
		return 0
	}
	return float64(p.held) / float64(p.asked)
}

// decay halves the counts behind share now and then, so it follows recent
// decisions.
func (p *Pacer) decay() {
	if p.asked >= 64 {
		p.asked /= 2
		p.held /= 2
	}
}

// Record learns from an answer.
func (p *Pacer) Record(now time.Time, a Answer) {
	n := unixNanos(now)
	p.start(n)
	p.out = max(p.out-1, 0)
	sent, got := unixNanos(a.Sent), n
	if !a.Received.IsZero() {
		got = min(unixNanos(a.Received), n)
	}
	if !a.Sent.IsZero() && sent <= got {
		p.learnLatency(n, got-sent)
	}
	p.observeAdvertised(n, sent, a.Quota, a.Outcome)
	if p.dark && sent >= p.cutAt && p.probes > 0 {
		p.probes--
	}
	if sent >= p.cutAt {
		p.countAnswer(a.Outcome == Throttled)
	}
	p.measureCongestion(n, sent, a.Outcome == Throttled)
	switch a.Outcome {
	case Throttled:
		if ra := a.RetryAfter - retryAfterSlack; ra > 0 {
			p.blocked = max(p.blocked, satAdd(n, int64(ra)))
		}
		if sent < p.cutAt {
			return // already answered by the last decrease
		}
		r, ok := p.rate, false
		if !p.dark {
			// The rate at the send: a slow answer comes after a climb.
			r = p.curve(n)
			if !a.Sent.IsZero() && sent < n {
				r = min(r, p.curve(sent))
			}
			r, ok = p.slowStartCeiling(r, sent, got-sent)
		}
		if p.jitter(r, a.RetryAfter) {
			return // the send times' jitter against a strict limiter
		}
		if p.ceil == 0 || !p.dark {
			p.spell = r // a new congestion: remember where it began
			p.steady = p.steadyAt(r)
		}
		cut := p.cfg.Beta
		if p.dark {
			cut = p.cfg.Backoff // still rejected after a decrease: back off
		}
		p.startCongestion(sent, n, r)
		p.ceil, p.okCeil = r, ok
		p.rate = max(r*cut, p.floor())
		if p.lat > int64(steadyLatency) {
			// The next slot, spaced at the old rate, moves to the new
			// one: a strict limiter would refuse the first request after
			// the cut, and a slow API would say so a latency later.
			p.next = max(p.next, p.after(p.sent, p.typical()))
		}
		p.epoch, p.cutAt, p.okCut = n, n, false
		p.answers, p.refused = 0, 0
		p.dark = true
		p.probes = 0
		p.cuts++
		if p.steady && p.lat > int64(steadyLatency) {
			// A slow API refused a request at its steady ceiling: the
			// limiter's jitter, not an outage. A dark spell would idle
			// a whole latency; the cut is enough.
			p.dark, p.cuts = false, 0
		}
	case Accepted:
		p.okCut = p.okCut || sent >= p.cutAt
		p.okSent = max(p.okSent, sent)
		if !p.dark || sent < p.cutAt {
			return // not news: sent before the last decrease
		}
		if p.cuts >= 2 {
			// The backend rejected everything through several decreases
			// and now accepts again: start from where the spell began.
			p.ceil, p.okCeil = p.spell, false
		}
		// The curve starts again from β·ceil when the backend accepts.
		p.epoch = n
		p.rate = p.curve(n)
		p.next = min(p.next, p.after(n, p.typical())) // at most a typical request's spacing away
		p.dark, p.cuts = false, 0
	}
}

var _ Policy = (*Pacer)(nil)
