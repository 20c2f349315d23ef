package testserver

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"golang.org/x/net/http/httpguts"
)

// Mode selects how the quota is enforced.
type Mode string

const (
	// TokenBucket, the default, holds up to Quota tokens and refills them in
	// steps: every Refill it adds Quota×Refill/Period tokens, up to Quota.
	// Each accepted request takes one token, or as many as its cost (see
	// Config.CostHeader), all or nothing.
	TokenBucket Mode = "token-bucket"
	// FixedWindow accepts Quota requests per window of length Period. The
	// counter resets at each window boundary; windows start at the time the
	// Handler was made, or drift with Config.WindowJitter. With a cost, it
	// accepts Quota cost units per window: a request is accepted iff its
	// whole cost fits in what is left of the window's quota.
	FixedWindow Mode = "fixed-window"
	// GCRA is a strict limiter, the generic cell rate algorithm as API
	// gateways configure it. With emission interval T = Period/Quota and
	// tolerance tau = (Burst-1)×T, a request at t is accepted iff
	// t ≥ TAT - tau, where TAT, the theoretical arrival time, starts at the
	// time the Handler was made; on accept TAT = max(TAT, t) + T. With no
	// burst, requests must be at least T apart (10 per second: 100ms); with
	// a burst of B, up to B may come back to back after an idle period.
	// Retry-After is the wait until a request would be accepted.
	//
	// A request of cost c counts as c requests at once: it is accepted
	// iff t ≥ max(TAT, t) + (c-1)×T - tau, and then TAT = max(TAT, t) + c×T.
	// So a cost of at most Burst (or 1 with no burst) fits after an idle
	// period, and a larger one never does.
	GCRA Mode = "gcra"
	// Queue never refuses for the quota: it serves Quota requests (or cost
	// units) per Period one after the other, in arrival order, and a
	// request that comes while others wait is answered once its turn has
	// come, plus the latency. A server that queues instead of refusing
	// (nginx's limit_req with a burst and no nodelay, an inference server)
	// answers later and later as it is overloaded, never with 429.
	Queue Mode = "queue"
)

// Defaults used for zero Config fields.
const (
	DefaultPeriod       = time.Second
	DefaultRefill       = 100 * time.Millisecond
	DefaultMaxBodyBytes = 1 << 20
	DefaultMaxConns     = 256
)

// ErrConfig is wrapped by every configuration error returned by NewHandler,
// NewServer and Listen.
var ErrConfig = errors.New("testserver: invalid config")

