package adaptive

import (
	"cmp"
	"encoding/binary"
	"fmt"
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
	rate    float64 // cost units per second, now
	ceil    float64 // rate before the last decrease; 0 in slow start
	epoch   int64   // when the curve's time starts (last decrease, shifted by idle time)
	next    int64   // earliest time of the next send (GCRA's theoretical arrival time)
	last    int64   // time of the last Decide that was limited by the pace
	blocked int64   // Retry-After: no send before this time
	cutAt   int64   // time of the last decrease
	dark    bool    // no accepted answer since the last decrease
	cuts    int64   // decreases since the last accepted answer
	spell   float64 // the ceiling before the first decrease of a dark spell
	out     int64   // requests let through and not answered yet
	sent    int64   // time of the last request let through
	held    int64   // recent Decide calls that postponed (for Probability)
	asked   int64   // recent Decide calls
	unit    float64 // typical cost of a request (EWMA); 0 until a request with a cost is let through
}

// PacerConfig configures a [Pacer]. The zero value is valid, and zero
// fields mean the documented defaults, chosen on the whole simulator suite
// rather than on one scenario.
type PacerConfig struct {
	// StartRate is the rate, in requests per second, at which slow start
	// begins (StartRate × the typical cost in cost units per second: see
	// [Pacer]). Zero means 5; it must otherwise be positive.
	StartRate float64
	// Beta is the share of the rate kept by the first decrease of a
	// congestion, in (0, 1). Zero means 0.9.
	Beta float64
	// Recover is how long the cubic curve takes to climb back to the rate
	// before a decrease. Zero means 3 seconds; negative is an error.
	Recover time.Duration
	// Backoff is the share of the rate kept by each further decrease
	// while the backend still rejects everything after one, in (0, 1].
	// Zero means 0.7.
	Backoff float64
	// MinRate is the lowest rate, in requests per second (MinRate × the
	// typical cost in cost units per second: see [Pacer]), at most
	// StartRate. Zero means one request every 5 seconds, so that a Pacer
	// keeps probing a backend that rejects everything without Retry-After
	// (an outage, a used-up quota window) and finds it back within
	// seconds, at a cost of at most 12 rejected requests a minute.
	MinRate float64
	// Rate is the backend's known rate, in cost units per second, where a
	// caller knows it (a quota handed out as time slots): the Pacer starts
	// there, on the flat part of its cubic curve with Rate as the ceiling,
	// instead of slow-starting from StartRate, and never goes above it; it
	// still cuts below it on rejections and climbs back. Zero means not
	// known: slow start, and no bound but the backend's answers.
	Rate float64
	// Groups is how many groups, each with its own Pacer, share the
	// backend; zero means 1. Each probes more gently the more there are
	// (the cubic curve takes Groups × Recover to climb back), so that the
	// backend sees about as many probes from all of them together as from
	// one.
	Groups int
}

// Defaults of PacerConfig (documented there), and the Pacer's fixed
// bounds.
const (
	defaultStartRate = 5.0
	defaultBeta      = 0.9
	defaultRecover   = 3 * time.Second
	defaultBackoff   = 0.7
	defaultMinRate   = 1.0 / 5
	// retryAfterSlack is subtracted from a Retry-After before the Pacer
	// honours it (see [Pacer]).
	retryAfterSlack = time.Second
	// maxRate bounds the rate, in cost units per second.
	maxRate = 1e12
)

// unitWeight is the weight of each request's cost in the Pacer's unit, an
// exponentially weighted moving average. 1/8 is the weight of a new sample
// in TCP's smoothed round-trip time (RFC 6298): the unit follows a change
// of the cost mix within a few dozen requests, while one odd request moves
// it by an eighth of its difference at most.
const unitWeight = 1.0 / 8

// maxUnit bounds the unit: the largest cost, math.MaxInt64, as a float64.
const maxUnit = float64(math.MaxInt64)

// withDefaults fills zero fields.
func (c PacerConfig) withDefaults() PacerConfig {
	c.StartRate = cmp.Or(c.StartRate, defaultStartRate)
	c.Beta = cmp.Or(c.Beta, defaultBeta)
	c.Recover = cmp.Or(c.Recover, defaultRecover)
	c.MinRate = cmp.Or(c.MinRate, defaultMinRate)
	c.Backoff = cmp.Or(c.Backoff, defaultBackoff)
	c.Groups = cmp.Or(c.Groups, 1)
	return c
}

