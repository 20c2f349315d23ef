package throttle

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/beamthrottle/beamthrottle/internal/defaults"
	"github.com/beamthrottle/beamthrottle/transforms/throttle/quota"
)

// quotaTally counts what a permit pool did and has not reported to Beam
// yet: a probe may end after the bundle that began it, so the next permit
// reports it.
type quotaTally struct {
	requests, allowed, limited, errors, permits, lapsed, down int64
	missed, released                                          int64
}

// report adds t to the Beam metrics of ctx's bundle.
func (t quotaTally) report(ctx context.Context) {
	for _, c := range []struct {
		c beam.Counter
		n int64
	}{
		{quotaRequests, t.requests}, {quotaAllowed, t.allowed}, {quotaLimited, t.limited},
		{quotaErrors, t.errors}, {quotaPermits, t.permits}, {quotaLapsed, t.lapsed}, {quotaDown, t.down},
		{quotaMissed, t.missed}, {quotaReleased, t.released},
	} {
		if c.n != 0 {
			c.c.Inc(ctx, c.n)
		}
	}
}

// permitPool holds the permits a worker took from the shared quota and has
// not spent yet, for all the groups of a transform on the worker: a firing
// that needs a permit takes one from the pool, and asks the quota for a
// batch when the pool is empty. Permits left over by one firing are spent by
// the next, of any group, so none is lost; except with a quota counted in
// fixed windows (quota.Windowed), whose permits lapse at the end of their
// window.
//
// The pool never holds its lock during a round trip to the service, and
// makes one at a time (see breaker): while the service answers, a firing
// that needs permits during another's round trip waits for its answer;
// once a round trip fails (an error, or no answer within the timeout), the
// service is down and every firing decides at once without it, failing
// open or closed, until a probe, one per back-off, finds it answering
// again. A probe runs in the background: the firing that starts it does
// not wait for it either, and the permits it brings go to the pool.
//
// The zero value, with cfg and q set, is ready to use; it is safe for
// concurrent use.
type permitPool struct {
	cfg     QuotaConfig
	q       quota.Quota
	r       quota.Reserver   // q, if the quota hands out time slots; else nil
	rate    float64          // with r: the quota's rate, in cost units per second
	spacing time.Duration    // with r: the time between the quota's slots
	clock   func() time.Time // the wall clock (of the back-off, and of the time round trips take); nil means time.Now

	probes sync.WaitGroup // probes under way

	mu       sync.Mutex
	have     int           // permits granted and not spent
	lapse    time.Time     // when they lapse; zero if never
	retryAt  [3]time.Time  // by tier (tierLow first): the quota said no permits before then
	tiers    bool          // the quota keeps shares for tiers: reserve and claim by tier
	health   breaker       // whether the service answers
	answered chan struct{} // closed when the round trip under way ends; nil if none
	tally    quotaTally    // not reported yet
	slots    slotLedger    // with r: the slots reserved and not claimed
	active   int           // with r: firings under way (begin, end)
}

// permission is a permit pool's answer to a call asking for permits.
type permission struct {
	ok      bool      // the call may be sent
	paid    bool      // with cost permits of the quota, reserved until settle
	cost    int       // the call's cost
	slot    claim     // paid, with a quota of time slots: the call's slot
	retryAt time.Time // when not ok: when to ask again
}

