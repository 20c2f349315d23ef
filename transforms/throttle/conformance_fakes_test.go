package throttle

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/beamthrottle/beamthrottle/internal/firing"
	"github.com/beamthrottle/beamthrottle/internal/permits"
	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
	"github.com/beamthrottle/beamthrottle/transforms/throttle/quota"
)

// The fakes of TestConformance: a scripted policy, API and quota, the API
// both as the DoFn's caller and as the simulator's backend, and a quota's
// service whose round trips both drivers make.

// conformLog is what one driver did: the decisions, the permits asked for
// and the routes, in order. It keeps the elements routed, for calls that
// wait for them. It is safe for concurrent use.
type conformLog struct {
	mu      sync.Mutex
	lines   []string
	routed  map[int]bool
	changed chan struct{} // closed, and replaced, at each route
}

func newConformLog() *conformLog {
	return &conformLog{routed: map[int]bool{}, changed: make(chan struct{})}
}

func (l *conformLog) add(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *conformLog) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.lines)
}

func (l *conformLog) route(elem int, outcome string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf("route %d: %s", elem, outcome))
	l.routed[elem] = true
	close(l.changed)
	l.changed = make(chan struct{})
}

// await returns once elem was routed, or with ctx's error.
func (l *conformLog) await(ctx context.Context, elem int) error {
	for {
		l.mu.Lock()
		done, ch := l.routed[elem], l.changed
		l.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("waiting for element %d to be routed: %w", elem, ctx.Err())
		}
	}
}

// conformPolicy decides from a script by the decision's number, and logs
// each decision with the calls in flight and the call's cost; a Postpone
// is to after (from now).
type conformPolicy struct {
	mu     sync.Mutex
	script []adaptive.Verdict
	after  time.Duration
	n      int // decisions made
	log    *conformLog
}

func (p *conformPolicy) Decide(now time.Time, inFlight, cost int) adaptive.Decision {
	p.mu.Lock()
	defer p.mu.Unlock()
	v := adaptive.Send
	if p.n < len(p.script) {
		v = p.script[p.n]
	}
	p.n++
	p.log.add("decide %d in flight cost %d: %s", inFlight, cost, verdictName[v])
	d := adaptive.Decision{Verdict: v}
	if v == adaptive.Postpone {
		d.RetryAt = now.Add(p.after)
	}
	return d
}

func (p *conformPolicy) Record(time.Time, adaptive.Answer) {}
func (p *conformPolicy) Budget(time.Time, time.Time) int   { return -1 }
func (p *conformPolicy) MarshalBinary() ([]byte, error)    { return nil, nil }
func (p *conformPolicy) UnmarshalBinary([]byte) error      { return nil }

var verdictName = map[adaptive.Verdict]string{adaptive.Send: "send", adaptive.Postpone: "postpone", adaptive.Reject: "reject"}

// conformCaller answers the elements of its calls in turn from a script
// (true: accepted, false: 429), then accepts; it echoes the payloads,
// which are the elements' numbers. The call whose first element is e
// returns only once element holds[e], if any, was routed: its answer then
// comes after that one, and after all that the firing did next until it
// waited, as in the simulator an answer that comes later does.
type conformCaller struct {
	mu      *sync.Mutex
	answers *[]bool
	holds   map[int]int
	log     *conformLog
}

// next takes the answers to n elements.
func (c conformCaller) next(n int) []bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	oks := make([]bool, n)
	for i := range oks {
		oks[i] = true
		if len(*c.answers) > 0 {
			oks[i], *c.answers = (*c.answers)[0], (*c.answers)[1:]
		}
	}
	return oks
}

// hold waits, for the call whose first element is req, as holds says.
func (c conformCaller) hold(ctx context.Context, req []byte) error {
	elem, _ := strconv.Atoi(string(req))
	if after, ok := c.holds[elem]; ok {
		return c.log.await(ctx, after)
	}
	return nil
}

func (c conformCaller) Call(ctx context.Context, req []byte) ([]byte, error) {
	ok := c.next(1)[0]
	if err := c.hold(ctx, req); err != nil {
		return nil, err
	}
	if !ok {
		return nil, &clientcall.StatusError{StatusCode: 429}
	}
	return req, nil
}

func (c conformCaller) CallBatch(ctx context.Context, reqs [][]byte) ([][]byte, error) {
	oks := c.next(len(reqs))
	if err := c.hold(ctx, reqs[0]); err != nil {
		return nil, err
	}
	errs, failed := make([]error, len(reqs)), false
	for i, ok := range oks {
		if !ok {
			errs[i], failed = &clientcall.StatusError{StatusCode: 429}, true
		}
	}
	if failed {
		return reqs, &clientcall.BatchError{Errs: errs}
	}
	return reqs, nil
}

// conformBackend is conformCaller as the simulator's backend: it serves
// each element as one request, and answers them in turn from the same
// script. The call of the k-th element it serves comes back waits[k]
// later than the others (a sim.Queuer's wait), for answers out of order.
type conformBackend struct {
	answers []bool
	waits   []time.Duration
}

func (b *conformBackend) Admit(time.Duration) (ok bool, retryAfter, wait time.Duration) {
	ok = true
	if len(b.answers) > 0 {
		ok, b.answers = b.answers[0], b.answers[1:]
	}
	if len(b.waits) > 0 {
		wait, b.waits = b.waits[0], b.waits[1:]
	}
	return ok, 0, wait
}

func (b *conformBackend) Take(at time.Duration) (bool, time.Duration) {
	ok, ra, _ := b.Admit(at)
	return ok, ra
}

