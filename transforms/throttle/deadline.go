package throttle

import (
	"context"
	"time"
)

// deadlines hands out the contexts of a DoFn instance's calls. Calls
// started close together share one context, so that a call costs no
// context and timer of its own: each gets the call timeout, less at most
// deadlineSlack of it. The context ends no later than the driver gives up
// on the call (pending.timeout), so that a call that outlives it ends as
// the throttle's timeout, not as whatever its caller makes of it (an HTTP
// client's own timeout of the same length). A call may
// outlive the DoFn instance that made it, so its context is never
// cancelled early: it ends at its deadline, or with the worker's call
// board. A deadlines is used by one firing at a time (a DoFn instance's),
// not concurrently.
type deadlines struct {
	parent context.Context
	ctx    context.Context
	until  time.Time // ctx's deadline
	live   []expiring
}

// expiring is a context handed out, released once past its deadline.
type expiring struct {
	until  time.Time
	cancel context.CancelFunc
}

// releaseAfter is how long after its deadline a context handed out is
// released.
const releaseAfter = time.Minute

// deadlineSlack is how much shorter than the call timeout a call's context
// may be: a hundredth of the timeout, at most 100 ms.
func deadlineSlack(timeout time.Duration) time.Duration {
	return min(timeout/100, 100*time.Millisecond)
}

// next returns the context of a call started at now (by the wall clock)
// under parent: one that ends between now+timeout less deadlineSlack and
// now+timeout.
func (d *deadlines) next(parent context.Context, now time.Time, timeout time.Duration) context.Context {
	due := now.Add(timeout)
	if d.ctx != nil && d.parent == parent && !d.until.After(due) && !d.until.Before(due.Add(-deadlineSlack(timeout))) {
		return d.ctx
	}
	// Release the contexts whose deadline passed a while ago: their
	// calls have ended, or the driver gave up on them. Not sooner: a
	// context cancelled before its deadline's timer has fired (a busy
	// machine runs it late) would end its calls as cancelled, not as
	// timed out.
	live := d.live[:0]
	for _, e := range d.live {
		if now.Sub(e.until) > releaseAfter {
			e.cancel()
			continue
		}
		live = append(live, e)
	}
	d.live = live
	d.until = due
	ctx, cancel := context.WithDeadline(parent, d.until)
	d.parent, d.ctx = parent, ctx
	d.live = append(d.live, expiring{until: d.until, cancel: cancel})
	return ctx
}