// Config configures a Handler or Server. Zero values mean the documented
// defaults, so the zero Config is an unlimited, fault-free echo server.
//
// # Costs
//
// By default every API request costs 1 unit of Quota. With CostHeader or
// CostField set, a request costs what it says, and Quota counts cost units
// per Period: Quota 60000, Period time.Minute and CostField "tokens" is a
// quota of 60000 tokens per minute. A request's cost is read, in this
// order of precedence:
//   - from the request header CostHeader, if set and present: a
//     non-negative decimal integer;
//   - from the top-level field CostField of a JSON-object body, if set;
//     for a batch (a JSON-array body, see Handler.ServeHTTP), the sum of
//     the field over the items; a body or item that is not an object, or
//     an object without the field, counts 1; a field that is there must
//     be a non-negative JSON integer;
//   - else 1.
//
// A cost that is not a non-negative integer is answered 400 (counted in
// Stats.BadCost); a cost larger than the quota can ever accept at once is
// answered 413 (Stats.CostTooLarge). Neither uses quota. Cost 0 is
// accepted and uses no quota.
type Config struct {
	// Quota is the number of requests allowed per Period, or of cost units
	// with CostHeader or CostField set; 0 means unlimited.
	Quota int
	// Period is the quota period; 0 means DefaultPeriod (1s).
	Period time.Duration
	// Mode is the quota algorithm; "" means TokenBucket.
	Mode Mode
	// Refill is the token bucket refill step; 0 means DefaultRefill
	// (100ms), or Period if that is shorter. Ignored for FixedWindow and
	// GCRA.
	Refill time.Duration
	// Burst is, for GCRA, how many requests (or cost units) may come back
	// to back after an idle period; 0 or 1 means no burst. It must be 0 in
	// the other modes, whose burst is fixed by Quota.
	Burst int
	// WindowJitter makes FixedWindow's windows drift, as an API's may
	// whose counter resets on a schedule of its own: each window lasts
	// Period plus a uniformly random extra in [0, WindowJitter), and the
	// first began a uniformly random time in [0, Period) before the
	// Handler was made, so that windows line up neither with the
	// server's start nor with whole seconds. On average a window lasts
	// Period + WindowJitter/2. The draws come from a source seeded with
	// Seed, so one seed gives the same windows. A 429's Retry-After is
	// the wait until the current window's real end, and a new period
	// set with SetQuota starts a window at once, of the new period plus a
	// new draw. 0 means windows of exactly Period from the time the
	// Handler was made. It must be 0 in the other modes, and Period +
	// WindowJitter must fit in a time.Duration.
	WindowJitter time.Duration
	// Latency is added to every API request before it is answered: the
	// same for every request, or, with LatencyP99, the median of a
	// lognormal draw per request.
	Latency time.Duration
	// LatencyP99, when above Latency, makes each request's latency a draw
	// of a lognormal distribution with median Latency and 99th percentile
	// LatencyP99 (heavy-tailed, as LLM and translation APIs answer), from
	// the seeded jitter source. Zero means a constant Latency.
	LatencyP99 time.Duration
	// Jitter adds a uniformly random extra delay in [0, Jitter).
	Jitter time.Duration
	// RefuseAtOnce answers a request the quota refuses (429) without the
	// latency and jitter, as a gateway in front of a slow backend does:
	// nginx limit_req, Envoy's rate limit filter and the hosted LLM APIs
	// refuse before the backend works. False delays every answer alike,
	// the harder case for a client, which learns of a refusal only a
	// latency after the request.
	RefuseAtOnce bool
	// NoRetryAfter leaves the Retry-After header out of every 429 and
	// outage answer, as some APIs do: a client then has to find the
	// quota's timing on its own.
	NoRetryAfter bool
	// Advertise, if not AdvertiseNone, names the header family in which
	// every answer (success or refusal) tells the client the quota: its
	// limit, what remains of it and when it is full again. A token bucket
	// and GCRA advertise as buckets that refill (the reset is when they are
	// full), a fixed window as a window (the reset is its end). Mode Queue
	// and an unlimited quota advertise nothing.
	Advertise Advertise
	// AdvertiseQuota, if positive, is the quota per Period that the
	// Advertise headers tell instead of Quota, as an API whose headers
	// tell a plan's limit while its gateway enforces another: the limit
	// advertised is AdvertiseQuota, and what remains is AdvertiseQuota
	// less what the enforced quota has used of its capacity, at least 0
	// (GCRA, whose capacity is its burst, tells what remains of its burst,
	// at most AdvertiseQuota); the reset is the enforced quota's. It is
	// fixed when the Handler is made (SetQuota changes only the quota
	// enforced). 0 advertises the quota enforced. It needs Advertise and
	// must not be negative.
	AdvertiseQuota int
	// ErrorRate is the fraction, in [0, 1], of under-quota requests answered
	// with 500. Such requests still use up quota.
	ErrorRate float64
	// ItemErrorRate is the probability, in [0, 1], that each item of a
	// batch answered 200 fails: its entry in the answer is
	// {"status":500,"error":"testserver: injected item error"} instead of
	// the item. Items fail independently; requests that are not batches
	// are not affected.
	ItemErrorRate float64
	// CostHeader, if not "", names the request header holding a request's
	// cost, such as "X-Cost". See Costs above.
	CostHeader string
	// CostField, if not "", names the top-level JSON field holding the
	// cost of a request or batch item, such as "tokens". See Costs above.
	CostField string
	// MaxBodyBytes limits API request bodies; larger ones get 413.
	// 0 means DefaultMaxBodyBytes (1 MiB).
	MaxBodyBytes int64
	// MaxConns limits concurrent connections to a Server; excess
	// connections wait to be accepted. 0 means DefaultMaxConns (256).
	// A bare Handler ignores it.
	MaxConns int
	// Seed seeds the random sources for jitter, errors, item errors and
	// drifting windows (WindowJitter). Two handlers with the same Seed make
	// the same sequence of choices; 0 is a valid seed like any other.
	Seed uint64
	// Now is the clock used for quota decisions and the per-second stats
	// series; nil means time.Now. Tests can inject a fake clock to step
	// time without sleeping. Latency always uses real time.
	Now func() time.Time
	// Logger receives one line per admin change (and, at debug level, one
	// line per API request); nil discards logs.
	Logger *slog.Logger
}