func (b *conformBackend) NextAvailable(at time.Duration) time.Duration { return at }

// conformPermit is a scripted answer of conformQuota: the permits, or,
// when not ok, to ask again retry later.
type conformPermit struct {
	ok    bool
	retry time.Duration
}

// conformQuota is a shared quota of permits that answers from a script in
// turn, then grants, and logs what it is asked. It does not log how many
// permits the firing wants: the drivers differ there (the DoFn's firing
// holds its whole batch and asks for its cost; the simulator's takes its
// elements one call at a time).
type conformQuota struct {
	script []conformPermit
	log    *conformLog
}

func (q *conformQuota) Permit(now time.Time, _, cost, _ int) firing.Permit {
	p := conformPermit{ok: true}
	if len(q.script) > 0 {
		p, q.script = q.script[0], q.script[1:]
	}
	if !p.ok {
		q.log.add("permit cost %d: retry in %v", cost, p.retry)
		return firing.Permit{RetryAt: now.Add(p.retry)}
	}
	q.log.add("permit cost %d: ok", cost)
	return firing.Permit{OK: true, Paid: true}
}

func (q *conformQuota) Settle(_ firing.Permit, sent bool) {
	if sent {
		q.log.add("settle: sent")
		return
	}
	q.log.add("settle: returned")
}

func (q *conformQuota) Record(time.Time, firing.Permit, firing.QuotaAnswer) {}
func (q *conformQuota) Missed(firing.Permit)                                { q.log.add("missed") }
func (q *conformQuota) Slots(time.Duration) (int, time.Duration, bool)      { return 0, 0, false }
func (q *conformQuota) WindowEnd(time.Time) time.Time                       { return time.Time{} }

// conformTrip is a scripted round trip to a quota's service: it grants
// grant permits after delay, with no more before retry from its start if
// it grants none, or fails.
type conformTrip struct {
	grant int
	retry time.Duration
	delay time.Duration
	fail  bool
}

// conformService is a shared quota whose permits are the transform's
// machine (internal/permits) and whose service answers its round trips from
// a script: each driver makes them as the firing's steps (the DoFn's on
// the wall clock, sleeping the delay; the simulator's on its virtual clock).
// It asks the service for a call's cost only: the drivers differ in how
// many elements their firing holds, and so in what it would want.
type conformService struct {
	m     *permits.Pool
	trips []conformTrip
	n     int
	log   *conformLog
}

func newConformService(trips []conformTrip, failOpen bool, log *conformLog) *conformService {
	return &conformService{m: permits.New(permits.Config{FailOpen: failOpen}), trips: slices.Clone(trips), log: log}
}

func (q *conformService) Permit(now time.Time, tier, cost, _ int) firing.Permit {
	p := q.m.Permit(now, now, tier, cost, cost, time.Second)
	switch p.Kind {
	case permits.Granted:
		q.log.add("permit cost %d: granted", cost)
	case permits.Ask:
		q.log.add("permit cost %d: ask %d", cost, p.Trip.N)
	case permits.Refused: // until the service's RetryAt, which the drivers' clocks place alike only to the millisecond
		q.log.add("permit cost %d: refused", cost)
	case permits.Open:
		q.log.add("permit cost %d: open", cost)
	default:
		q.log.add("permit cost %d: kind %d", cost, p.Kind)
	}
	return firing.Permit{OK: p.OK(), Paid: p.Paid(), RetryAt: p.RetryAt, Token: p, Ask: p.Kind == permits.Ask}
}

// next answers the next round trip, begun at now.
func (q *conformService) next(now time.Time) (firing.QuotaAnswer, time.Duration) {
	tr := conformTrip{fail: true}
	if q.n < len(q.trips) {
		tr = q.trips[q.n]
	}
	q.n++
	if tr.fail {
		q.log.add("round trip %d: failed", q.n)
		return firing.QuotaAnswer{Err: errors.New("conform: quota service down")}, tr.delay
	}
	q.log.add("round trip %d: %d granted after %v", q.n, tr.grant, tr.delay)
	g := permits.Grant{Grant: quota.Grant{Granted: tr.grant}}
	if tr.retry > 0 {
		g.RetryAt = now.Add(tr.retry)
	}
	return firing.QuotaAnswer{Answer: g}, tr.delay
}

// RoundTrip is the simulator's.
func (q *conformService) RoundTrip(now time.Time, _ firing.Permit) (firing.QuotaAnswer, time.Duration) {
	return q.next(now)
}

// roundTrip is the DoFn's.
func (q *conformService) roundTrip(_ context.Context, now time.Time, _ firing.Permit) firing.QuotaAnswer {
	a, delay := q.next(now)
	time.Sleep(delay)
	return a
}

func (q *conformService) Record(now time.Time, p firing.Permit, a firing.QuotaAnswer) {
	g, _ := a.Answer.(permits.Grant)
	q.m.Answered(p.Token.(permits.Permission).Trip, now, g, a.Err, time.Second)
}

func (q *conformService) Settle(p firing.Permit, sent bool) {
	if sent {
		q.log.add("settle: sent")
	} else {
		q.log.add("settle: returned")
	}
	q.m.Settle(p.Token.(permits.Permission), sent)
}

func (q *conformService) Missed(firing.Permit)                           { q.log.add("missed") }
func (q *conformService) Slots(time.Duration) (int, time.Duration, bool) { return 0, 0, false }
func (q *conformService) WindowEnd(time.Time) time.Time                  { return time.Time{} }
