package throttle

import (
	"cmp"
	"context"
	"errors"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/beamthrottle/beamthrottle/internal/defaults"
	"github.com/beamthrottle/beamthrottle/transforms/throttle/internal/quota"
	"github.com/beamthrottle/beamthrottle/transforms/throttle/internal/quota/sharedquota"
)

// Check asks the quota's service whether c agrees with the other clients of
// its Key. With the redis backend, a key's rate and burst are recorded in
// Redis beside its state (for an hour after the last client checked them):
// a Rate or Burst that differs from the one recorded is refused with an
// *OptionError for WithQuota's Rate, since clients that share a key with
// different rates would keep neither. Rates are compared by value ("600/m"
// is "10/s"). Other backends have nothing to check: the local quota is the
// worker's own, and Envoy's limits are in its configuration. Any other
// error says the service could not be asked; the quota then works as
// FailOpen says. Call it before starting a job; each worker checks again
// when it connects, and logs a mismatch.
func (c QuotaConfig) Check(ctx context.Context) error {
	err := c.checkRate(ctx)
	if _, ok := errors.AsType[*sharedquota.RateMismatchError](err); ok {
		return &OptionError{Option: "WithQuota", Field: "Rate", Err: err}
	}
	return err
}

// ratesChecked holds the IDs of the transforms whose quota's rate this
// worker process checked (once each, in the first Setup).
var ratesChecked sync.Map

// checkRate records c's rate and burst under its key in Redis, or returns
// the *sharedquota.RateMismatchError of a key recorded with others.
func (c QuotaConfig) checkRate(ctx context.Context) error {
	if c.Backend != quotaRedis {
		return nil
	}
	r, err := quota.ParseRate(c.Rate)
	if err != nil {
		return err
	}
	timeout := cmp.Or(c.Timeout, defaults.QuotaTimeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := redis.NewClient(&redis.Options{
		Addr: c.Addr, ContextTimeoutEnabled: true, MaxRetries: -1, DialerRetries: 1,
		DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout,
	})
	defer client.Close()
	return sharedquota.CheckRate(ctx, client, c.Key, r, c.Burst)
}
