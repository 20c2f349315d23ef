package adaptive

import (
	"cmp"
	"fmt"
	"time"
)

// Quota is one limit an API advertised on an answer (success or refusal):
// Limit units per Window, of which Remaining are left until Reset. A field
// the answer did not advertise holds its unknown value: -1 for Limit and
// Remaining, the zero Time for Reset, 0 for Window. Package clientcall's
// Advertised carries the same fields, read from the answer's header.
type Quota struct {
	Limit     int64         // the quota per window; -1 if unknown
	Remaining int64         // what is left now; -1 if unknown
	Reset     time.Time     // when Remaining comes back (see Refill); zero if unknown
	Window    time.Duration // the quota's window; 0 if unknown
	// Refill is true for a bucket that refills continuously (OpenAI,
	// Anthropic): Reset is when it is full again. False for a fixed
	// window, whose quota comes back at once at Reset.
	Refill bool
	// Used is what the answered request itself took of this limit: its
	// tokens, for a limit on tokens, when the caller knows them (an LLM
	// API's answer reports them; output tokens are known only then). Zero
	// means one request's worth, 1: a limit on requests. Negative means
	// not known (a limit on tokens whose answer did not say). The [Pacer]
	// sizes its requests against the limit by the average Used, and a
	// limit that no answer has sized does not bind it.
	Used float64
}

