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
	"github.com/beamthrottle/beamthrottle/internal/firing"
	"github.com/beamthrottle/beamthrottle/internal/permits"
	"github.com/beamthrottle/beamthrottle/transforms/throttle/quota"
)

// reportTally adds what a permit pool counted and has not reported yet to
// the Beam metrics of ctx's bundle: a probe may end after the bundle that
// began it, so the next ask reports it.
func reportTally(ctx context.Context, t permits.Tally) {
	for _, c := range []struct {
		c beam.Counter
		n int64
	}{
		{quotaRequests, t.Requests}, {quotaAllowed, t.Allowed}, {quotaLimited, t.Limited},
		{quotaErrors, t.Errors}, {quotaPermits, t.Permits}, {quotaLapsed, t.Lapsed}, {quotaDown, t.Down},
		{quotaMissed, t.Missed}, {quotaReleased, t.Released},
	} {
		if c.n != 0 {
			c.c.Inc(ctx, c.n)
		}
	}
}

// permitPool is the DoFn's driver of a worker's permits of the shared
// quota (a permits.Pool), for all the groups of a transform on the worker:
// the rule (what the worker holds, when to ask the service, the service's
// health) is the machine's; this side keeps the concurrency and the I/O.
// It holds one lock around the machine, never during a round trip; makes
// the round trips the machine asks for, one at a time (a firing that must
// wait for another's round trip waits for answered); and runs the probe of
// a service that is down in the background, its permits going to the
// machine.
//
// The zero value is not usable: make one with newPermitPool. It is safe
// for concurrent use.
type permitPool struct {
	cfg   QuotaConfig
	q     quota.Quota
	r     quota.Reserver   // q, if the quota hands out time slots; else nil
	rate  float64          // with r: the quota's rate, in cost units per second
	clock func() time.Time // the wall clock (of the back-off, and of the time round trips take); nil means time.Now

	probes sync.WaitGroup // probes under way

	mu       sync.Mutex
	m        *permits.Pool
	answered chan struct{} // closed when the round trip under way ends; nil if none
}

// ask asks the machine, at now on the caller's clock, for cost permits of
// tier for a call, want if it asks the service (see permits.Pool.Permit);
// it starts the probe the machine asks for, and reports the machine's
// counts.
func (p *permitPool) ask(ctx context.Context, now time.Time, tier, cost, want int, retry time.Duration) permits.Permission {
	p.mu.Lock()
	perm := p.m.Permit(now, p.now(), tier, cost, want, retry)
	if perm.Trip.N > 0 {
		p.answered = make(chan struct{})
		if perm.Trip.Probe {
			p.probes.Add(1)
			go p.probe(context.WithoutCancel(ctx), perm.Trip, p.now(), retry)
		}
	}
	t := p.m.Tally()
	p.mu.Unlock()
	reportTally(ctx, t)
	return perm
}

// trip carries out, at now on the caller's clock, the round trip perm asks
// the caller to wait for: another's (Join), or its own. It reports false if
// ctx ended first (the caller gave up, not the service).
func (p *permitPool) trip(ctx context.Context, perm permits.Permission, now time.Time) (permits.Grant, error, bool) {
	if perm.Kind == permits.Join {
		return permits.Grant{}, nil, p.waitAnswer(ctx)
	}
	g, err := p.take(ctx, perm.Trip, now)
	return g, err, err == nil || ctx.Err() == nil
}

// answer records the end of the round trip perm asked for: g or err, or
// abandoned if the caller gave up.
func (p *permitPool) answer(ctx context.Context, perm permits.Permission, g permits.Grant, err error, gaveUp bool, retry time.Duration) {
	if perm.Kind == permits.Join {
		return
	}
	p.mu.Lock()
	var ch permits.Change
	if gaveUp {
		p.m.Abandoned()
	} else {
		ch = p.m.Answered(perm.Trip, p.now(), g, err, retry)
	}
	p.endRoundTrip()
	t := p.m.Tally()
	backoff := p.m.Backoff()
	p.mu.Unlock()
	reportTally(ctx, t)
	p.log(ctx, ch, backoff, err)
}

// waitAnswer waits for the round trip under way to end. It reports false
// if ctx ended first.
func (p *permitPool) waitAnswer(ctx context.Context) bool {
	p.mu.Lock()
	answered := p.answered
	p.mu.Unlock()
	if answered == nil {
		return true
	}
	select {
	case <-answered:
		return true
	case <-ctx.Done():
		return false
	}
}

// probe makes the round trip r to check a service that was down, begun at
// start on the caller's clock, and records its outcome; its counts are
// reported by the next ask.
func (p *permitPool) probe(ctx context.Context, r permits.Request, start time.Time, retry time.Duration) {
	defer p.probes.Done()
	g, err := p.take(ctx, r, r.At.Add(p.now().Sub(start)))
	p.mu.Lock()
	ch := p.m.Answered(r, p.now(), g, err, retry)
	p.endRoundTrip()
	backoff := p.m.Backoff()
	p.mu.Unlock()
	p.log(ctx, ch, backoff, err)
}