// validate reports whether c, with defaults, describes a usable Pacer. The
// error names the field.
func (c PacerConfig) validate() error {
	d := c.withDefaults()
	switch {
	case !(d.StartRate > 0) || d.StartRate > maxRate:
		return fmt.Errorf("adaptive: PacerConfig.StartRate must be in (0, %v], got %v", maxRate, c.StartRate)
	case !(d.Beta > 0 && d.Beta < 1):
		return fmt.Errorf("adaptive: PacerConfig.Beta must be in (0, 1), got %v", c.Beta)
	case !(d.Backoff > 0 && d.Backoff <= 1):
		return fmt.Errorf("adaptive: PacerConfig.Backoff must be in (0, 1], got %v", c.Backoff)
	case d.Recover <= 0:
		return fmt.Errorf("adaptive: PacerConfig.Recover must be positive, got %v", c.Recover)
	case !(d.MinRate > 0) || d.MinRate > d.StartRate:
		return fmt.Errorf("adaptive: PacerConfig.MinRate must be in (0, StartRate], got %v", c.MinRate)
	case !(d.Rate >= 0) || d.Rate > maxRate:
		return fmt.Errorf("adaptive: PacerConfig.Rate must be in [0, %v], got %v", maxRate, c.Rate)
	case d.Groups < 1 || d.Groups > 1<<20:
		return fmt.Errorf("adaptive: PacerConfig.Groups must be in [1, %d], got %d", 1<<20, c.Groups)
	}
	return nil
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

// typical returns the unit, the typical cost of a request, or 1 while no
// request with a cost has set it.
func (p *Pacer) typical() float64 {
	if p.unit == 0 {
		return 1
	}
	return p.unit
}

// learn moves the unit towards the cost c of a request let through; a
// free request (c = 0) does not move it.
func (p *Pacer) learn(c float64) {
	switch {
	case c == 0:
	case p.unit == 0:
		p.unit = min(c, maxUnit)
	default:
		p.unit += (min(c, maxUnit) - p.unit) * unitWeight
	}
}

// floor returns the lowest rate, MinRate × unit.
func (p *Pacer) floor() float64 { return min(p.cfg.MinRate*p.typical(), maxRate) }

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
	if p.ceil == 0 { // slow start: doubling every second
		return min(p.cfg.StartRate*p.typical()*math.Exp2(t), maxRate)
	}
	x := t/(p.cfg.Recover.Seconds()*float64(p.cfg.Groups)) - 1
	a := 1 - p.cfg.Beta // below the ceiling: back from Beta·ceil
	if x > 0 {
		a = probeGain // above it: probing for more
	}
	r := min(max(p.ceil*(1+a*x*x*x), p.floor()), maxRate)
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
	if p.dark && p.out > 0 && n-p.sent < int64(p.cfg.Recover) {
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
	p.next = p.after(n, c) // no burst: the next slot is this request's full spacing away
	p.last, p.sent = n, n
	p.out++
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
	switch a.Outcome {
	case Throttled:
		if ra := a.RetryAfter - retryAfterSlack; ra > 0 {
			p.blocked = max(p.blocked, satAdd(n, int64(ra)))
		}
		if unixNanos(a.Sent) < p.cutAt {
			return // already answered by the last decrease
		}
		r := p.rate
		if !p.dark {
			r = p.curve(n)
		}
		if p.ceil == 0 || !p.dark {
			p.spell = r // a new congestion: remember where it began
		}
		cut := p.cfg.Beta
		if p.dark {
			cut = p.cfg.Backoff // still rejected after a decrease: back off
		}
		p.ceil = r
		p.rate = max(r*cut, p.floor())
		p.epoch, p.cutAt = n, n
		p.dark = true
		p.cuts++
	case Accepted:
		if !p.dark || unixNanos(a.Sent) < p.cutAt {
			return // not news: sent before the last decrease
		}
		if p.cuts >= 2 {
			// The backend rejected everything through several decreases
			// and now accepts again: start from where the spell began.
			p.ceil = p.spell
		}
		// The curve starts again from β·ceil when the backend accepts.
		p.epoch = n
		p.rate = p.curve(n)
		p.next = min(p.next, p.after(n, p.typical())) // at most a typical request's spacing away
		p.dark, p.cuts = false, 0
	}
}

// pacerVersion is the version byte of the Pacer's state encoding: the high
// nibble is the policy (2, the pacer), the low one the version. Version 3
// added the unit; the state of version 2 (pacerVersion2), saved when every
// request cost 1, is read with the unit not known yet (0), and its rates
// as cost units per second.
const (
	pacerVersion  = 0x23
	pacerVersion2 = 0x22
)

// probeGain shapes the cubic curve above the ceiling: Recover after
// reaching it the rate is (1 + probeGain) × the ceiling.
var probeGain = 0.3

// pacerWords is the number of 8-byte words of the Pacer's state; version 2
// had one fewer, the unit, which comes last.
const pacerWords = 14

// pacerFlags are the bits of the flags byte: started, dark.
const pacerFlags = 1 | 2

// MarshalBinary encodes the Pacer's state, versioned.
func (p *Pacer) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, 2+8*pacerWords)
	b = append(b, pacerVersion)
	var flags byte
	if p.started {
		flags |= 1
	}
	if p.dark {
		flags |= 2
	}
	b = append(b, flags)
	for _, f := range []float64{p.rate, p.ceil, p.spell} {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
	}
	for _, v := range []int64{p.epoch, p.next, p.last, p.blocked, p.cutAt, p.cuts, p.held, p.asked, p.out, p.sent} {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(p.unit))
	return b, nil
}