// AdvertisedRate paces one of several independent workers that share an
// API's quota, from the quota the API advertises on its answers. The
// workers share no store and do not know how many they are; the server's
// count of what is left is the one view they share. Each corrects its own
// rate by how that count moves against a target for everyone together, as
// the explicit-rate controls of networks (RCP, XCP) correct each flow by
// the load a router sees against its capacity:
//
//   - Target for everyone: for a fixed window, Remaining less a reserve
//     (Reserve × Limit, for the requests in flight, the jitter of the sends
//     and each worker's lagging view) spread evenly over the time from the
//     request's send to Reset. For a refilling bucket, the refill rate ρ
//     (Limit/Window, or else (Limit − Remaining)/(Reset − send), averaged)
//     plus (Remaining − Limit/4)/(half the bucket's fill time): the bucket
//     settles a quarter full rather than sitting full (its refill lost) or
//     empty (every jitter refused); the target stays within [ρ/2, 2.5ρ]. A
//     Reset counted from the answer is 0 once it has passed (OpenAI's, the
//     quota server's): one at the answer is no sample of ρ (with answers
//     slower than the bucket's fill time every Reset is at the answer, and
//     (Limit − Remaining) over the answer's delay is a fraction of ρ). A
//     surplus over the quarter, seen a delay d after its send,
//     is spent over at least 2d: every answer to a request sent before
//     the spending began still shows it, so spent faster it is spent
//     more than once and the bucket overshoots into refusals. A deficit
//     brakes at once: an overshoot costs refusals, an undershoot idle.
//   - Consumption by everyone: the fall of Remaining between two answers
//     of one window (plus the refill in between, for a bucket, less what
//     a bucket full by then could not hold: when the later answer shows
//     it full but for its own request, it took in at most the room the
//     first showed; one below full then was not full in between, sending
//     being steady, and every refill was taken) over the
//     time between the two requests' sends: each count was taken about a
//     one-way delay after its send, so the delays cancel. A measurement
//     spans at least Span (short spans are noisy), or less when it is
//     clearly over the target (twice it, and a hundredth of Limit: an
//     overload costs refusals). A new window (Reset moves on by more than
//     a second) starts it again. An answer to a request sent before the
//     last answer used is ignored.
//   - Own rate: share × target, share starting at Start. At each
//     measurement, share ← share × (allowed ÷ consumed)^min(span/4 s, 1),
//     bounded to ×[1/4, 2], allowed being the target integrated over the
//     span. Every worker scales by the same shared ratio, so together
//     they converge without knowing how many they are. The exponent makes
//     the correction a rate in time (time constant 4 s, about twice a
//     measurement's lag), not a step per answer: a worker with many
//     answers does not correct more than one with few, which would
//     overshoot and spread their shares apart. Down by 4× at most, up by
//     2×: an overshoot costs refusals, an undershoot idle quota. A worker
//     that sent less than half its rate over the span (its demand is
//     lower) does not grow, as TCP does not grow an unused window (RFC
//     7661).
//   - Resets: after a window's Reset, until an answer from the new window,
//     the target is (Limit − reserve)/Window, Window learnt from the step
//     between two Resets if not advertised, or while unknown the average
//     target seen (if none, Rate is 0): the new quota is spread over the
//     new window, never spent in a burst at its start.
//   - A window used up (Remaining at most the reserve): Rate is one
//     typical request (an average of the costs sent) over the time from
//     the last send to Reset, so a caller that spaces its sends cost/Rate
//     apart sends its next at Reset.
//   - Unknown fields: with only Remaining and Reset the window rule uses
//     them, with no reserve; with only Limit and Window the target is
//     (Limit − reserve)/Window and the share stays at Start, nothing
//     measuring consumption. A bucket without Limit tells no refill
//     rate. With nothing usable Rate is 0.
//   - A limit advertised as refilling (Quota.Refill) may be a fixed window
//     sent in a bucket's headers (OpenAI's or Anthropic's, by a gateway
//     that counts in windows). A bucket's Reset, when it is full again,
//     moves later by at least the time between two answers unless it
//     refilled (Remaining rose); a window's stays put. So two answers
//     sent at least 3 s apart, neither full, Remaining not risen, tell
//     them apart: a Reset within a second of the first makes it a fixed
//     window from then on, one that moved by at least the time between
//     less a second a bucket, if the two times to full are in proportion
//     to what the two answers miss (within two requests: a bucket's is
//     what it misses over its refill rate; a window that rolled over
//     between the two moved as much, its new end unrelated to its use);
//     anything else starts the test again. A Reset at the answer (0 left)
//     takes no part: it tells only that the reset has passed.
//     Until then the rate of such a limit without Window is at least one
//     typical request per 3 s: paced as a bucket, a window's first
//     answers give a refill rate of a trickle, (Limit − Remaining) over
//     the whole time to its end, and the test would wait for answers at
//     that trickle. (With no ceiling at all until the test, eight workers
//     slow-starting into one window were refused.)
//   - A window shorter than 2 s (its Window advertised, or else the
//     longest time from an answer to its Reset over 2 s of sends): a Reset
//     in whole seconds is up to a whole window off, and no measurement
//     spans one window, so the share stays at Start. A worker proves it
//     is alone from Remaining itself (see proveAlone): between two of its
//     sends it falls by exactly its own requests; someone else's request
//     makes it fall by more. Proven alone, its share is 1 and the target
//     the Limit, less the reserve, over the window; a fall by more than
//     its own sends after that sets the share back to Start.
//   - A window's Remaining falls by at least each accepted request's
//     part, and windows begin a window apart. When the worker's own
//     accepted requests need two windows begun less than the advertised
//     Window apart (each accepted after its previous accepted one showed
//     less left than it took: see disprove), Remaining does not count a
//     window (a strict limiter telling its burst, a server telling less
//     than it allows): Rate is Limit, less the reserve, over Window, until
//     Remaining shows company. Only the Pacer tells the outcomes.
//   - A client not using this code takes its part as consumption: the
//     workers' shares shrink until everyone together meets the target.
//
// Workers with equal demand converge in sum, not each to an equal share:
// the same ratio corrects all, keeping the ratios the first seconds set.
//
// Rates are in cost units per second, the units the quota counts. It is
// not safe for concurrent use, and does not allocate. The zero value is
// not usable; make one with [NewAdvertisedRate].
type AdvertisedRate struct {
	cfg AdvertisedRateConfig

	known  bool    // a target has been computed
	refill bool    // the last observation was of a refilling bucket
	share  float64 // this worker's share of the target
	target float64 // for everyone, cost units per second, as of the last observation
	steady float64 // a window's target after its Reset

	limit       float64 // Limit; -1 unknown
	limitKnown  bool
	window      int64   // nanoseconds: Window, or the step between two Resets; 0 unknown
	windowKnown bool    // advertised, not learnt
	reset       int64   // the window's Reset, Unix nanoseconds; 0 unknown
	rho         float64 // a bucket's refill rate, cost units per second; 0 unknown
	rem         float64 // Remaining at the last observation; -1 unknown
	last        int64   // send time of the last observation used

	refAt   int64   // send time of the measurement's start
	refRem  float64 // Remaining at its start; -1 none
	refCost float64 // own cost sent at its start
	area    float64 // the target integrated since its start
	spilt   float64 // a bucket's refill lost to its being full since then

	cost     float64 // own cost sent, in all
	lastSent int64   // time of the last send; 0 none
	unit     float64 // typical cost of a request; 0 until a send

	// Whether the worker is alone on a short window's quota (see proveAlone).
	sends [sendMarks]sendMark // its latest sends, a ring
	marks int                 // how many it sent, in all
	alone bool                // proven alone
	// Whether Remaining was seen not to count a window (see disprove).
	unwindowed int64
	since      int64
	// The longest time from an answer to its Reset, and the send time of
	// the first answer that told one (see shortOf).
	horizon, horizonFrom int64

	// Whether a limit advertised as refilling is a window (see inPlace).
	tested      bool    // the test was made
	windowed    bool    // and found a window
	anchorAt    int64   // send time of the first answer of the test; 0 none
	anchorRem   float64 // its Remaining
	anchorReset int64   // its Reset
}

