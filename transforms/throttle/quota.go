package throttle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
	"github.com/beamthrottle/beamthrottle/transforms/adaptive/sharedquota"
)

// QuotaBackend names the service that keeps a shared quota.
type QuotaBackend string

// The quota backends.
const (
	// NoQuota: no shared quota; the adaptive throttle alone limits calls.
	NoQuota QuotaBackend = "none"
	// RedisQuota: a GCRA in Redis (Memorystore included), at
	// QuotaConfig.Rate.
	RedisQuota QuotaBackend = "redis"
	// EnvoyQuota: Envoy's rate-limit service (RLS v3), whose configuration
	// holds the limit for QuotaConfig.Domain and Descriptors.
	EnvoyQuota QuotaBackend = "envoy"
)

// QuotaConfig configures a quota shared by every group, worker and job that
// uses the same service and key (see WithQuota). Its fields are plain values,
// serialised into the DoFn; each worker connects in Setup.
type QuotaConfig struct {
	// Backend is the service; "" means NoQuota.
	Backend QuotaBackend
	// Addr is the service's host:port (Redis, or the rate-limit service's
	// gRPC address).
	Addr string
	// Key names the quota: every client using the same key shares it. For
	// Redis it is the key of the GCRA; for Envoy it is the value of the
	// descriptor's last entry, "key" (see Descriptors). Required.
	Key string
	// Rate is the Redis quota, such as "600/m" (adaptive.ParseRate).
	Rate string
	// Burst is the most permits Redis grants at once; 0 means one second of
	// the rate (sharedquota.DefaultBurst).
	Burst int
	// Domain is the Envoy domain of the limits.
	Domain string
	// Descriptors are the Envoy descriptor's entries before the key, as
	// "k=v,k2=v2" (sharedquota.ParseEntries); empty means only the key
	// entry.
	Descriptors string
	// FailOpen: when the service does not answer within Timeout, send
	// anyway, limited by the adaptive throttle alone. Otherwise (fail
	// closed) postpone until it answers.
	FailOpen bool
	// Timeout bounds each round trip to the service; 0 means
	// DefaultQuotaTimeout.
	Timeout time.Duration
}

// DefaultQuotaTimeout bounds a round trip to the quota service.
const DefaultQuotaTimeout = time.Second

// quotaKeyEntry is the name of the Envoy descriptor entry that carries
// QuotaConfig.Key.
const quotaKeyEntry = "key"

// enabled reports whether c asks for a shared quota.
func (c QuotaConfig) enabled() bool { return c.Backend != "" && c.Backend != NoQuota }

// Validate reports whether c is usable: nil, or every fault, each an
// *OptionError for WithQuota naming the field at fault, joined with
// errors.Join.
func (c QuotaConfig) Validate() error {
	var errs []error
	bad := func(field string, err error) {
		errs = append(errs, &OptionError{Option: "WithQuota", Field: field, Err: err})
	}
	switch c.Backend {
	case "", NoQuota:
		return nil
	case RedisQuota:
		if _, err := adaptive.ParseRate(c.Rate); err != nil {
			bad("Rate", err)
		}
		if c.Burst < 0 {
			bad("Burst", fmt.Errorf("must be >= 0, got %d", c.Burst))
		}
	case EnvoyQuota:
		if c.Domain == "" {
			bad("Domain", errors.New("required with the envoy backend"))
		}
		if c.Descriptors != "" {
			if _, err := sharedquota.ParseEntries(c.Descriptors); err != nil {
				bad("Descriptors", err)
			}
		}
	default:
		bad("Backend", fmt.Errorf("unknown quota backend %q (want none, redis or envoy)", c.Backend))
		return errors.Join(errs...)
	}
	if c.Addr == "" {
		bad("Addr", fmt.Errorf("required with the %s backend", c.Backend))
	} else if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		bad("Addr", fmt.Errorf("want host:port, got %q", c.Addr))
	}
	if c.Key == "" {
		bad("Key", fmt.Errorf("required with the %s backend", c.Backend))
	}
	if c.Timeout < 0 {
		bad("Timeout", fmt.Errorf("must be >= 0, got %v", c.Timeout))
	}
	return errors.Join(errs...)
}

