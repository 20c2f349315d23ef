package sim

import (
	"fmt"
	"math"
	"time"

	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// Advertiser is a Backend that advertises its quota on every answer,
// accepted or refused, as an API's rate-limit headers do
// (X-RateLimit-Limit, -Remaining and -Reset; OpenAI's
// x-ratelimit-*-requests and -tokens). With Config.Advertise the policies
// get it as adaptive.Answer.Quota. The fixed windows (FixedWindow,
// DriftingWindow, AlignedWindow), the token buckets, GCRA and TokenLimits
// advertise.
type Advertiser interface {
	Backend
	// Advertise returns the limits as the answer to a request served at
	// at (after its Take) tells them, in the same order on every answer.
	// Their Reset is on the policies' clock: start, the wall-clock time of
	// the run's start (Env.Start), plus the time since the start; their
	// Used is what that request, the last the backend served, took of
	// each (the simulator's calls carry one request each), 0 if not
	// told. It changes nothing the backend will answer.
	Advertise(start time.Time, at time.Duration) []adaptive.Quota
}

// The backends that advertise.
var (
	_ Advertiser = (*fixedWindow)(nil)
	_ Advertiser = (*tokenBucket)(nil)
	_ Advertiser = (*tokenLimits)(nil)
	_ Advertiser = (*gcra)(nil)
)

// AlignedWindow is FixedWindow with its windows aligned to the clock
// rather than to the run, as Envoy's rate limit service ends them on whole
// minutes (or seconds, hours) of the clock: the run starts into (in [0,
// window)) a window, so its first window ends window − into after the
// start, with its whole quota left (the run's clients are the first to
// use it). The simulated clock starts on a whole minute (Env.Start), so
// into stands for the time of day the run starts at.
func AlignedWindow(window, into time.Duration, retryAfterOn bool) BackendModel {
	if into < 0 || into >= window {
		panic(fmt.Sprintf("sim.AlignedWindow: into %v must be in [0, %v)", into, window))
	}
	name, desc := withRetryAfter(fmt.Sprintf("fixed-%s-at-%s", compact(window), compact(into)),
		fmt.Sprintf("fixed window of %s aligned to the clock, the run starting %s into one, quota = capacity × %s",
			spaced(window), spaced(into), spaced(window)), retryAfterOn)
	return BackendModel{Name: name, Description: desc, New: func(c Capacity, seed uint64) Backend {
		return &fixedWindow{cap: c, window: window, into: into, ra: retryAfterOn}
	}}
}

// Advertise implements Advertiser with one limit: Limit is the quota of
// the window holding at (at the capacity in force at at), Remaining what
// is left of it, Reset the window's end and Window its length (unknown, 0,
// for drifting windows, whose lengths vary). Refill is false: the whole
// quota comes back at Reset. Used is not told (a request).
func (w *fixedWindow) Advertise(start time.Time, at time.Duration) []adaptive.Quota {
	w.roll(at)
	rate, _ := w.cap.At(at)
	q := w.quota(rate)
	a := adaptive.Quota{Limit: q, Remaining: max(q-w.used, 0), Reset: start.Add(w.end(w.k))}
	if w.jitter == 0 {
		a.Window = w.window
	}
	return []adaptive.Quota{a}
}

// Advertise implements Advertiser with one limit, as OpenAI advertises its
// limit on requests: Limit is the bucket's depth (capacity × burst, at the capacity
// in force at at), Remaining the whole tokens left, Reset when the bucket
// will be full again at that capacity (rounded up to whole milliseconds,
// as OpenAI sends "12ms"; at if full), and Refill true; no Window. During
// an outage it advertises a depth of 0 and no Reset. Used is not told (a
// request).
func (b *tokenBucket) Advertise(start time.Time, at time.Duration) []adaptive.Quota {
	b.advance(at)
	rate, _ := b.cap.At(at)
	depth := b.depth(rate)
	a := adaptive.Quota{
		Limit:     int64(math.Floor(depth + tolerance)),
		Remaining: int64(math.Floor(b.tokens + tolerance)),
		Refill:    true,
	}
	if rate == 0 {
		return []adaptive.Quota{a}
	}
	var full time.Duration
	if missing := depth - b.tokens; missing > tolerance {
		if b.step == 0 {
			full = time.Duration(math.Ceil(missing/rate*1e3-tolerance)) * time.Millisecond
		} else {
			steps := math.Ceil(missing/(rate*b.step.Seconds()) - tolerance)
			full = (at/b.step+time.Duration(steps))*b.step - at
			full = (full + time.Millisecond - 1).Truncate(time.Millisecond)
		}
	}
	a.Reset = start.Add(at + full)
	return []adaptive.Quota{a}
}

// advertised returns what the backend advertises on the answer, sent at
// answered, to a call served at at, as the group's worker reads it: nil
// unless Config.Advertise is on and the backend an Advertiser; in
// Config.Headers' family where the backend is one the quota server has.
func (g *group) advertised(at, answered time.Duration) []adaptive.Quota {
	r := g.r
	a, ok := r.backend.(Advertiser)
	if !r.cfg.Advertise || !ok {
		return nil
	}
	var qs []adaptive.Quota
	if st, ok := r.backend.(stater); ok && r.cfg.Headers != HeadersExact {
		qs = []adaptive.Quota{r.cfg.Headers.read(st.state(at), r.start, answered)}
	} else {
		qs = a.Advertise(r.start, at)
	}
	for i := range qs {
		if !qs[i].Reset.IsZero() {
			qs[i].Reset = qs[i].Reset.Add(skew(r.cfg.AdvertiseSkew, g.env.Worker))
		}
	}
	return qs
}

// skew is how far worker's view of an advertised Reset is off
// (Config.AdvertiseSkew): later on even workers, earlier on odd ones.
func skew(d time.Duration, worker int) time.Duration {
	if worker%2 == 1 {
		return -d
	}
	return d
}

// Advertise implements Advertiser as the quota server's GCRA mode tells
// its quota in the exact family: the rate per second as a window of a
// second, the requests that fit back to back now, and when the accepted
// requests stop occupying the limiter.
func (g *gcra) Advertise(start time.Time, at time.Duration) []adaptive.Quota {
	s := g.state(at)
	return []adaptive.Quota{{Limit: s.limit, Remaining: s.remaining, Reset: start.Add(s.reset), Window: s.period}}
}
