package throttle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
	"github.com/beamthrottle/beamthrottle/transforms/throttle/internal/quota"
	"github.com/beamthrottle/beamthrottle/transforms/throttle/internal/quota/sharedquota"
)

// The quota backends: the values of QuotaConfig.Backend.
const (
	quotaNone  = "none"
	quotaLocal = "local"
	quotaRedis = "redis"
	quotaEnvoy = "envoy"
)

// QuotaConfig configures a quota shared by every group, worker and job that
// uses the same service and key (see WithQuota). Its fields are plain values,
// serialised into the DoFn; each worker connects in Setup.
//
// Redis without a Burst above 1, and the local backend, hand out time slots:
// every call is sent on a slot of its own, the slots of all workers
// together spaced evenly at Rate, so that a strict limiter (a GCRA with no
// burst, as API gateways are commonly configured) sees no two calls closer
// than it allows. Redis with a Burst above 1, and Envoy, grant counts of
// permits, which each worker spends as its adaptive throttle paces it: for
// APIs that allow bursts or count in windows.
type QuotaConfig struct {
	// Backend is the service:
	//   - "none" (or ""): no shared quota; the adaptive throttle alone
	//     limits calls;
	//   - "local": a known rate, Rate, kept in the worker's memory for the
	//     groups of the transform on that worker: no service, nothing
	//     shared with other workers or jobs;
	//   - "redis": a GCRA in Redis (Memorystore included), at Rate;
	//   - "envoy": Envoy's rate-limit service (RLS v3), whose
	//     configuration holds the limit for Domain and Descriptors.
	Backend string
	// Addr is the service's host:port (Redis, or the rate-limit service's
	// gRPC address).
	Addr string
	// Key names the quota: every client using the same key shares it. For
	// Redis it is the key of the GCRA; for Envoy it is the value of the
	// descriptor's last entry, "key" (see Descriptors). Required.
	Key string
	// Rate is the quota of the redis or local backend, in cost units, written
	// N/unit with unit s, m, h or a Go duration: "600/m", "10/s",
	// "36000/h", "5/2s".
	Rate string
	// Burst, for Redis, above 1, makes the quota a token bucket holding
	// that many permits, granted as counts; 0 or 1 means time slots with
	// no burst.
	Burst int
	// Domain is the Envoy domain of the limits.
	Domain string
	// Descriptors are the Envoy descriptor's entries before the key, as
	// "k=v,k2=v2"; empty means only the key entry.
	Descriptors string
	// FailOpen: when the service does not answer within Timeout, send
	// anyway, limited by the adaptive throttle alone. Otherwise (fail
	// closed) postpone until it answers. Either way, once a round trip has
	// failed, each worker decides at once without the service, asking it
	// again only after a back-off (1 s, doubling to 10 s), one probe at a
	// time, until it answers.
	FailOpen bool
	// Timeout bounds each round trip to the service; 0 means 1s.
	Timeout time.Duration
	// HighShare and NormalShare keep shares of Rate for the high and the
	// normal priority tiers (WithPriority), as LiteLLM's priority
	// reservations do, with a quota of time slots only: while a tier with
	// a share sends, the tiers below it together reserve at most
	// 1 − share of Rate, on every worker and job of Key that keeps the
	// same shares; while it has not sent for a few seconds, they may use
	// the whole Rate. So a backfill sharing the key cannot starve a live
	// feed. Each in [0, 1); 0 keeps nothing, and without shares a worker
	// serves higher tiers first from the slots it gets.
	HighShare, NormalShare float64
}

// quotaKeyEntry is the name of the Envoy descriptor entry that carries
// QuotaConfig.Key.
const quotaKeyEntry = "key"

// enabled reports whether c asks for a shared quota.
func (c QuotaConfig) enabled() bool { return c.Backend != "" && c.Backend != quotaNone }