// AdvertisedRateConfig configures an [AdvertisedRate]. The zero value is
// valid, and zero fields mean the documented defaults.
type AdvertisedRateConfig struct {
	// Reserve is the share of a window's Limit left unspent before its
	// Reset, in (0, 0.5): it absorbs the requests in flight, the jitter of
	// the sends and the lag of each worker's view. Zero means 0.01: a
	// few requests at the rates where a minute's window leaves each
	// worker a few dozen answers, and at most 1 % of the quota idle.
	Reserve float64
	// Start is the share of the target a worker takes before it has
	// measured consumption, in (0, 1]. Zero means 1/4: a few workers
	// starting together overshoot a little, one alone idles a little.
	Start float64
	// Span is the shortest time a measurement of consumption spans, unless
	// it is clearly over the target. Zero means 2 seconds: a count of a
	// few dozen at a quota of hundreds a minute, so that one request more
	// or less moves it a few percent.
	Span time.Duration
}

// Defaults of AdvertisedRateConfig (documented there) and the rule's
// constants (see [AdvertisedRate]).
const (
	defaultQuotaReserve = 0.01
	defaultQuotaStart   = 0.25
	defaultQuotaSpan    = 2 * time.Second

	quotaTau  = 4.0  // seconds: the time constant of the correction
	quotaDown = 0.25 // the largest cut of the share per measurement
	quotaUp   = 2.0  // the largest raise
	quotaIdle = 0.5  // below this use of its rate a worker does not grow
	// Consumption quotaOver times the target is measured before Span, if
	// Remaining fell by at least quotaMinFall of Limit.
	quotaOver     = 2.0
	quotaMinFall  = 0.01
	minQuotaShare = 1e-6 // the smallest share: a million workers
	quotaFloor    = 1e-6 // Rate, cost units per second, for a window used up with no Reset known

	bucketLevel = 0.25 // where a refilling bucket settles, a share of Limit
	bucketDrain = 0.5  // how fast, a share of its fill time
	bucketLate  = 2.0  // a surplus seen late is spent over this many answers' delays

	// How far a Reset moves within a window (at most a quarter of it):
	// resets sent in whole seconds move by up to one.
	quotaSlack = int64(time.Second)
)

// NewAdvertisedRate returns an AdvertisedRate for cfg, or an error naming
// the invalid field.
func NewAdvertisedRate(cfg AdvertisedRateConfig) (*AdvertisedRate, error) {
	cfg.Reserve = cmp.Or(cfg.Reserve, defaultQuotaReserve)
	cfg.Start = cmp.Or(cfg.Start, defaultQuotaStart)
	cfg.Span = cmp.Or(cfg.Span, defaultQuotaSpan)
	switch {
	case !(cfg.Reserve > 0 && cfg.Reserve < 0.5):
		return nil, fmt.Errorf("adaptive: AdvertisedRateConfig.Reserve must be in (0, 0.5), got %v", cfg.Reserve)
	case !(cfg.Start > 0 && cfg.Start <= 1):
		return nil, fmt.Errorf("adaptive: AdvertisedRateConfig.Start must be in (0, 1], got %v", cfg.Start)
	case cfg.Span < 0:
		return nil, fmt.Errorf("adaptive: AdvertisedRateConfig.Span must not be negative, got %v", cfg.Span)
	}
	return &AdvertisedRate{cfg: cfg, share: cfg.Start, rem: -1, refRem: -1, limit: -1}, nil
}

