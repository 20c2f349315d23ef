// Package permits is a shared quota's permits as a worker holds them,
// written once as a state machine with no I/O of its own: no goroutines, no
// clock, no network, no lock. Fed the time and the answers of the quota's
// service, a Pool says, for each call that needs permits, whether to grant
// them from what the worker holds, to make a round trip to the service
// first, to wait for another's round trip, to ask again later, or, while
// the service is down, to send without permits (failing open) or not
// (failing closed). The transform's DoFn drives a Pool under its lock,
// with real round trips; the simulator drives the same type with a
// modelled service, on its virtual clock.
//
// A Pool holds permits for all the groups of a transform on a worker: a
// count of permits (which lapse at the end of their window with a quota
// counted in fixed windows), or, with a quota of time slots, the slots
// reserved and not claimed yet. It makes one round trip at a time, and
// keeps the service's health (see breaker): once a round trip fails,
// every call decides at once without the service until a probe, one per
// back-off, finds it answering again.
package permits

import (
	"time"

	"github.com/beamthrottle/beamthrottle/transforms/throttle/quota"
)

// The priority tiers of calls, as Permit takes them.
const (
	tierLow    = -1
	tierNormal = 0
	tierHigh   = 1
)

// Config is what a Pool is made with.
type Config struct {
	// FailOpen: while the service is down, send without permits;
	// otherwise ask again after the retry Permit is given.
	FailOpen bool
	// Tiers: the quota keeps shares for priority tiers, so slots are
	// reserved and claimed by tier; otherwise the tier does not matter.
	Tiers bool
	// Slots makes the quota one of time slots (a quota.Reserver), Spacing
	// apart (0 if not known); otherwise it is a count of permits.
	Slots   bool
	Spacing time.Duration
	// Capacity bounds, with slots, the units one reservation can grant;
	// 0 means no bound.
	Capacity int
	// WindowEnd returns when permits granted at now lapse (a quota
	// counted in fixed windows, quota.Windowed), or the zero Time if they
	// do not; nil means they do not.
	WindowEnd func(now time.Time) time.Time
}

// AtRate returns c for a quota of time slots at r: Slots, the spacing of
// r's slots, and the most units one reservation can grant with the
// default lead and horizon (quota.DefaultLead, quota.DefaultHorizon).
func (c Config) AtRate(r quota.Rate) Config {
	c.Slots = true
	c.Spacing = max(r.Per/time.Duration(r.N), 1)
	c.Capacity = int((quota.DefaultHorizon-quota.DefaultLead)/c.Spacing) + 1
	return c
}

// Kind is what a Pool says about a call asking for permits.
type Kind int

// The kinds of Permission.
const (
	// Granted: the call has its permits (with slots, its Slot), reserved
	// until Settle.
	Granted Kind = iota
	// Ask: make the round trip Trip, report it with Answered, then ask
	// again.
	Ask
	// Join: another round trip is under way; wait for its end, then ask
	// again.
	Join
	// Refused: no permits before RetryAt.
	Refused
	// Open: the service is down and the pool fails open: send without
	// permits.
	Open
)

// Permission is a Pool's answer to a call asking for permits.
type Permission struct {
	Kind    Kind
	Cost    int       // the call's cost
	Slot    Claim     // Granted, with slots: the call's slot
	RetryAt time.Time // Refused: when to ask again
	// Trip is the round trip to make: with Ask, before asking again; with
	// Granted (slots reserved ahead, when the call took the last slot the
	// worker held), before the call goes on; with Open or Refused (a probe
	// of a service that is down), in the background, not waited for. Its
	// N is 0 if there is none.
	Trip Request
}

// OK reports whether the call may be sent.
func (p Permission) OK() bool { return p.Kind == Granted || p.Kind == Open }

// Paid reports whether the call's permits are reserved until Settle.
func (p Permission) Paid() bool { return p.Kind == Granted }

// Request is a round trip to the quota's service.
type Request struct {
	At    time.Time // the caller's clock when the pool asked for it
	N     int       // permits, or units of slots, to ask for
	Tier  int       // the priority tier they are for
	Probe bool      // it checks a service that is down: nobody waits for it
}

// Grant is what one round trip brought: a count of permits, or, with
// slots, the reservation Res (Granted and RetryAt as Res's).
type Grant struct {
	quota.Grant
	Res quota.Reservation
}

// Change is a change of the service's state that a round trip's end
// brought, for the driver to log.
type Change int

// The changes.
const (
	Unchanged Change = iota
	Down             // the service went down: a round trip failed after an answer, or first
	Up               // it answers again
)