// newQuota connects to the service of c.
func (c QuotaConfig) newQuota() (adaptive.Quota, error) {
	switch c.Backend {
	case RedisQuota:
		r, err := adaptive.ParseRate(c.Rate)
		if err != nil {
			return nil, err
		}
		return sharedquota.NewRedis(sharedquota.RedisConfig{Addr: c.Addr, Rate: r, Burst: c.Burst})
	case EnvoyQuota:
		var es []sharedquota.Entry
		if c.Descriptors != "" {
			var err error
			if es, err = sharedquota.ParseEntries(c.Descriptors); err != nil {
				return nil, err
			}
		}
		return sharedquota.NewEnvoy(sharedquota.EnvoyConfig{Addr: c.Addr, Domain: c.Domain, Entries: es, KeyEntry: quotaKeyEntry})
	}
	return adaptive.NoQuota{}, nil
}

// WithQuota makes every group, on every worker, take permits from a quota
// shared with every other client of the same service and key, once per
// firing (a batch of permits, never one per element). What a group cannot
// get permits for is postponed, as the adaptive throttle's postponements
// are; the adaptive throttle still reacts to 429s on top, for a backend
// that allows less than the quota or is spent by others. See QuotaConfig
// for the services and for failing open or closed.
func WithQuota(q QuotaConfig) Option { return func(c *config) { c.Quota = q } }

// Metric names of the shared quota's Beam metrics (in Namespace), named as
// those of Beam's EnvoyRateLimiter (Java, Python).
const (
	MetricQuotaRequests = "ratelimit-requests-total" // round trips to the quota service
	MetricQuotaAllowed  = "ratelimit-allowed"        // round trips that granted every permit asked
	MetricQuotaLimited  = "ratelimit-throttled"      // round trips that granted fewer
	MetricQuotaErrors   = "ratelimit-rpc-errors"     // round trips that failed or timed out
	MetricQuotaPermits  = "ratelimit-permits"        // permits granted
	MetricQuotaLapsed   = "ratelimit-permits-lapsed" // permits unspent at the end of their window
)

// The shared quota's Beam metrics, one for each name above.
var (
	quotaRequests = beam.NewCounter(Namespace, MetricQuotaRequests)
	quotaAllowed  = beam.NewCounter(Namespace, MetricQuotaAllowed)
	quotaLimited  = beam.NewCounter(Namespace, MetricQuotaLimited)
	quotaErrors   = beam.NewCounter(Namespace, MetricQuotaErrors)
	quotaPermits  = beam.NewCounter(Namespace, MetricQuotaPermits)
	quotaLapsed   = beam.NewCounter(Namespace, MetricQuotaLapsed)
)

// permitPool holds the permits a worker took from the shared quota and has
// not spent yet, for all the groups of a transform on the worker: a firing
// that needs a permit takes one from the pool, and asks the quota for a
// batch when the pool is empty. Permits left over by one firing are spent by
// the next, of any group, so none is lost; except with a quota counted in
// fixed windows (adaptive.Windowed), whose permits lapse at the end of their
// window.
type permitPool struct {
	cfg QuotaConfig
	q   adaptive.Quota

	mu      sync.Mutex
	have    int       // permits granted and not spent
	lapse   time.Time // when they lapse; zero if never
	retryAt time.Time // the quota said: no permits before then
	logged  time.Time // last error logged (one line a minute at most)
}

