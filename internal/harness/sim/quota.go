package sim

import (
	"context"
	"errors"
	"time"

	"github.com/beamthrottle/beamthrottle/internal/firing"
	"github.com/beamthrottle/beamthrottle/internal/permits"
	"github.com/beamthrottle/beamthrottle/transforms/throttle/quota"
)

// QuotaService is a shared quota (Config.Quota) whose round trips to its
// service the simulator makes for a firing (firing.AskQuota): RoundTrip
// answers the round trip the permit p asks for, begun at now, and says how
// long it takes; the firing gets the answer that much later, on the
// virtual clock (at once for 0).
type QuotaService interface {
	RoundTrip(now time.Time, p firing.Permit) (a firing.QuotaAnswer, latency time.Duration)
}

// QuotaModel is a shared quota's service as the simulator models it, for
// the workers (SharedQuota) given the same model: a count of Limit
// permits per fixed Window, as Envoy's rate-limit service counts, or, with
// Rate set, time slots at Rate (quota.Slots, the GCRA of the local
// backend, with its default lead and horizon). A
// round trip takes Latency; while Down says so, it fails after Latency,
// as one that times out does. Its windows start at the zero Time.
type QuotaModel struct {
	Limit   int
	Window  time.Duration
	Rate    quota.Rate
	Latency time.Duration
	Down    func(at time.Time) bool

	// Granted counts the permits, or units of slots, the model granted.
	Granted int64
	used    map[time.Time]int // by window start
	slots   *quota.Slots      // with Rate
}

// slotted reports whether the model hands out time slots.
func (q *QuotaModel) slotted() bool { return q.Rate != (quota.Rate{}) }

// take answers at at a round trip for r.
func (q *QuotaModel) take(at time.Time, r permits.Request) (permits.Grant, error) {
	if q.Down != nil && q.Down(at) {
		return permits.Grant{}, errors.New("sim: quota service down")
	}
	if q.slotted() {
		if q.slots == nil {
			s, err := quota.NewSlots(quota.SlotsConfig{Rate: q.Rate})
			if err != nil {
				return permits.Grant{}, err
			}
			q.slots = s
		}
		res, err := q.slots.ReserveTier(context.Background(), "sim", r.Tier, r.N, at)
		q.Granted += int64(res.Granted)
		return permits.Grant{Grant: quota.Grant{Granted: res.Granted, RetryAt: res.RetryAt}, Res: res}, err
	}
	if q.used == nil {
		q.used = map[time.Time]int{}
	}
	start := at.Truncate(q.Window)
	n := min(r.N, max(q.Limit-q.used[start], 0))
	q.used[start] += n
	q.Granted += int64(n)
	g := quota.Grant{Granted: n}
	if n < r.N {
		g.RetryAt = start.Add(q.Window)
	}
	return permits.Grant{Grant: g}, nil
}

// windowEnd is when permits granted at now lapse: the end of their window.
func (q *QuotaModel) windowEnd(now time.Time) time.Time { return now.Truncate(q.Window).Add(q.Window) }

// SharedQuota is one worker's permits of a shared quota: the machine the
// transform's DoFn drives (internal/permits), driven here on the virtual
// clock over a QuotaModel, which the workers of a run may share. Give it
// to the groups of one worker (Config.Quota). Its round trips are the
// firings' steps (QuotaService); a probe of a service that is down is
// answered to the machine once its latency has passed. A slot a firing
// claimed and did not use stays claimed (see Config.Quota).
type SharedQuota struct {
	m      *permits.Pool
	model  *QuotaModel
	retry  time.Duration
	busy   time.Time // when the round trip under way ends
	probes []probe   // under way, by end
	tally  permits.Tally
}

// probe is a probe under way and its answer.
type probe struct {
	end time.Time
	r   permits.Request
	g   permits.Grant
	err error
}

// NewSharedQuota returns a worker's permits of the quota model, failing
// open or closed while it is down, asking again after retry when failing
// closed or given no RetryAt.
func NewSharedQuota(model *QuotaModel, failOpen bool, retry time.Duration) *SharedQuota {
	cfg := permits.Config{FailOpen: failOpen}
	if model.slotted() {
		cfg = cfg.AtRate(model.Rate)
	} else {
		cfg.WindowEnd = model.windowEnd
	}
	return &SharedQuota{m: permits.New(cfg), model: model, retry: retry}
}