// permit reserves cost permits at now (a call's cost, in cost units) for
// a call of the given priority tier, asking the quota for want (at least
// what is missing) when the pool holds fewer. With shares kept for tiers
// (QuotaConfig.HighShare), slots are reserved for the call's tier and a
// call claims only slots reserved for its tier or a lower one; without,
// the tier does not matter. Permits granted short of cost stay in the pool for the next ask,
// so a call costing more than the quota grants at once (Redis's burst) is
// sent once enough have come. It answers ok (paid: the permits are
// reserved), or when to ask again. While the service is down it fails open
// (ok, not paid) or closed (ask again after retry) at once, as configured.
// Every permission that is ok is settled once the call is decided.
func (p *permitPool) permit(ctx context.Context, now time.Time, tier, cost, want int, retry time.Duration) permission {
	var (
		perm permission
		note string // a change of the service's state, to log
		warn bool
	)
	if !p.tiers {
		tier = tierNormal
	}
	tier = tierOf(tier)
	clock := callerClock{now: now, wall: p.now(), read: p.now}
	p.mu.Lock()
	for {
		// The caller's clock as it is now: after a wait for another's round
		// trip or one's own, slots that passed meanwhile lapse, and are not
		// handed out late.
		now := clock.current()
		if p.r != nil {
			p.tally.lapsed += int64(p.slots.expire(now))
			if c, ok := p.slots.claim(cost, tier); ok {
				perm = permission{ok: true, paid: true, cost: cost, slot: c}
				break
			}
		} else {
			if p.have > 0 && !p.lapse.IsZero() && !now.Before(p.lapse) {
				p.tally.lapsed += int64(p.have)
				p.have = 0
			}
			if p.have >= cost {
				p.have -= cost
				perm = permission{ok: true, paid: true, cost: cost}
				break
			}
		}
		if at := p.retryAt[tier-tierLow]; now.Before(at) {
			perm = permission{retryAt: at}
			break
		}
		ask := max(want, cost) - p.have
		step := p.health.next(p.now())
		if step == stepWait {
			if !p.waitAnswer(ctx) {
				perm = permission{retryAt: now.Add(retry)}
				break
			}
			continue
		}
		if step == stepSkip {
			perm = p.without(cost, now, retry)
			break
		}
		p.answered = make(chan struct{})
		p.tally.requests++
		if step == stepProbe {
			p.probes.Add(1)
			go p.probe(context.WithoutCancel(ctx), ask, tier, clock, retry)
			perm = p.without(cost, now, retry)
			break
		}
		p.mu.Unlock()
		g, err := p.take(ctx, ask, tier, clock)
		p.mu.Lock()
		if err != nil && ctx.Err() != nil { // the caller gave up, not the service
			p.tally.errors++
			p.health.abandon()
			p.endRoundTrip()
			perm = permission{retryAt: now.Add(retry)}
			break
		}
		if note, warn = p.record(now, ask, retry, g, err); err != nil {
			perm = p.without(cost, now, retry)
			break
		}
	}
	if perm.paid && p.r != nil && want > cost && p.slots.empty() {
		if n, w := p.reserveAhead(ctx, clock, tier, want-cost, retry); n != "" {
			note, warn = n, w
		}
	}
	t := p.tally
	p.tally = quotaTally{}
	p.mu.Unlock()
	t.report(ctx)
	p.log(ctx, note, warn)
	return perm
}

// waitAnswer waits, with p.mu held on entry and on return, for the round
// trip under way to end. It reports false if ctx ended first.
func (p *permitPool) waitAnswer(ctx context.Context) bool {
	answered := p.answered
	p.mu.Unlock()
	defer p.mu.Lock()
	select {
	case <-answered:
		return true
	case <-ctx.Done():
		return false
	}
}

// without answers a call for cost permits when the service is down: send
// it without permits (failing open), or ask again after retry (closed).
func (p *permitPool) without(cost int, now time.Time, retry time.Duration) permission {
	if p.cfg.FailOpen {
		return permission{ok: true, cost: cost}
	}
	return permission{retryAt: now.Add(retry)}
}

// probe makes a round trip to check a service that was down, for ask
// permits of tier at now, and records its outcome; its counts are reported
// by the next permit.
func (p *permitPool) probe(ctx context.Context, ask, tier int, clock callerClock, retry time.Duration) {
	defer p.probes.Done()
	now := clock.now
	g, err := p.take(ctx, ask, tier, clock)
	p.mu.Lock()
	note, warn := p.record(now, ask, retry, g, err)
	p.mu.Unlock()
	p.log(ctx, note, warn)
}

// grant is what one round trip to the service brought for a tier: a
// count of permits, or, with a quota of time slots, the slots of res.
type grant struct {
	quota.Grant
	res  quota.Reservation
	tier int
}

// callerClock is the clock of a caller of permit: its now, read when the
// wall clock read wall. A round trip made later (after waiting for the
// pool's lock or for another round trip, or in a probe) is asked at the
// caller's now plus the wall time since, so that the slots it brings are
// placed where they belong on the caller's clock, not early by the wait.
type callerClock struct {
	now, wall time.Time
	read      func() time.Time // the wall clock (the pool's)
}

// current is the caller's clock now.
func (c callerClock) current() time.Time { return c.now.Add(c.read().Sub(c.wall)) }

// take makes one round trip to the service, bounded by the timeout: Take
// n permits, or Reserve n units of slots for tier, at the caller's clock
// as it is when the round trip starts.
func (p *permitPool) take(ctx context.Context, n, tier int, clock callerClock) (grant, error) {
	ctx, cancel := context.WithTimeout(ctx, p.timeout())
	defer cancel()
	now := clock.current()
	if p.r != nil {
		res, err := p.r.ReserveTier(ctx, p.cfg.Key, tier, n, now)
		return grant{Grant: quota.Grant{Granted: res.Granted, RetryAt: res.RetryAt}, res: res, tier: tier}, err
	}
	g, err := p.q.Take(ctx, p.cfg.Key, n, now)
	return grant{Grant: g, tier: tier}, err
}