// take makes one round trip to the service, bounded by the timeout: Take
// r.N permits, or Reserve r.N units of slots for r.Tier, at now on the
// caller's clock.
func (p *permitPool) take(ctx context.Context, r permits.Request, now time.Time) (permits.Grant, error) {
	ctx, cancel := context.WithTimeout(ctx, p.timeout())
	defer cancel()
	if p.r != nil {
		res, err := p.r.ReserveTier(ctx, p.cfg.Key, r.Tier, r.N, now)
		return permits.Grant{Grant: quota.Grant{Granted: res.Granted, RetryAt: res.RetryAt}, Res: res}, err
	}
	g, err := p.q.Take(ctx, p.cfg.Key, r.N, now)
	return permits.Grant{Grant: g}, err
}

// settle ends perm, once the policy decided whether to send the call:
// permits reserved for a call not sent go back to the pool; a call sent
// without permits (failing open) is counted.
func (p *permitPool) settle(ctx context.Context, perm permits.Permission, sent bool) {
	if perm.Kind == permits.Open && sent {
		quotaFailedOpen.Inc(ctx, 1)
	}
	p.mu.Lock()
	p.m.Settle(perm, sent)
	p.mu.Unlock()
}

// endRoundTrip tells, with p.mu held, whoever waits for the round trip
// under way that it ended.
func (p *permitPool) endRoundTrip() {
	if p.answered != nil {
		close(p.answered)
		p.answered = nil
	}
}

// now reads the clock of the back-off.
func (p *permitPool) now() time.Time {
	if p.clock != nil {
		return p.clock()
	}
	return time.Now()
}

// log logs a change of the service's state: a warning when it went down
// (err, backoff the machine's), a note when it answers again.
func (p *permitPool) log(ctx context.Context, ch permits.Change, backoff time.Duration, err error) {
	switch ch {
	case permits.Down:
		log.Warn(ctx, fmt.Sprintf("throttle: shared quota (%s at %s) did not answer, failing %s without it and asking again in %v, then less often: %v",
			p.cfg.Backend, p.cfg.Addr, map[bool]string{true: "open", false: "closed"}[p.cfg.FailOpen], backoff, err))
	case permits.Up:
		log.Info(ctx, fmt.Sprintf("throttle: shared quota (%s at %s) answers again", p.cfg.Backend, p.cfg.Addr))
	}
}

func (p *permitPool) timeout() time.Duration {
	if p.cfg.Timeout > 0 {
		return p.cfg.Timeout
	}
	return defaults.QuotaTimeout
}

// poolQuota is the worker's permit pool as the core asks it: Permit asks
// the pool's machine, and the round trips it asks for are the core's steps
// (AskQuota), which the driver makes through roundTrip.
type poolQuota struct {
	pool  *permitPool
	ctx   context.Context
	retry time.Duration // when to ask again while the service is down and failing closed
}

func (q *poolQuota) Permit(now time.Time, tier, cost, want int) firing.Permit {
	p := q.pool.ask(q.ctx, now, tier, cost, want, q.retry)
	ask := p.Kind == permits.Ask || p.Kind == permits.Join || p.Kind == permits.Granted && p.Trip.N > 0
	return firing.Permit{OK: p.OK(), Paid: p.Paid(), At: p.Slot.At(), RetryAt: p.RetryAt, Token: p, Ask: ask}
}

// roundTrip makes, at now, the round trip a permit of the pool asked for
// (firing.AskQuota), or waits for another's, and returns its answer.
func (q *poolQuota) roundTrip(ctx context.Context, now time.Time, fp firing.Permit) firing.QuotaAnswer {
	g, err, ok := q.pool.trip(ctx, fp.Token.(permits.Permission), now)
	if !ok {
		return firing.QuotaAnswer{Err: err, RetryAt: now.Add(q.retry)}
	}
	return firing.QuotaAnswer{Answer: g, Err: err}
}

func (q *poolQuota) Record(_ time.Time, fp firing.Permit, a firing.QuotaAnswer) {
	g, _ := a.Answer.(permits.Grant)
	q.pool.answer(q.ctx, fp.Token.(permits.Permission), g, a.Err, !a.RetryAt.IsZero(), q.retry)
}

func (q *poolQuota) Settle(p firing.Permit, sent bool) {
	q.pool.settle(q.ctx, p.Token.(permits.Permission), sent)
}

func (q *poolQuota) Missed(p firing.Permit) { q.pool.missed(p.Token.(permits.Permission)) }

func (q *poolQuota) Slots(d time.Duration) (int, time.Duration, bool) {
	if q.pool.r == nil {
		return 0, 0, false
	}
	q.pool.mu.Lock()
	defer q.pool.mu.Unlock()
	return q.pool.m.SlotsWithin(d), q.pool.m.Tolerance(), true
}

func (q *poolQuota) WindowEnd(now time.Time) time.Time {
	q.pool.mu.Lock()
	defer q.pool.mu.Unlock()
	return q.pool.m.WindowEnd(now)
}

// quotaTripper is a shared quota whose round trips the DoFn's driver makes
// (firing.AskQuota): poolQuota, or a test's.
type quotaTripper interface {
	roundTrip(ctx context.Context, now time.Time, p firing.Permit) firing.QuotaAnswer
}

// askQuota carries out the core's step s, at now: the round trip to the
// shared quota's service that s asks for, answered to the core.
func (fr *driver) askQuota(now time.Time, s firing.Step) {
	var a firing.QuotaAnswer
	if q, ok := fr.env.Quota.(quotaTripper); ok {
		a = q.roundTrip(fr.ctx, now, s.Permit)
	}
	fr.core.QuotaAnswered(fr.now(), a)
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