// Tally counts what a Pool did and has not reported yet (Pool.Tally).
type Tally struct {
	Requests, Allowed, Limited, Errors, Permits, Lapsed, Down int64
	Missed, Released                                          int64
}

// Pool is a worker's permits of a shared quota (see the package
// documentation). Make one with New. It is not safe for concurrent use: a
// driver calls it under its own lock.
type Pool struct {
	cfg     Config
	have    int          // permits granted and not spent
	lapse   time.Time    // when they lapse; zero if never
	retryAt [3]time.Time // by tier (tierLow first): the quota said no permits before then
	health  breaker      // whether the service answers
	slots   slotLedger   // with slots: reserved and not claimed
	active  int          // with slots: firings under way (Begin, End)
	tally   Tally        // not reported yet
}

// New returns an empty Pool for cfg.
func New(cfg Config) *Pool {
	p := &Pool{cfg: cfg}
	if cfg.Slots && cfg.Spacing > 0 {
		p.slots.capacity = cfg.Capacity
		p.slots.late = tolerance(cfg.Spacing)
	}
	return p
}

// Slotted reports whether the quota hands out time slots.
func (p *Pool) Slotted() bool { return p.cfg.Slots }

// SlotsWithin returns how many of the quota's slots fit in d; 0 without
// slots.
func (p *Pool) SlotsWithin(d time.Duration) int {
	if !p.cfg.Slots || p.cfg.Spacing <= 0 {
		return 0
	}
	return int(d / p.cfg.Spacing)
}

// Tolerance returns how late a call may still be sent on its slot.
func (p *Pool) Tolerance() time.Duration { return p.slots.tolerance() }

// WindowEnd returns when permits granted at now lapse, or the zero Time.
func (p *Pool) WindowEnd(now time.Time) time.Time {
	if p.cfg.WindowEnd == nil {
		return time.Time{}
	}
	return p.cfg.WindowEnd(now)
}

// Backoff returns, while the service is down, how long it is left alone
// after its last failure.
func (p *Pool) Backoff() time.Duration { return p.health.backoff }

// Permit answers, at now on the caller's clock and wall on the clock of
// the back-off, a call of priority tier tier asking for cost permits: from
// what the worker holds, or by asking the service for want (at least what
// is missing). With shares kept for tiers (Config.Tiers), slots are
// reserved for the call's tier and a call claims only slots reserved for
// its tier or a lower one. Permits granted short of cost stay for the next
// ask, so a call costing more than the quota grants at once is sent once
// enough have come. While the service is down it fails open or closed (ask
// again after retry) at once. When it says Ask or starts a probe, the
// round trip is deemed begun: every other call is told Join or decides
// without the service until Answered or Abandoned. Every Permission that
// is Granted is settled once the call is decided.
func (p *Pool) Permit(now, wall time.Time, tier, cost, want int, retry time.Duration) Permission {
	if !p.cfg.Tiers {
		tier = tierNormal
	}
	tier = min(max(tier, tierLow), tierHigh)
	if p.Slotted() {
		p.tally.Lapsed += int64(p.slots.expire(now))
		if c, ok := p.slots.claim(cost, tier); ok {
			perm := Permission{Kind: Granted, Cost: cost, Slot: c}
			if want > cost && p.slots.empty() {
				perm.Trip = p.ahead(now, wall, tier, want-cost)
			}
			return perm
		}
	} else {
		if p.have > 0 && !p.lapse.IsZero() && !now.Before(p.lapse) {
			p.tally.Lapsed += int64(p.have)
			p.have = 0
		}
		if p.have >= cost {
			p.have -= cost
			return Permission{Kind: Granted, Cost: cost}
		}
	}
	if at := p.retryAt[tier-tierLow]; now.Before(at) {
		return Permission{Kind: Refused, Cost: cost, RetryAt: at}
	}
	trip := Request{At: now, N: max(want, cost) - p.have, Tier: tier}
	switch p.health.next(wall) {
	case stepWait:
		return Permission{Kind: Join, Cost: cost}
	case stepSkip:
		return p.without(cost, now, retry)
	case stepProbe:
		p.tally.Requests++
		perm := p.without(cost, now, retry)
		trip.Probe = true
		perm.Trip = trip
		return perm
	}
	p.tally.Requests++
	return Permission{Kind: Ask, Cost: cost, Trip: trip}
}

