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
//     less RetryAfterSlack (Retry-After is commonly rounded up to whole
//     seconds).
//   - Idle time does not raise the rate: the curve advances only while
//     requests wait for their slot.
//
// The transform gives every group of a worker one Pacer (see [Shared]), so
// the worker's calls are one evenly spaced stream; groups with a Pacer each
// (PacerConfig.Groups) share a backend less well: see docs/sim/results.md.
//
// The zero value is not usable; make one with [NewPacer].
type Pacer struct {
	cfg PacerConfig

	started bool
	rate    float64 // requests per second, now
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
}

// PacerConfig configures a [Pacer]. Zero values mean the documented
// defaults.
type PacerConfig struct {
	// StartRate is the rate, in requests per second, at which slow start
	// begins. Zero means DefaultStartRate.
	StartRate float64
	// Beta is the share of the rate kept by the first decrease of a
	// congestion, in (0, 1). Zero means DefaultBeta.
	Beta float64
	// Recover is how long the cubic curve takes to climb back to the rate
	// before a decrease. Zero means DefaultRecover.
	Recover time.Duration
	// Backoff is the share of the rate kept by each further decrease
	// while the backend still rejects everything after one, in (0, 1].
	// Zero means DefaultBackoff.
	Backoff float64
	// MinRate is the lowest rate, in requests per second. Zero means
	// DefaultPacerMinRate.
	MinRate float64
	// Groups is how many groups, each with its own Pacer, share the
	// backend; zero means 1. Each probes more gently the more there are
	// (the cubic curve takes Groups × Recover to climb back), so that the
	// backend sees about as many probes from all of them together as from
	// one.
	Groups int
}

// Defaults of PacerConfig, chosen on the whole simulator suite
// (docs/sim/results.md), not on one scenario, and the Pacer's fixed
// bounds.
const (
	DefaultStartRate = 5.0
	DefaultBeta      = 0.9
	DefaultRecover   = 3 * time.Second
	DefaultBackoff   = 0.7
	// DefaultPacerMinRate is PacerConfig.MinRate's default: one request
	// every 5 seconds, so that a pacer keeps probing a backend that rejects
	// everything without Retry-After (an outage, a used-up quota window)
	// and finds it back within seconds, at a cost of at most 12 rejected
	// requests a minute.
	DefaultPacerMinRate = 1.0 / 5
	// RetryAfterSlack is subtracted from a Retry-After before the Pacer
	// honours it. HTTP's Retry-After is given in whole seconds, rounded up:
	// "1" means "somewhere within the next second", and waiting a whole
	// second after every 429 would idle a batch loop that runs once a
	// second. A Retry-After of a second or less therefore blocks nothing; a
	// long one, such as the end of a fixed quota window, saves the requests
	// that would certainly be rejected.
	RetryAfterSlack = time.Second
	// maxRate bounds the rate, in requests per second.
	maxRate = 1e12
)

// withDefaults fills zero fields.
func (c PacerConfig) withDefaults() PacerConfig {
	c.StartRate = cmp.Or(c.StartRate, DefaultStartRate)
	c.Beta = cmp.Or(c.Beta, DefaultBeta)
	c.Recover = cmp.Or(c.Recover, DefaultRecover)
	c.MinRate = cmp.Or(c.MinRate, DefaultPacerMinRate)
	c.Backoff = cmp.Or(c.Backoff, DefaultBackoff)
	c.Groups = cmp.Or(c.Groups, 1)
	return c
}

// Validate reports whether c, with defaults, describes a usable Pacer. The
// error names the field.
func (c PacerConfig) Validate() error {
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
	case d.Groups < 1 || d.Groups > 1<<20:
		return fmt.Errorf("adaptive: PacerConfig.Groups must be in [1, %d], got %d", 1<<20, c.Groups)
	}
	return nil
}

// NewPacer returns a Pacer, or an error naming the invalid field.
func NewPacer(cfg PacerConfig) (*Pacer, error) {
	if err := cfg.Validate(); err != nil {
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
	p.rate = p.cfg.StartRate
	p.epoch, p.next, p.last = n, n, n
}

// curve returns the rate at n.
func (p *Pacer) curve(n int64) float64 {
	t := float64(n-p.epoch) / 1e9
	if t < 0 {
		t = 0
	}
	if p.ceil == 0 { // slow start: doubling every second
		return min(p.cfg.StartRate*math.Exp2(t), maxRate)
	}
	x := t/(p.cfg.Recover.Seconds()*float64(p.cfg.Groups)) - 1
	a := 1 - p.cfg.Beta // below the ceiling: back from Beta·ceil
	if x > 0 {
		a = probeGain // above it: probing for more
	}
	r := p.ceil * (1 + a*x*x*x)
	return min(max(r, p.cfg.MinRate), maxRate)
}

// Decide lets the request through when its slot has come, or postpones it
// to its slot (or to the end of a Retry-After). It never rejects.
func (p *Pacer) Decide(now time.Time, _ int) Decision {
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
		// time, asking again a slot later.
		p.held++
		p.last = n
		return Decision{Verdict: Postpone, RetryAt: time.Unix(0, n+int64(1e9/p.rate)), Probability: p.share()}
	}
	// Time since the slot and since the last limited decision was idle:
	// shift the curve so that it does not climb while nothing waits.
	if idle := n - max(p.next, p.last); idle > 0 && p.asked > 1 {
		p.epoch += idle
	}
	if !p.dark { // while dark the rate stays where the last decrease left it
		p.rate = p.curve(n)
	}
	p.next = n + int64(1e9/p.rate) // no burst: the next slot is a full spacing away
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
		if ra := a.RetryAfter - RetryAfterSlack; ra > 0 {
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
		p.rate = max(r*cut, p.cfg.MinRate)
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
		p.next = min(p.next, n+int64(1e9/p.rate))
		p.dark, p.cuts = false, 0
	}
}

// Rate returns the current paced rate in requests per second (0 before
// the first event).
func (p *Pacer) Rate() float64 { return p.rate }

// pacerVersion is the version byte of the Pacer's state encoding.
const pacerVersion = 0x22 // high nibble: the policy (2, the pacer); low: the version

// probeGain shapes the cubic curve above the ceiling: Recover after
// reaching it the rate is (1 + probeGain) × the ceiling.
var probeGain = 0.3

// pacerWords is the number of 8-byte words of the Pacer's state.
const pacerWords = 13

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
	return b, nil
}

// UnmarshalBinary restores state made by MarshalBinary. Empty data resets
// the Pacer; data of another version or shape is refused with ErrState and
// leaves the Pacer reset.
func (p *Pacer) UnmarshalBinary(data []byte) error {
	cfg := p.cfg
	*p = Pacer{cfg: cfg}
	if len(data) == 0 {
		return nil
	}
	if len(data) != 2+8*pacerWords || data[0] != pacerVersion {
		return ErrState
	}
	q := Pacer{cfg: cfg, started: data[1]&1 != 0, dark: data[1]&2 != 0}
	d := data[2:]
	f := func() float64 { v := math.Float64frombits(binary.LittleEndian.Uint64(d)); d = d[8:]; return v }
	i := func() int64 { v := int64(binary.LittleEndian.Uint64(d)); d = d[8:]; return v }
	q.rate, q.ceil, q.spell = f(), f(), f()
	q.epoch, q.next, q.last, q.blocked, q.cutAt, q.cuts, q.held, q.asked, q.out, q.sent = i(), i(), i(), i(), i(), i(), i(), i(), i(), i()
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

var _ Policy = (*Pacer)(nil)