// permit reserves cost permits at now (a call's cost, in cost units),
// asking the quota for want (at least what is missing) when the pool holds
// fewer. Permits granted short of cost stay in the pool for the next ask,
// so a call costing more than the quota grants at once (Redis's burst) is
// sent once enough have come. It returns ok, or when to ask again. On an
// error of the service it fails open (ok) or closed (wait a while), as
// configured.
func (p *permitPool) permit(ctx context.Context, now time.Time, cost, want int, retry time.Duration) (ok bool, retryAt time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.have > 0 && !p.lapse.IsZero() && !now.Before(p.lapse) {
		quotaLapsed.Inc(ctx, int64(p.have))
		p.have = 0
	}
	if p.have >= cost {
		p.have -= cost
		return true, time.Time{}
	}
	if now.Before(p.retryAt) {
		return false, p.retryAt
	}
	want = max(want, cost) - p.have
	tctx, cancel := context.WithTimeout(ctx, p.timeout())
	g, err := p.q.Take(tctx, p.cfg.Key, want, now)
	cancel()
	quotaRequests.Inc(ctx, 1)
	if err != nil {
		quotaErrors.Inc(ctx, 1)
		if now.Sub(p.logged) >= time.Minute {
			p.logged = now
			log.Warnf(ctx, "throttle: shared quota (%s at %s) did not answer, failing %s: %v",
				p.cfg.Backend, p.cfg.Addr, map[bool]string{true: "open", false: "closed"}[p.cfg.FailOpen], err)
		}
		if p.cfg.FailOpen {
			return true, time.Time{}
		}
		return false, now.Add(retry)
	}
	quotaPermits.Inc(ctx, int64(g.Granted))
	if g.Granted >= want {
		quotaAllowed.Inc(ctx, 1)
	} else {
		quotaLimited.Inc(ctx, 1)
		p.retryAt = g.RetryAt
		if !p.retryAt.After(now) {
			p.retryAt = now.Add(retry)
		}
	}
	if g.Granted > 0 {
		p.have += g.Granted
		p.lapse = p.windowEnd(now)
	}
	if p.have < cost {
		return false, p.retryAt
	}
	p.have -= cost
	return true, time.Time{}
}

// windowEnd returns when permits granted at now lapse, or the zero Time if
// they do not (or it is not known yet).
func (p *permitPool) windowEnd(now time.Time) time.Time {
	if w, ok := p.q.(adaptive.Windowed); ok {
		return w.WindowEnd(p.cfg.Key, now)
	}
	return time.Time{}
}

// unspend returns the cost permits reserved by permit and not used.
func (p *permitPool) unspend(cost int) {
	p.mu.Lock()
	p.have += cost
	p.mu.Unlock()
}

func (p *permitPool) timeout() time.Duration {
	if p.cfg.Timeout > 0 {
		return p.cfg.Timeout
	}
	return DefaultQuotaTimeout
}

// pools holds the permit pools of the transforms running in this process
// with a shared quota, one per transform (by throttleFn.ID).
var pools = struct {
	mu sync.Mutex
	m  map[string]*sharedPool
}{m: map[string]*sharedPool{}}

type sharedPool struct {
	p    *permitPool
	refs int
}

// acquirePool returns the permit pool of the transform id, connecting to the
// quota's service if it is the first.
func acquirePool(id string, cfg QuotaConfig) (*permitPool, error) {
	pools.mu.Lock()
	defer pools.mu.Unlock()
	sp, ok := pools.m[id]
	if !ok {
		q, err := cfg.newQuota()
		if err != nil {
			return nil, fmt.Errorf("throttle: shared quota: %w", err)
		}
		sp = &sharedPool{p: &permitPool{cfg: cfg, q: q}}
		pools.m[id] = sp
	}
	sp.refs++
	return sp.p, nil
}

// releasePool drops a reference to the pool of id, and closes its
// connection with the last one.
func releasePool(id string) {
	pools.mu.Lock()
	defer pools.mu.Unlock()
	sp, ok := pools.m[id]
	if !ok {
		return
	}
	if sp.refs--; sp.refs > 0 {
		return
	}
	delete(pools.m, id)
	if c, ok := sp.p.q.(io.Closer); ok {
		c.Close()
	}
}