// validate reports whether c is usable: nil, or every fault, each an
// *OptionError for WithQuota naming the field at fault, joined with
// errors.Join.
func (c QuotaConfig) validate() error {
	var errs []error
	bad := func(field string, err error) {
		errs = append(errs, &OptionError{Option: "WithQuota", Field: field, Err: err})
	}
	switch c.Backend {
	case "", quotaNone:
		for _, f := range []struct {
			name string
			v    float64
		}{{"HighShare", c.HighShare}, {"NormalShare", c.NormalShare}} {
			if f.v != 0 {
				bad(f.name, errors.New("needs a quota backend (local or redis): without one there is no rate to share"))
			}
		}
		return errors.Join(errs...)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"HighShare", c.HighShare}, {"NormalShare", c.NormalShare}} {
		switch {
		case !(f.v >= 0 && f.v < 1):
			bad(f.name, fmt.Errorf("must be at least 0 and less than 1, got %v", f.v))
		case f.v > 0 && !c.slotted():
			bad(f.name, errors.New("needs a quota of time slots (the local backend, or redis without a Burst above 1)"))
		}
	}
	switch c.Backend {
	case quotaLocal:
		if _, err := quota.ParseRate(c.Rate); err != nil {
			bad("Rate", err)
		}
		if c.Addr != "" {
			bad("Addr", errors.New("not used with the local backend"))
		}
		if err := c.checkBuild(); len(errs) == 0 && err != nil {
			bad("Rate", err) // the other fields are fine: the rate is too large
		}
		return errors.Join(errs...)
	case quotaRedis:
		if _, err := quota.ParseRate(c.Rate); err != nil {
			bad("Rate", err)
		}
		if c.Burst < 0 {
			bad("Burst", fmt.Errorf("must be >= 0, got %d", c.Burst))
		}
		if err := c.checkBuild(); len(errs) == 0 && err != nil {
			field := "Rate"
			if one := (QuotaConfig{Backend: c.Backend, Rate: c.Rate, Addr: "localhost:1"}); one.checkBuild() == nil {
				field = "Burst" // the rate alone is fine
			}
			bad(field, err)
		}
	case quotaEnvoy:
		if c.Domain == "" {
			bad("Domain", errors.New("required with the envoy backend"))
		}
		if c.Descriptors != "" {
			if _, err := sharedquota.ParseEntries(c.Descriptors); err != nil {
				bad("Descriptors", err)
			}
		}
	default:
		bad("Backend", fmt.Errorf("unknown quota backend %q (want none, local, redis or envoy)", c.Backend))
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

// checkBuild makes, without connecting, what a worker makes of c in Setup:
// the quota's client and the pacer held to its rate, so that what they
// refuse (a rate too large for the pacer, or for Redis's integer
// arithmetic) is refused at construction, not by every worker at start.
func (c QuotaConfig) checkBuild() error {
	if c.Addr == "" && c.Backend == quotaRedis {
		c.Addr = "localhost:1" // checked on its own; the client does not dial here
	}
	q, err := c.newQuota()
	if err != nil {
		return err
	}
	if cl, ok := q.(io.Closer); ok {
		cl.Close()
	}
	if r := c.knownRate(); r > 0 {
		if _, err := adaptive.NewPacer(adaptive.PacerConfig{Rate: r * slotRateMargin}); err != nil {
			return fmt.Errorf("%v/s is more than the pacer can keep to: %w", r, err)
		}
	}
	return nil
}

// slotted reports whether c's quota hands out time slots (see QuotaConfig).
func (c QuotaConfig) slotted() bool {
	return c.Backend == quotaLocal || c.Backend == quotaRedis && c.Burst <= 1
}

// knownRate returns the rate of a quota that hands out time slots, in cost
// units per second, or 0.
func (c QuotaConfig) knownRate() float64 {
	if !c.slotted() {
		return 0
	}
	r, err := quota.ParseRate(c.Rate)
	if err != nil {
		return 0
	}
	return r.PerSecond()
}

// newQuota connects to the service of c. A quota that hands out time
// slots (slotted) is a quota.Reserver as well.
func (c QuotaConfig) newQuota() (quota.Quota, error) {
	switch c.Backend {
	case quotaLocal:
		r, err := quota.ParseRate(c.Rate)
		if err != nil {
			return nil, err
		}
		s, err := quota.NewSlots(quota.SlotsConfig{Rate: r, Shares: c.shares()})
		if err != nil {
			return nil, err
		}
		return localQuota{s}, nil
	case quotaRedis:
		r, err := quota.ParseRate(c.Rate)
		if err != nil {
			return nil, err
		}
		burst := c.Burst
		if burst <= 1 {
			burst = 0 // Take is not used: slots
		}
		return sharedquota.NewRedis(sharedquota.RedisConfig{Addr: c.Addr, Rate: r, Burst: burst, Shares: c.shares()})
	case quotaEnvoy:
		var es []sharedquota.Entry
		if c.Descriptors != "" {
			var err error
			if es, err = sharedquota.ParseEntries(c.Descriptors); err != nil {
				return nil, err
			}
		}
		return sharedquota.NewEnvoy(sharedquota.EnvoyConfig{Addr: c.Addr, Domain: c.Domain, Entries: es, KeyEntry: quotaKeyEntry})
	}
	return quota.NoQuota{}, nil
}

// shares returns the shares c keeps for tiers.
func (c QuotaConfig) shares() quota.Shares {
	return quota.Shares{High: c.HighShare, Normal: c.NormalShare}
}

// localQuota is the local backend: Slots, and a Take that permit
// pools never call (they reserve slots).
type localQuota struct{ *quota.Slots }

func (localQuota) Take(context.Context, string, int, time.Time) (quota.Grant, error) {
	return quota.Grant{}, errors.New("throttle: the local quota hands out slots, not counts")
}

// WithQuota makes every group, on every worker, take permits from a quota
// shared with every other client of the same service and key, a few calls'
// worth at a time, never one round trip per element. What a group cannot
// get permits for is postponed, as the adaptive throttle's postponements
// are; the adaptive throttle still reacts to 429s on top, for a backend
// that allows less than the quota or is spent by others. A quota that hands
// out time slots sends each call on its slot, and the pacer starts at its
// rate instead of slow-starting. See QuotaConfig for the services and for
// failing open or closed.
func WithQuota(q QuotaConfig) Option { return func(c *config) { c.Quota = q } }

// Metric names of the shared quota's Beam metrics (in namespace), named as
// those of Beam's EnvoyRateLimiter (Java, Python).
const (
	metricQuotaRequests   = "ratelimit-requests-total" // round trips to the quota service begun
	metricQuotaAllowed    = "ratelimit-allowed"        // round trips that granted every permit asked
	metricQuotaLimited    = "ratelimit-throttled"      // round trips that granted fewer
	metricQuotaErrors     = "ratelimit-rpc-errors"     // round trips that failed or timed out
	metricQuotaPermits    = "ratelimit-permits"        // permits granted
	metricQuotaLapsed     = "ratelimit-permits-lapsed" // permits unspent at the end of their window
	metricQuotaDown       = "ratelimit-service-down"   // times the service went down: a round trip failed after an answer, or first
	metricQuotaFailedOpen = "ratelimit-failed-open"    // calls sent without permits, the service being down
	metricQuotaMissed     = "ratelimit-slots-missed"   // slots a call got to too late to use (see WithQuota)
	metricQuotaReleased   = "ratelimit-slots-released" // slots given back to the quota unused
)

// The shared quota's Beam metrics, one for each name above.
var (
	quotaRequests   = beam.NewCounter(namespace, metricQuotaRequests)
	quotaAllowed    = beam.NewCounter(namespace, metricQuotaAllowed)
	quotaLimited    = beam.NewCounter(namespace, metricQuotaLimited)
	quotaErrors     = beam.NewCounter(namespace, metricQuotaErrors)
	quotaPermits    = beam.NewCounter(namespace, metricQuotaPermits)
	quotaLapsed     = beam.NewCounter(namespace, metricQuotaLapsed)
	quotaDown       = beam.NewCounter(namespace, metricQuotaDown)
	quotaFailedOpen = beam.NewCounter(namespace, metricQuotaFailedOpen)
	quotaMissed     = beam.NewCounter(namespace, metricQuotaMissed)
	quotaReleased   = beam.NewCounter(namespace, metricQuotaReleased)
)
