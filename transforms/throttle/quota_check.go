package throttle

import (
	"cmp"
	"context"
	"errors"
	"io"
	"sync"

	"github.com/beamthrottle/beamthrottle/internal/defaults"
	"github.com/beamthrottle/beamthrottle/transforms/throttle/quota"
)

// Check asks the quota's service whether c agrees with the other clients of
// its Key, if the backend's quota can tell (it is a quota.Checker). With the
// redis backend, a key's rate and burst are recorded in Redis beside its
// state (for an hour after the last client checked them): a Rate or Burst
// that differs from the one recorded is refused with an *OptionError for
// WithQuota's Rate, since clients that share a key with different rates
// would keep neither. Rates are compared by value ("600/m" is "10/s"). The
// local quota is the worker's own, and Envoy's limits are in its
// configuration: they have nothing to check. Any other error says the
// service could not be asked; the quota then works as FailOpen says. Call
// it before starting a job; each worker checks again when it connects, and
// logs a mismatch.
func (c QuotaConfig) Check(ctx context.Context) error {
	if !c.enabled() {
		return nil
	}
	q, err := c.newQuota()
	if err != nil {
		return optionErrors(err)
	}
	if cl, ok := q.(io.Closer); ok {
		defer cl.Close()
	}
	return c.check(ctx, q)
}

// ratesChecked holds the IDs of the transforms whose quota's settings this
// worker process checked (once each, in the first Setup).
var ratesChecked sync.Map

// check asks q, the quota of c, whether c agrees with the other clients of
// its key (see Check), within c's Timeout. A disagreement is an
// *OptionError naming the field at fault.
func (c QuotaConfig) check(ctx context.Context, q quota.Quota) error {
	ch, ok := q.(quota.Checker)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, cmp.Or(c.Timeout, defaults.QuotaTimeout))
	defer cancel()
	err := ch.Check(ctx)
	if _, ok := errors.AsType[*quota.ConfigError](err); ok {
		return optionErrors(err)
	}
	return err
}