// Sent records that this worker sent a request of the given cost at now; a
// cost of 0 or less is free.
func (q *AdvertisedRate) Sent(now time.Time, cost float64) {
	c := max(cost, 0)
	q.cost += c
	q.lastSent = unixNanos(now)
	q.mark(q.lastSent)
	switch {
	case c > 0 && q.unit == 0:
		q.unit = c
	case c > 0:
		q.unit += (c - q.unit) * unitWeight
	}
}

// Rate returns this worker's ceiling at now, in cost units per second, or
// 0 while nothing usable has been advertised (no ceiling).
func (q *AdvertisedRate) Rate(now time.Time) float64 {
	if !q.known {
		return 0
	}
	if q.unwindowed > 0 {
		return q.unwindowedRate()
	}
	n := unixNanos(now)
	t := q.target
	if !q.refill && q.reset != 0 && n >= q.reset {
		if q.steady == 0 {
			return 0 // a new window, and nothing known of it
		}
		t = q.steady // the window is over, its quota back: spread it
	}
	if r := q.share * t; r > 0 {
		if q.refill && !q.tested && !q.windowKnown { // until the test, at least one request per windowedGap
			r = max(r, cmp.Or(q.unit, 1)*1e9/float64(windowedGap))
		}
		return min(r, maxRate)
	}
	from := q.lastSent
	if from == 0 || from >= q.reset {
		from = n
	}
	if q.reset > from { // used up: one typical request, at Reset
		return min(cmp.Or(q.unit, 1)*1e9/float64(q.reset-from), maxRate)
	}
	return quotaFloor // used up, and no Reset known
}

// Observe learns from a, advertised on the answer, seen at now, to a
// request this worker sent at sent (zero: now).
func (q *AdvertisedRate) Observe(now, sent time.Time, a Quota) {
	q.observe(now, sent, a, Failed)
}

// observe is Observe, told whether the request was accepted (false: not
// known to be).
func (q *AdvertisedRate) observe(now, sent time.Time, a Quota, o Outcome) {
	n := unixNanos(now)
	s := n
	if !sent.IsZero() {
		s = min(unixNanos(sent), n)
	}
	rem := max(float64(a.Remaining), -1) // any negative: unknown
	if !a.Refill || q.tested && q.windowed {
		q.horizonOf(n, s, a.Reset)
		i := q.answer(s, rem, float64(a.Limit), o == Accepted)
		if q.disprove(i, int64(a.Window), o) && q.known {
			q.target, _ = q.targetOf(q.last, q.last, q.rem, q.reset) // not a window from now
		}
		if q.proveAlone(i, float64(a.Limit), q.shortOf(a.Window)) && q.known {
			q.target, _ = q.targetOf(q.last, q.last, q.rem, q.reset) // alone from now
		}
	}
	if q.known && s < q.last {
		return // older than what is known
	}
	reset := int64(0)
	if !a.Reset.IsZero() {
		reset = unixNanos(a.Reset)
	}
	a.Refill = a.Refill && !q.inPlace(n, s, rem, reset, a.Limit)
	if a.Refill != q.refill {
		q.refill, q.reset, q.rho, q.steady = a.Refill, 0, 0, 0
		q.restart(s, -1)
	}
	if !a.Refill {
		q.epoch(s, rem, reset)
	}
	q.learnLimits(n, s, rem, reset, a)
	t, ok := q.targetOf(n, s, rem, reset)
	if !ok {
		return
	}
	if q.known {
		q.area += q.allowed(s)
		if q.refill && q.rem >= 0 && s > q.last && rem >= q.limit-cmp.Or(q.unit, 1) {
			// What a bucket full before this request could not hold was
			// not there to be taken. Below full now, it was not full
			// since (the sends steady): all of the refill was taken.
			q.spilt += max(q.rho*float64(s-q.last)/1e9-max(q.limit-q.rem, 0), 0)
		}
	}
	if q.refRem < 0 {
		q.restart(s, rem)
	} else if rem >= 0 && s > q.refAt {
		q.measure(s, rem)
	}
	q.known, q.target, q.last, q.rem = true, t, s, rem
}
