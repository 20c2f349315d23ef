// Package quota is the contract between transforms/throttle and a quota of
// known rate, and the parts of it that need no service.
//
// A quota is either a [Quota], which grants counts of permits, or a
// [Reserver], which hands out time slots so that all its clients together
// send one evenly spaced stream; a [Windowed] Quota's permits lapse at the
// end of their window. [Rate] is a quota's size, written as [ParseRate]
// reads it ("600/m"). [Slots] is a Reserver kept in memory, for the callers
// of one process, and [NoQuota] is the Quota of a pipeline without one.
// Package sharedquota implements both kinds over services that every
// worker and job reaches (Redis, Envoy's rate-limit service).
//
// The package is pure Go: it reads no clock (every call takes the time)
// and starts no goroutine.
package quota

import (
	"context"
	"time"
)

// Quota grants permits from a quota shared by every group, worker and job:
// a rate that all of them together must not exceed, kept by a service they
// all reach (package sharedquota has Redis and Envoy's rate-limit service).
// A caller takes permits once per batch, never per element, and sends at
// most as many requests as it was granted; what it was not granted waits
// until RetryAt.
//
// Implementations are safe for concurrent use. An error means the quota's
// service did not answer (unreachable, too slow for ctx, or a malformed
// answer); the caller decides whether to go on without the quota (fail
// open) or to wait (fail closed). Take honours ctx's deadline and
// cancellation.
type Quota interface {
	// Take asks for n permits for key at now. It returns how many were
	// granted (0..n) and, when fewer than n, when to ask again. Take with
	// n <= 0 grants nothing and asks nothing of the service.
	Take(ctx context.Context, key string, n int, now time.Time) (Grant, error)
}

// Windowed is implemented by a [Quota] that counts permits in fixed windows
// (Envoy's rate-limit service). The permits it grants lapse at the end of
// their window: the service does not count them in the next one, so a
// caller that spent them later could exceed the quota there. A caller asks
// for no more than it can send before WindowEnd, and drops what it has left
// at that time.
type Windowed interface {
	// WindowEnd returns when the window holding now ends for key, or the
	// zero Time if that is not known yet.
	WindowEnd(key string, now time.Time) time.Time
}

// Grant is the answer of [Quota.Take].
type Grant struct {
	// Granted is the number of permits granted, from 0 to the number asked.
	Granted int
	// RetryAt is when more permits are expected, when Granted is less than
	// the number asked; it is the zero Time when all were granted. It is a
	// hint: asking again earlier is allowed and may be refused.
	RetryAt time.Time
}

// NoQuota is the [Quota] of a pipeline without a shared quota: it grants
// every permit asked, so that only the adaptive throttle limits requests.
// Its zero value is ready to use.
type NoQuota struct{}

// Take grants n permits (none when n <= 0) and never fails.
func (NoQuota) Take(_ context.Context, _ string, n int, _ time.Time) (Grant, error) {
	return Grant{Granted: max(n, 0)}, nil
}
