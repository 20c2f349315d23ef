package throttle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
	"github.com/beamthrottle/beamthrottle/transforms/throttle/quota"
)

// quotaNone is the QuotaConfig.Backend of no shared quota, as is "".
const quotaNone = "none"

// QuotaConfig configures a quota shared by every group, worker and job that
// uses the same service and key (see WithQuota). Its fields are plain values,
// serialised into the DoFn; each worker opens the backend (quota.Open) in
// Setup.
//
// A backend whose quota is a quota.Reserver (redis without a Burst above 1,
// and local) hands out time slots: every call is sent on a slot of its
// own, the slots of all workers together spaced evenly at Rate, so that a
// strict limiter (a GCRA with no burst, as API gateways are commonly
// configured) sees no two calls closer than it allows. Others (redis with
// a Burst above 1, envoy) grant counts of permits, which each worker
// spends as its adaptive throttle paces it: for APIs that allow bursts or
// count in windows.
type QuotaConfig struct {
	// Backend is the name of the quota's backend (see package quota):
	//   - "none" (or ""): no shared quota; the adaptive throttle alone
	//     limits calls;
	//   - "local", built in: a known rate, Rate, kept in the worker's memory
	//     for the groups of the transform on that worker: no service,
	//     nothing shared with other workers or jobs;
	//   - "redis": a GCRA in Redis (Memorystore included), at Rate;
	//   - "envoy": Envoy's rate-limit service (RLS v3), whose
	//     configuration holds the limit for Domain and Descriptors;
	//   - any other name registered with quota.Register.
	// The backends over services are registered by importing their
	// packages, transforms/throttle/quota/redisquota and envoyquota (a
	// blank import will do); a name no imported package registered is
	// refused at construction.
	Backend string
	// Addr is the service's host:port (Redis, or the rate-limit service's
	// gRPC address).
	Addr string
	// Key names the quota: every client using the same key shares it. For
	// Redis it is the key of the GCRA; for Envoy it is the value of the
	// descriptor's last entry, "key" (see Descriptors). Required by both.
	Key string
	// Rate is the quota of the redis or local backend, in cost units, written
	// N/unit with unit s, m, h or a Go duration: "600/m", "10/s",
	// "36000/h", "5/2s".
	Rate string
	// Burst, for Redis, above 1, makes the quota a token bucket holding
	// that many permits, granted as counts; 0 or 1 means time slots with
	// no burst.
	Burst int
	// Domain is the Envoy domain of the limits: the backend's parameter
	// "domain" (see Params).
	Domain string
	// Descriptors are the Envoy descriptor's entries before the key, as
	// "k=v,k2=v2"; empty means only the key entry. The backend's parameter
	// "descriptors".
	Descriptors string
	// Params are settings of the backend's own, by name
	// (quota.Settings.Params). Domain and Descriptors, when set, take the
	// place of the entries "domain" and "descriptors".
	Params map[string]string
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

// enabled reports whether c asks for a shared quota.
func (c QuotaConfig) enabled() bool { return c.Backend != "" && c.Backend != quotaNone }

// settings returns what c's backend is opened with, and the fault of a
// Rate that does not parse (Rate is then left zero).
func (c QuotaConfig) settings() (quota.Settings, error) {
	s := quota.Settings{Addr: c.Addr, Key: c.Key, Burst: c.Burst, Shares: quota.Shares{High: c.HighShare, Normal: c.NormalShare}}
	if c.Domain != "" || c.Descriptors != "" || len(c.Params) > 0 {
		s.Params = maps.Clone(c.Params)
		if s.Params == nil {
			s.Params = map[string]string{}
		}
		for name, v := range map[string]string{"domain": c.Domain, "descriptors": c.Descriptors} {
			if v != "" {
				s.Params[name] = v
			}
		}
	}
	if c.Rate == "" {
		return s, nil
	}
	r, err := quota.ParseRate(c.Rate)
	s.Rate = r
	return s, err
}

// validate reports whether c is usable: nil, or every fault, each an
// *OptionError for WithQuota naming the field at fault, joined with
// errors.Join. It opens the backend, which checks its settings without
// contacting its service, and closes it.
func (c QuotaConfig) validate() error {
	var errs []error
	bad := func(field string, err error) {
		errs = append(errs, &OptionError{Option: "WithQuota", Field: field, Err: err})
	}
	shares := []struct {
		name string
		v    float64
	}{{"HighShare", c.HighShare}, {"NormalShare", c.NormalShare}}
	if !c.enabled() {
		for _, f := range shares {
			if f.v != 0 {
				bad(f.name, errors.New("needs a quota backend (local or redis): without one there is no rate to share"))
			}
		}
		return errors.Join(errs...)
	}
	if names := quota.Backends(); !slices.Contains(names, c.Backend) {
		bad("Backend", fmt.Errorf("unknown quota backend %q (want none or a registered one: %s): "+
			"a backend registers itself when its package is imported, as _ %q does redis",
			c.Backend, strings.Join(names, ", "), quotaPackage+"/redisquota"))
		return errors.Join(errs...)
	}
	sharesOK := true
	for _, f := range shares {
		if !(f.v >= 0 && f.v < 1) {
			bad(f.name, fmt.Errorf("must be at least 0 and less than 1, got %v", f.v))
			sharesOK = false
		}
	}
	s, rateErr := c.settings()
	if rateErr != nil {
		bad("Rate", rateErr)
	}
	if !sharesOK {
		s.Shares = quota.Shares{} // reported
	}
	errs = append(errs, c.checkOpen(s, rateErr == nil)...)
	if c.Timeout < 0 {
		bad("Timeout", fmt.Errorf("must be >= 0, got %v", c.Timeout))
	}
	return errors.Join(errs...)
}

// quotaPackage is the import path of package quota, under which the
// backends' packages are.
const quotaPackage = "github.com/beamthrottle/beamthrottle/transforms/throttle/quota"

// checkOpen opens c's backend for s, as a worker does in Setup but without
// contacting the service, and returns its faults as OptionErrors, and
// those of c's shares and rate given what the quota is: shares need time
// slots, and the pacer keeps to the rate of a quota of time slots, so the
// rate must be one it can keep. With rateOK false (Rate did not parse and
// was reported), the backend's faults of Rate are not reported again;
// shares out of range were reported, and s holds none.
func (c QuotaConfig) checkOpen(s quota.Settings, rateOK bool) []error {
	bad := func(field string, err error) error { return &OptionError{Option: "WithQuota", Field: field, Err: err} }
	q, err := quota.Open(context.Background(), c.Backend, s)
	if err != nil {
		var errs []error
		for _, e := range flatten(optionErrors(err)) {
			oe, ok := errors.AsType[*OptionError](e)
			switch {
			case !ok:
				errs = append(errs, bad("Backend", e)) // the backend could not be opened
			case rateOK || oe.Field != "Rate":
				errs = append(errs, e)
			}
		}
		return errs
	}
	if cl, ok := q.(io.Closer); ok {
		cl.Close()
	}
	if _, slotted := q.(quota.Reserver); !slotted {
		var errs []error
		for _, f := range []struct {
			name string
			v    float64
		}{{"HighShare", s.Shares.High}, {"NormalShare", s.Shares.Normal}} {
			if f.v > 0 {
				errs = append(errs, bad(f.name, errors.New("needs a quota of time slots (the local backend, or redis without a Burst above 1)")))
			}
		}
		return errs
	}
	if !rateOK {
		return nil
	}
	if s.Rate == (quota.Rate{}) {
		return []error{bad("Rate", fmt.Errorf("required: the %s backend hands out time slots at Rate", c.Backend))}
	}
	if _, err := adaptive.NewPacer(adaptive.PacerConfig{Rate: s.Rate.PerSecond() * slotRateMargin}); err != nil {
		return []error{bad("Rate", fmt.Errorf("%v/s is more than the pacer can keep to: %w", s.Rate.PerSecond(), err))}
	}
	return nil
}

// flatten returns the errors joined in err (errors.Join), or err alone.
func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// newQuota opens the backend of c (quota.Open): a worker's quota,
// connected to its service on first use. A quota that hands out time
// slots is a quota.Reserver as well.
func (c QuotaConfig) newQuota() (quota.Quota, error) {
	if !c.enabled() {
		return quota.NoQuota{}, nil
	}
	s, err := c.settings()
	if err != nil {
		return nil, err
	}
	return quota.Open(context.Background(), c.Backend, s)
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