// record records, with p.mu held, the outcome of the round trip under way,
// which asked for ask permits at now: the service's health, and the permits
// granted (when fewer, no more are asked for the grant's tier and those
// below it before the service's RetryAt, or before retry if it gave
// none). It returns a line to log when the service went down or came
// back (warn: it went down).
func (p *permitPool) record(now time.Time, ask int, retry time.Duration, g grant, err error) (note string, warn bool) {
	p.endRoundTrip()
	if err != nil {
		p.tally.errors++
		if !p.health.done(p.now(), false) {
			return "", false
		}
		p.tally.down++
		return fmt.Sprintf("throttle: shared quota (%s at %s) did not answer, failing %s without it and asking again in %v, then less often: %v",
			p.cfg.Backend, p.cfg.Addr, map[bool]string{true: "open", false: "closed"}[p.cfg.FailOpen], p.health.backoff, err), true
	}
	if p.health.done(p.now(), true) {
		note = fmt.Sprintf("throttle: shared quota (%s at %s) answers again", p.cfg.Backend, p.cfg.Addr)
	}
	p.tally.permits += int64(g.Granted)
	if g.Granted >= ask {
		p.tally.allowed++
	} else {
		p.tally.limited++
		at := g.RetryAt
		if !at.After(now) {
			at = now.Add(retry)
		}
		for t := tierLow; t <= g.tier; t++ {
			p.retryAt[t-tierLow] = at
		}
	}
	switch {
	case g.Granted <= 0:
	case p.r != nil:
		p.slots.add(g.res, g.tier)
	default:
		p.have += g.Granted
		p.lapse = p.windowEnd(now)
	}
	return note, false
}

// windowEnd returns when permits granted at now lapse, or the zero Time if
// they do not (or it is not known yet).
func (p *permitPool) windowEnd(now time.Time) time.Time {
	if w, ok := p.q.(quota.Windowed); ok {
		return w.WindowEnd(p.cfg.Key, now)
	}
	return time.Time{}
}

// settle ends perm, once the policy decided whether to send the call:
// permits reserved for a call not sent go back to the pool; a call sent
// without permits (failing open) is counted.
func (p *permitPool) settle(ctx context.Context, perm permission, sent bool) {
	switch {
	case perm.paid && !sent && p.r != nil:
		p.mu.Lock()
		p.slots.giveBack(perm.slot)
		p.mu.Unlock()
	case perm.paid && !sent:
		p.unspend(perm.cost)
	case perm.ok && !perm.paid && sent:
		quotaFailedOpen.Inc(ctx, 1)
	}
}

// unspend returns cost permits reserved by permit and not used.
func (p *permitPool) unspend(cost int) {
	p.mu.Lock()
	p.have += cost
	p.mu.Unlock()
}

// endRoundTrip tells, with p.mu held, whoever waits for the round trip
// under way that it ended.
func (p *permitPool) endRoundTrip() {
	close(p.answered)
	p.answered = nil
}

// now reads the clock of the back-off.
func (p *permitPool) now() time.Time {
	if p.clock != nil {
		return p.clock()
	}
	return time.Now()
}

// log logs note, if any: a warning if warn.
func (p *permitPool) log(ctx context.Context, note string, warn bool) {
	switch {
	case note == "":
	case warn:
		log.Warn(ctx, note)
	default:
		log.Info(ctx, note)
	}
}

func (p *permitPool) timeout() time.Duration {
	if p.cfg.Timeout > 0 {
		return p.cfg.Timeout
	}
	return defaults.QuotaTimeout
}

// workerPools holds the permit pools of the transforms running in this
// process with a shared quota, one per transform (by throttleFn.ID).
var workerPools = &registry[*permitPool]{m: map[string]*shared[*permitPool]{}}

// acquirePool returns the permit pool of the transform id, connecting to the
// quota's service if it is the first.
func acquirePool(id string, cfg QuotaConfig) (*permitPool, error) {
	return workerPools.acquire(id, func() (*permitPool, error) {
		q, err := cfg.newQuota()
		if err != nil {
			return nil, fmt.Errorf("throttle: shared quota: %w", err)
		}
		return newPermitPool(cfg, q), nil
	})
}

// releasePool drops a reference to the pool of id, and closes its
// connection with the last one, once its probe, if any, has ended.
func releasePool(id string) {
	p, last := workerPools.release(id)
	if !last {
		return
	}
	if c, ok := p.q.(io.Closer); ok {
		c.Close() // which ends a probe under way
	}
	p.probes.Wait()
}
