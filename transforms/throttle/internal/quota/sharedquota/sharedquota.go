// Package sharedquota implements [quota.Quota] over services that every
// group, worker and job of a pipeline reaches, so that together they stay
// within one quota. It holds the network clients of transforms/throttle's
// shared quota, apart from package quota, which needs no service:
//
//   - [Redis]: the GCRA of github.com/go-redis/redis_rate over any Redis,
//     Memorystore included, with partial grants and a rate per second, minute
//     or hour. It is also a [quota.Reserver]: Reserve hands out time
//     slots, so that every worker sends on its own and all of them together
//     make one evenly spaced stream.
//   - [Envoy]: a client of Envoy's rate-limit service (RLS v3
//     ShouldRateLimit), whose limits live in the service's configuration.
//
// quota.NoQuota is the third choice: no shared quota.
//
// Envoy's service counts hits in windows and cannot reserve slots.
//
// Every Take, Reserve and Release is one round trip at most. Errors
// (service unreachable, answer later than ctx's deadline) are returned,
// wrapped, for the caller to fail open or closed; errors.Is finds
// context.DeadlineExceeded and context.Canceled in them.
package sharedquota

import (
	"context"
	"errors"
	"fmt"
)

// wrap returns err with the package's prefix and the message made of format
// and args, and ctx's error if ctx is done, for errors.Is to find even when
// the client reports it as a network timeout or a gRPC status.
func wrap(ctx context.Context, err error, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("sharedquota: %s: %w: %w", msg, cerr, err)
	}
	return fmt.Errorf("sharedquota: %s: %w", msg, err)
}