// Tally returns what the worker's machine counted: round trips, permits,
// lapses.
func (q *SharedQuota) Tally() permits.Tally {
	q.collect()
	return q.tally
}

// collect adds the machine's counts to q's.
func (q *SharedQuota) collect() {
	t := q.m.Tally()
	q.tally.Requests += t.Requests
	q.tally.Allowed += t.Allowed
	q.tally.Limited += t.Limited
	q.tally.Errors += t.Errors
	q.tally.Permits += t.Permits
	q.tally.Lapsed += t.Lapsed
	q.tally.Down += t.Down
	q.tally.Missed += t.Missed
	q.tally.Released += t.Released
}

// answerProbes records the probes answered by now.
func (q *SharedQuota) answerProbes(now time.Time) {
	for len(q.probes) > 0 && !q.probes[0].end.After(now) {
		p := q.probes[0]
		q.probes = q.probes[1:]
		q.m.Answered(p.r, p.end, p.g, p.err, q.retry)
	}
}

// Permit asks the machine (see firing.Quota).
func (q *SharedQuota) Permit(now time.Time, tier, cost, want int) firing.Permit {
	q.answerProbes(now)
	p := q.m.Permit(now, now, tier, cost, want, q.retry)
	if p.Trip.Probe {
		g, err := q.model.take(now, p.Trip)
		q.busy = now.Add(q.model.Latency)
		q.probes = append(q.probes, probe{end: q.busy, r: p.Trip, g: g, err: err})
	}
	ask := p.Kind == permits.Ask || p.Kind == permits.Join || p.Kind == permits.Granted && p.Trip.N > 0
	return firing.Permit{OK: p.OK(), Paid: p.Paid(), At: p.Slot.At(), RetryAt: p.RetryAt, Token: p, Ask: ask}
}

// RoundTrip makes the round trip p asks for, or waits for the one under
// way (see QuotaService).
func (q *SharedQuota) RoundTrip(now time.Time, p firing.Permit) (firing.QuotaAnswer, time.Duration) {
	perm := p.Token.(permits.Permission)
	if perm.Kind == permits.Join {
		// Until the round trip under way ends, and a hair more, so that
		// its answer comes first.
		return firing.QuotaAnswer{}, max(q.busy.Sub(now), 0) + time.Microsecond
	}
	g, err := q.model.take(now, perm.Trip)
	q.busy = now.Add(q.model.Latency)
	return firing.QuotaAnswer{Answer: g, Err: err}, q.model.Latency
}

// Record records the answer to a round trip (see firing.Quota).
func (q *SharedQuota) Record(now time.Time, p firing.Permit, a firing.QuotaAnswer) {
	perm := p.Token.(permits.Permission)
	if perm.Kind == permits.Join {
		return
	}
	if !a.RetryAt.IsZero() { // gave up: not with a modelled service
		q.m.Abandoned()
		return
	}
	g, _ := a.Answer.(permits.Grant)
	q.m.Answered(perm.Trip, now, g, a.Err, q.retry)
}

// Settle ends a permit once the call is decided (see firing.Quota).
func (q *SharedQuota) Settle(p firing.Permit, sent bool) {
	q.m.Settle(p.Token.(permits.Permission), sent)
}

// Missed drops a slot the firing got to too late (see firing.Quota).
func (q *SharedQuota) Missed(p firing.Permit) { q.m.Missed(p.Token.(permits.Permission)) }

// Slots says whether the quota hands out time slots (see firing.Quota).
func (q *SharedQuota) Slots(d time.Duration) (int, time.Duration, bool) {
	if !q.m.Slotted() {
		return 0, 0, false
	}
	return q.m.SlotsWithin(d), q.m.Tolerance(), true
}

// WindowEnd returns when permits granted at now lapse (see firing.Quota).
func (q *SharedQuota) WindowEnd(now time.Time) time.Time { return q.m.WindowEnd(now) }
