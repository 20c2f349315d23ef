package throttle

import (
	"context"
	"sync"
	"time"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// advertised collects what a call's answer advertised of the API's quota:
// the caller reports it through the call's context (clientcall.HTTP does
// for every answer). A caller may report from any goroutine.
type advertised struct {
	mu sync.Mutex
	as []clientcall.Advertised
}

// context returns ctx with a sink that keeps the last report.
func (a *advertised) context(ctx context.Context) context.Context {
	return clientcall.WithAdvertised(ctx, func(as []clientcall.Advertised) {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.as = append(a.as[:0], as...)
	})
}

// quota returns the limits reported, for the pacer; nil if none. A limit
// on requests counts 1 for each; a limit in other units (tokens) counts
// what the caller said the request took of it (Used), and binds the pacer
// only once a caller has said.
func (a *advertised) quota() []adaptive.Quota {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []adaptive.Quota
	for _, l := range a.as {
		used := l.Used
		switch {
		case l.Unit == "requests":
			used = 1
		case used <= 0:
			used = -1 // not known: kept, so that the limits keep their places
		}
		out = append(out, adaptive.Quota{Limit: l.Limit, Remaining: l.Remaining, Reset: l.Reset, Window: l.Window,
			Refill: l.Refill, Used: used})
	}
	return out
}

// onClock moves the resets of qs, on the wall clock, to the throttle's
// clock, shift ahead of it (a runner's synthetic processing time runs
// ahead of the wall clock in tests).
func onClock(qs []adaptive.Quota, shift time.Duration) []adaptive.Quota {
	for i := range qs {
		if !qs[i].Reset.IsZero() {
			qs[i].Reset = qs[i].Reset.Add(shift)
		}
	}
	return qs
}