// ahead returns the round trip that reserves n more units at now, when a
// call just took the last slot the worker held: the quota's TAT then still
// stands where that slot ends, so the new slots follow on from it, instead
// of starting a lead after the next call's now, which would idle the quota
// for part of a lead at every reservation. It asks only while the service
// is up and no round trip is under way; otherwise (N 0) the next call
// reserves as usual.
func (p *Pool) ahead(now, wall time.Time, tier, n int) Request {
	if p.health.down || p.health.inFlight || now.Before(p.retryAt[tier-tierLow]) {
		return Request{}
	}
	p.health.next(wall) // stepCall: the service is up and idle
	p.tally.Requests++
	return Request{At: now, N: n, Tier: tier}
}

// without answers a call for cost permits when the service is down: send
// it without permits (failing open), or ask again after retry (closed).
func (p *Pool) without(cost int, now time.Time, retry time.Duration) Permission {
	if p.cfg.FailOpen {
		return Permission{Kind: Open, Cost: cost}
	}
	return Permission{Kind: Refused, Cost: cost, RetryAt: now.Add(retry)}
}

// Answered records the end, at wall on the clock of the back-off, of the
// round trip r: answered with g, or failed with err (an error, or no
// answer within the timeout). It records the service's health, and the
// permits granted: when fewer than asked, no more are asked for r's tier
// and those below it before the service's RetryAt, or before retry if it
// gave none.
func (p *Pool) Answered(r Request, wall time.Time, g Grant, err error, retry time.Duration) Change {
	if err != nil {
		p.tally.Errors++
		if !p.health.done(wall, false) {
			return Unchanged
		}
		p.tally.Down++
		return Down
	}
	ch := Unchanged
	if p.health.done(wall, true) {
		ch = Up
	}
	p.tally.Permits += int64(g.Granted)
	if g.Granted >= r.N {
		p.tally.Allowed++
	} else {
		p.tally.Limited++
		at := g.RetryAt
		if !at.After(r.At) {
			at = r.At.Add(retry)
		}
		for t := tierLow; t <= r.Tier; t++ {
			p.retryAt[t-tierLow] = at
		}
	}
	switch {
	case g.Granted <= 0:
	case p.Slotted():
		p.slots.add(g.Res, r.Tier)
	default:
		p.have += g.Granted
		p.lapse = p.WindowEnd(r.At)
	}
	return ch
}

// Abandoned records the end of the round trip under way without an
// outcome: its caller gave up, not the service.
func (p *Pool) Abandoned() {
	p.tally.Errors++
	p.health.abandon()
}

// Settle ends perm, once the policy decided whether to send the call:
// permits reserved for a call not sent go back to the pool.
func (p *Pool) Settle(perm Permission, sent bool) {
	switch {
	case !perm.Paid() || sent:
	case p.Slotted():
		p.slots.giveBack(perm.Slot)
	default:
		p.have += perm.Cost
	}
}

// Missed drops a slot a call got to too late (see tolerance).
func (p *Pool) Missed(perm Permission) { p.tally.Missed += int64(perm.Slot.units) }

// Begin counts a firing under way, for End.
func (p *Pool) Begin() { p.active++ }

// Release is a reservation's tail to give back to the quota's service:
// Left units of Res, unclaimed.
type Release struct {
	Res  quota.Reservation
	Left int
}

// End ends a firing that began, at now, and gives back the slot it held,
// if any (held, paid and not settled). When no other firing of the worker
// is under way, it returns the slots the worker reserved and no call
// claimed, for the driver to give back to the quota (see Released), if
// nobody reserved after them (else they lapse), so that the worker holds
// no slots while its groups wait or have nothing to send. Nothing is
// given back while the service is down or a round trip is under way; the
// slots then lapse.
func (p *Pool) End(now time.Time, held Permission) (Release, bool) {
	if !p.Slotted() {
		return Release{}, false
	}
	p.active--
	if held.Paid() {
		p.slots.giveBack(held.Slot)
	}
	p.tally.Lapsed += int64(p.slots.expire(now))
	if p.active != 0 || p.health.down || p.health.inFlight {
		return Release{}, false
	}
	run, ok := p.slots.tail(now)
	return Release{Res: run.res, Left: run.left}, ok
}

// Released records that the service took back back units of r (err: it
// failed to); the rest lapse.
func (p *Pool) Released(r Release, back int, err error) {
	if err != nil {
		p.tally.Errors++
	}
	p.tally.Released += int64(back)
	p.tally.Lapsed += int64(r.Left - back)
}

// Have returns the permits the worker holds, of a count of permits.
func (p *Pool) Have() int { return p.have }

// Tally returns what the pool counted since the last Tally.
func (p *Pool) Tally() Tally {
	t := p.tally
	p.tally = Tally{}
	return t
}

// Lapse returns when the permits the worker holds lapse, or the zero Time.
func (p *Pool) Lapse() time.Time { return p.lapse }