// withDefaults returns c with zero fields replaced by defaults, or an error
// wrapping ErrConfig.
func (c Config) withDefaults() (Config, error) {
	if c.Period == 0 {
		c.Period = DefaultPeriod
	}
	if c.Mode == "" {
		c.Mode = TokenBucket
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.MaxConns == 0 {
		c.MaxConns = DefaultMaxConns
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	switch {
	case c.Mode != TokenBucket && c.Mode != FixedWindow && c.Mode != GCRA && c.Mode != Queue:
		return c, fmt.Errorf("%w: Mode %q: want %q, %q, %q or %q", ErrConfig, c.Mode, TokenBucket, FixedWindow, GCRA, Queue)
	case c.Mode == Queue && c.Quota <= 0:
		return c, fmt.Errorf("%w: Mode %q needs a positive Quota (its service rate), got %d", ErrConfig, c.Mode, c.Quota)
	case !c.Advertise.valid():
		return c, fmt.Errorf("%w: Advertise %q: want one of %q", ErrConfig, c.Advertise, advertiseFamilies[1:])
	case c.AdvertiseQuota < 0:
		return c, fmt.Errorf("%w: AdvertiseQuota %d is negative", ErrConfig, c.AdvertiseQuota)
	case c.AdvertiseQuota != 0 && c.Advertise == AdvertiseNone:
		return c, fmt.Errorf("%w: AdvertiseQuota %d needs Advertise", ErrConfig, c.AdvertiseQuota)
	case c.Burst < 0:
		return c, fmt.Errorf("%w: Burst %d is negative", ErrConfig, c.Burst)
	case c.Burst != 0 && c.Mode != GCRA:
		return c, fmt.Errorf("%w: Burst %d is only for Mode %q, not %q", ErrConfig, c.Burst, GCRA, c.Mode)
	case c.WindowJitter < 0:
		return c, fmt.Errorf("%w: WindowJitter %v is negative", ErrConfig, c.WindowJitter)
	case c.WindowJitter != 0 && c.Mode != FixedWindow:
		return c, fmt.Errorf("%w: WindowJitter %v is only for Mode %q, not %q", ErrConfig, c.WindowJitter, FixedWindow, c.Mode)
	case c.Period > 0 && c.WindowJitter > math.MaxInt64-c.Period:
		return c, fmt.Errorf("%w: Period %v + WindowJitter %v is too long", ErrConfig, c.Period, c.WindowJitter)
	case c.Refill < 0:
		return c, fmt.Errorf("%w: Refill %v is negative", ErrConfig, c.Refill)
	case c.Latency < 0:
		return c, fmt.Errorf("%w: Latency %v is negative", ErrConfig, c.Latency)
	case c.Jitter < 0:
		return c, fmt.Errorf("%w: Jitter %v is negative", ErrConfig, c.Jitter)
	case c.LatencyP99 != 0 && (c.Latency <= 0 || c.LatencyP99 <= c.Latency):
		return c, fmt.Errorf("%w: LatencyP99 %v must be above a positive Latency (the median), got %v", ErrConfig, c.LatencyP99, c.Latency)
	case !(c.ErrorRate >= 0 && c.ErrorRate <= 1):
		return c, fmt.Errorf("%w: ErrorRate %v is not in [0, 1]", ErrConfig, c.ErrorRate)
	case !(c.ItemErrorRate >= 0 && c.ItemErrorRate <= 1):
		return c, fmt.Errorf("%w: ItemErrorRate %v is not in [0, 1]", ErrConfig, c.ItemErrorRate)
	case c.CostHeader != "" && !httpguts.ValidHeaderFieldName(c.CostHeader):
		return c, fmt.Errorf("%w: CostHeader %q is not a valid header name", ErrConfig, c.CostHeader)
	case c.MaxBodyBytes < 0:
		return c, fmt.Errorf("%w: MaxBodyBytes %d is negative", ErrConfig, c.MaxBodyBytes)
	case c.MaxConns < 0:
		return c, fmt.Errorf("%w: MaxConns %d is negative", ErrConfig, c.MaxConns)
	}
	if err := checkQuota(c.Quota, c.Period, c.Refill); err != nil {
		return c, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	return c, nil
}

// checkQuota reports whether quota and period (already defaulted) are usable
// with the configured refill step (0 = default).
func checkQuota(quota int, period, refill time.Duration) error {
	if quota < 0 {
		return fmt.Errorf("quota %d is negative", quota)
	}
	if period <= 0 {
		return fmt.Errorf("period %v is not positive", period)
	}
	r := effectiveRefill(refill, period)
	g := gcd(int64(period), int64(r))
	if int64(quota) > math.MaxInt64/(max(int64(period), int64(r))/g) {
		return fmt.Errorf("quota %d per %v is too large", quota, period)
	}
	return nil
}

// effectiveRefill is the refill step for a configured refill (0 = default)
// and period.
func effectiveRefill(refill, period time.Duration) time.Duration {
	if refill > 0 {
		return refill
	}
	return min(DefaultRefill, period)
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
