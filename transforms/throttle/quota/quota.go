// Package quota is the contract between transforms/throttle and the
// backends of its shared quota, the quota that every group, worker and job
// of a pipeline keeps to together; and the parts of it that need no
// service.
//
// A quota is either a [Quota], which grants counts of permits, or a
// [Reserver], which hands out time slots so that all its clients together
// send one evenly spaced stream; a [Windowed] Quota's permits lapse at the
// end of their window. [Rate] is a quota's size, written as [ParseRate]
// reads it ("600/m"). [Slots] is a Reserver kept in memory, for the callers
// of one process, and [NoQuota] is the Quota of a pipeline without one.
//
// Backends are registered by name, as database/sql's drivers are, because
// a Beam transform's configuration is serialised to the workers: the
// pipeline names a backend and gives it [Settings], plain values, and each
// worker opens it in Setup with [Open]. "local" (Slots at a known rate, in
// the worker's memory) is built in. The backends over services register
// themselves when their package is imported, so that a program links only
// the clients it uses:
//
//	import (
//		_ "github.com/beamthrottle/beamthrottle/transforms/throttle/quota/envoyquota" // "envoy"
//		_ "github.com/beamthrottle/beamthrottle/transforms/throttle/quota/redisquota" // "redis"
//	)
//
// A backend of one's own implements Quota (and Reserver, Windowed or
// [Checker] as it can) and calls [Register] from its package's init
// function; see the example of Register.
//
// The package is pure Go and links no client of a service: it reads no
// clock (every call takes the time) and starts no goroutine.
package quota

import (
	"context"
	"time"
)

// Quota grants permits from a quota shared by every group, worker and job:
// a rate that all of them together must not exceed, kept by a service they
// all reach (packages redisquota and envoyquota: Redis, and Envoy's
// rate-limit service). A caller takes permits once per batch, never per
// element, and sends at most as many requests as it was granted; what it
// was not granted waits until RetryAt. Every backend's quota is a Quota;
// transforms/throttle reserves the slots of one that is a [Reserver] as
// well, and does not call its Take.
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