// UnmarshalBinary restores state made by MarshalBinary, of this version or
// of the one before costs (whose unit is not known yet: it behaves as 1
// until a request with a cost sets it). Empty data resets the Pacer; data
// of another version or shape is refused with ErrState and leaves the
// Pacer reset.
func (p *Pacer) UnmarshalBinary(data []byte) error {
	cfg := p.cfg
	*p = Pacer{cfg: cfg}
	if len(data) == 0 {
		return nil
	}
	switch {
	case len(data) == 2+8*pacerWords && data[0] == pacerVersion:
	case len(data) == 2+8*(pacerWords-1) && data[0] == pacerVersion2:
	default:
		return ErrState
	}
	if data[1]&^pacerFlags != 0 {
		return ErrState
	}
	q := Pacer{cfg: cfg, started: data[1]&1 != 0, dark: data[1]&2 != 0}
	d := data[2:]
	f := func() float64 { v := math.Float64frombits(binary.LittleEndian.Uint64(d)); d = d[8:]; return v }
	i := func() int64 { v := int64(binary.LittleEndian.Uint64(d)); d = d[8:]; return v }
	q.rate, q.ceil, q.spell = f(), f(), f()
	q.epoch, q.next, q.last, q.blocked, q.cutAt, q.cuts, q.held, q.asked, q.out, q.sent = i(), i(), i(), i(), i(), i(), i(), i(), i(), i()
	if len(d) > 0 {
		q.unit = f()
	}
	// A unit is 0 (not known yet) or an average of costs of at least 1.
	if !(q.unit == 0 || q.unit >= 1 && q.unit <= maxUnit) {
		return ErrState
	}
	for _, v := range []float64{q.rate, q.ceil, q.spell} {
		if math.IsNaN(v) || v < 0 || v > maxRate {
			return ErrState
		}
	}
	if q.started && !(q.rate > 0) || q.cuts < 0 || q.held < 0 || q.asked < q.held || q.out < 0 {
		return ErrState
	}
	*p = q
	return nil
}

// Budget returns the cost units the Pacer would let through in
// [now, until] at its current rate: its unit (the typical cost of a
// request, rounded up; 1 until a request with a cost sets it) at the first
// slot, then rate × the time from that slot to until, rounded down. With
// every cost 1 that is the number of slots in [now, until]. While it
// probes a backend that rejected everything, the budget is one unit, and
// none while that probe is unanswered; it is none before a Retry-After
// ends.
func (p *Pacer) Budget(now, until time.Time) int {
	n, u := unixNanos(now), unixNanos(until)
	first := math.Ceil(p.typical())
	if !p.started {
		return satInt(first)
	}
	start := max(n, p.next, p.blocked)
	switch {
	case start > u:
		return 0
	case p.dark && p.out > 0:
		return 0
	case p.dark:
		return satInt(first)
	}
	return satInt(first + math.Floor(float64(u-start)*p.rate/1e9))
}

// satInt converts a non-negative whole float64 to an int, saturating at
// the largest int.
func satInt(f float64) int {
	if !(f < math.MaxInt) {
		return math.MaxInt
	}
	return int(f)
}

var _ Policy = (*Pacer)(nil)
