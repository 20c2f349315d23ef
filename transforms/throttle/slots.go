package throttle

import (
	"context"
	"time"

	"github.com/beamthrottle/beamthrottle/internal/permits"
	"github.com/beamthrottle/beamthrottle/transforms/throttle/quota"
)

// slotRateMargin is how far above the rate of a quota of time slots the
// pacer's ceiling is set. The slots alone space the calls at the quota's
// rate; a pacer whose ceiling were that rate exactly would refuse a slot
// that comes a fraction of a millisecond early on the caller's clock, as
// the slots of a quota kept by a service do (placed on the caller's clock
// with half a round trip's estimate), and the slot would be lost: a tenth
// of the quota with Redis on loopback. Two percent is far above that
// jitter and below what a strict limiter notices, since the slots are what
// space the calls.
const slotRateMargin = 1.02

// newPermitPool returns the permit pool of a transform on a worker for the
// quota q of cfg.
func newPermitPool(cfg QuotaConfig, q quota.Quota) *permitPool {
	p := &permitPool{cfg: cfg, q: q}
	mc := permits.Config{FailOpen: cfg.FailOpen, Tiers: cfg.HighShare > 0 || cfg.NormalShare > 0}
	if w, ok := q.(quota.Windowed); ok {
		mc.WindowEnd = func(now time.Time) time.Time { return w.WindowEnd(cfg.Key, now) }
	}
	if r, ok := q.(quota.Reserver); ok {
		p.r = r
		mc.Slots = true
		if rate, err := quota.ParseRate(cfg.Rate); err == nil {
			p.rate = rate.PerSecond()
			mc = mc.AtRate(rate)
		}
	}
	p.m = permits.New(mc)
	return p
}

// begin counts a firing under way, for end.
func (p *permitPool) begin() {
	p.mu.Lock()
	p.m.Begin()
	p.mu.Unlock()
}

// end ends a firing that began, at now, and gives back the slot it held,
// if any, and, when no other firing of the worker is under way, the slots
// the worker reserved and no call claimed (see permits.Pool.End).
func (p *permitPool) end(ctx context.Context, now time.Time, held permits.Permission) {
	if p.r == nil {
		return
	}
	p.mu.Lock()
	run, ok := p.m.End(now, held)
	p.mu.Unlock()
	if !ok {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, p.timeout())
	back, err := p.r.Release(rctx, p.cfg.Key, run.Res, run.Left, now)
	cancel()
	p.mu.Lock()
	p.m.Released(run, back, err)
	t := p.m.Tally()
	p.mu.Unlock()
	reportTally(ctx, t)
}

// missed drops a slot a call got to too late.
func (p *permitPool) missed(perm permits.Permission) {
	p.mu.Lock()
	p.m.Missed(perm)
	p.mu.Unlock()
}
