package sim

import (
	"fmt"
	"math"
	"time"

	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// Headers is the family of rate-limit headers a backend's quota is read
// from (Config.Headers): what of the quota each family tells, and where a
// client puts its reset, as the quota server (package testserver) sends
// them and package clientcall reads them. The zero value is HeadersExact.
type Headers int

const (
	// HeadersExact passes the quota as the backend holds it (its
	// [Advertiser]), its Reset exact: no header family's rounding.
	HeadersExact Headers = iota
	// HeadersIETF is draft-8's RateLimit-Policy and RateLimit: the limit,
	// its window in whole seconds, what remains, and the reset in whole
	// seconds (rounded up) from the answer, which the client counts from
	// the answer's arrival.
	HeadersIETF
	// HeadersX is X-RateLimit-Limit, -Remaining and -Reset, the reset in
	// epoch seconds (rounded up), corrected with the answer's Date, in
	// whole seconds (rounded down): the client's reset is up to a second
	// late. No window.
	HeadersX
	// HeadersOpenAI is OpenAI's x-ratelimit-*-requests, a bucket's
	// headers: the capacity (a GCRA's burst), what remains, and when the
	// limit is full again, to the millisecond from the answer; a refilling
	// limit (adaptive.Quota.Refill), whatever the backend counts in.
	HeadersOpenAI
)

// String returns the family's name, as the quota server's --advertise
// names it ("exact" for HeadersExact).
func (h Headers) String() string {
	switch h {
	case HeadersExact:
		return "exact"
	case HeadersIETF:
		return "ietf"
	case HeadersX:
		return "x-ratelimit"
	case HeadersOpenAI:
		return "openai"
	}
	return fmt.Sprintf("Headers(%d)", int(h))
}

// quotaState is a backend's quota at one instant as the quota server
// holds its own (testserver's quotaState): limit per period, capacity
// (what remaining counts up to: the quota, or a GCRA's burst), what
// remains, and when it is full again, since the start of the run.
type quotaState struct {
	limit, capacity, remaining int64
	reset, period              time.Duration
}

// stater is a backend whose quota a header family can tell: the fixed
// windows, the token buckets and GCRA, as the quota server's modes.
type stater interface {
	state(at time.Duration) quotaState
}

var (
	_ stater = (*fixedWindow)(nil)
	_ stater = (*tokenBucket)(nil)
	_ stater = (*gcra)(nil)
)

// state implements stater: the window's quota, what is left of it, and
// its end; the period is the shortest window.
func (w *fixedWindow) state(at time.Duration) quotaState {
	w.roll(at)
	rate, _ := w.cap.At(at)
	q := w.quota(rate)
	return quotaState{limit: q, capacity: q, remaining: max(q-w.used, 0), reset: w.end(w.k), period: w.window}
}

// state implements stater: the bucket's depth, its whole tokens, and when
// it is full again (as Advertise has it); the period is the burst.
func (b *tokenBucket) state(at time.Duration) quotaState {
	q := b.Advertise(time.Time{}, at)[0]
	s := quotaState{limit: q.Limit, capacity: q.Limit, remaining: q.Remaining, reset: at,
		period: time.Duration(b.burst * float64(time.Second))}
	if !q.Reset.IsZero() {
		s.reset = q.Reset.Sub(time.Time{})
	}
	return s
}

// state implements stater as the quota server's GCRA mode tells it: the
// rate per second, the burst, the requests that fit back to back now, and
// the time the accepted requests still occupy.
func (g *gcra) state(at time.Duration) quotaState {
	g.advance(at)
	rate, _ := g.cap.At(at)
	s := quotaState{limit: int64(math.Floor(rate + tolerance)), capacity: int64(g.burst), period: time.Second, reset: at}
	if rate == 0 {
		return s
	}
	t := interval(rate)
	ahead := max(g.tat-float64(at), 0)
	s.reset = at + time.Duration(ahead)
	s.remaining = min(max(int64(math.Floor(((g.burst-1)*t-ahead)/t))+1, 0), s.capacity)
	return s
}

// read returns the quota s, taken when the backend served the request,
// as family h tells it on the answer sent at answered (since the start of
// the run) and the client reads it then: start is the client's clock at
// the start of the run.
func (h Headers) read(s quotaState, start time.Time, answered time.Duration) adaptive.Quota {
	left := max(s.reset-answered, 0) // the reset, counted from the answer
	q := adaptive.Quota{Limit: s.limit, Remaining: s.remaining}
	switch h {
	case HeadersIETF:
		q.Window = max(ceilSeconds(s.period), time.Second)
		q.Reset = start.Add(answered + ceilSeconds(left))
	case HeadersX:
		epoch := ceilSeconds(answered + left)          // X-RateLimit-Reset
		date := answered.Truncate(time.Second)         // Date
		q.Reset = start.Add(answered + (epoch - date)) // local = now + (reset − Date)
	case HeadersOpenAI:
		q.Limit = s.capacity
		q.Reset = start.Add(answered + left.Round(time.Millisecond))
		q.Refill = true
	}
	return q
}

// ceilSeconds rounds d up to whole seconds.
func ceilSeconds(d time.Duration) time.Duration {
	if t := d.Truncate(time.Second); t < d {
		return t + time.Second
	}
	return d
}
