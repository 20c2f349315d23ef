package adaptive

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ErrRejected is returned by [Limiter.Wait] when the policy rejects the
// request locally.
var ErrRejected = errors.New("adaptive: request rejected locally")

// Limiter is a [Policy] guarded by a mutex and driven by the wall clock
// (time.Now), for code that calls a backend from many goroutines outside
// Beam. It counts the requests it let through whose answer has not been
// recorded yet and passes that count to the policy as the requests in
// flight. It is safe for concurrent use. Create Limiters with
// [NewLimiter]; the zero value is not usable.
//
// Wait blocks while the policy postpones (a [Pacer] spaces the requests
// so), and fails fast when it rejects (the [SRE] throttle):
//
//	sent, err := l.Wait(ctx)
//	if err != nil {
//		return err // ErrRejected, or ctx's error
//	}
//	err = call()
//	l.Record(adaptive.Answer{Outcome: classify(err), Sent: sent, RetryAfter: retryAfter(err)})
//
// Decide asks once, without waiting. WaitN and DecideN do the same for a
// request of a given cost (tokens, bytes, items: see [Coster]), as
// golang.org/x/time/rate's WaitN does for n tokens:
//
//	sent, err := l.WaitN(ctx, tokens)
//
// Times are read from the wall clock; if it steps back, the policy sees
// time stand still (see [Throttler]).
type Limiter struct {
	mu       sync.Mutex
	p        Policy
	inFlight int
}

// NewLimiter returns a Limiter over p, for example an [SRE] made by
// [NewSRE] or a [Pacer] made by [NewPacer]. p must not be used elsewhere
// while the Limiter is in use.
func NewLimiter(p Policy) *Limiter { return &Limiter{p: p} }

// Decide asks the policy about a request attempted now and returns its
// decision and the time it was made. If the verdict is Send, make the
// request and pass its answer to Record with Answer.Sent set to that time;
// if Postpone, ask again at Decision.RetryAt (Wait does); if Reject, fail
// without calling the backend. It is DecideN(1).
func (l *Limiter) Decide() (Decision, time.Time) { return l.DecideN(1) }

// DecideN is Decide for a request of cost n, in the cost units of the
// policy's rate: the policy's DecideCost if it is a [Coster], else its
// Decide (see the function [DecideCost]).
func (l *Limiter) DecideN(n int) (Decision, time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	d := DecideCost(l.p, now, l.inFlight, n)
	if d.Verdict == Send {
		l.inFlight++
	}
	return d, now
}

// Wait asks the policy about a request until it is let through, sleeping
// until the RetryAt of each postponement, and returns the time it was let
// through, for Record's Answer.Sent. It returns ErrRejected if the policy
// rejects the request, and ctx's error if ctx is done first. It is
// WaitN(ctx, 1).
func (l *Limiter) Wait(ctx context.Context) (sent time.Time, err error) { return l.WaitN(ctx, 1) }

// WaitN is Wait for a request of cost n, asking the policy with DecideN.
func (l *Limiter) WaitN(ctx context.Context, n int) (sent time.Time, err error) {
	for {
		if err := ctx.Err(); err != nil {
			return time.Time{}, err
		}
		d, now := l.DecideN(n)
		switch d.Verdict {
		case Send:
			return now, nil
		case Reject:
			return time.Time{}, ErrRejected
		}
		t := time.NewTimer(time.Until(d.RetryAt))
		select {
		case <-ctx.Done():
			t.Stop()
			return time.Time{}, ctx.Err()
		case <-t.C:
		}
	}
}

// Record passes to the policy the answer to a request that Decide, Wait,
// DecideN or WaitN let through; a.Sent is the time they returned with it. Record every such
// request once, or the Limiter counts it as in flight for ever.
func (l *Limiter) Record(a Answer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inFlight = max(l.inFlight-1, 0)
	l.p.Record(time.Now(), a)
}
