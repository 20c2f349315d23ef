package throttle

import (
	"fmt"
	"time"

	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// Strategy says what happens to an element that was throttled, by the
// client or by the server.
type Strategy string

// The throttling strategies (the original Java tool's DLQ, DROP and RETRY).
const (
	// Route sends throttled elements to the ClientThrottled or
	// ServerThrottled output. The default.
	Route Strategy = "route"
	// Drop discards throttled elements; they are only counted in the
	// "dropped" metric.
	Drop Strategy = "drop"
	// Retry keeps a throttled element buffered and tries it again on a later
	// batch, no sooner than the server's Retry-After, for at most
	// MaxAttempts attempts and MaxAge since its first attempt; then it is
	// routed to its throttled output with its attempt count. Unlike the
	// original tool's RETRY, it is bounded.
	Retry Strategy = "retry"
	// Postpone keeps an element the throttle does not send now in its
	// group's queue for a later firing (a postponement, not a rejection),
	// and so does an answer 429 (no sooner than its Retry-After). An element
	// goes to ClientThrottled, or to ServerThrottled if its last attempt was
	// answered 429, only when a bound says so: it waited longer than
	// MaxWait, or it arrived at a group holding MaxBuffered elements. In SRE
	// mode a draw r < p postpones the element by one batch interval instead
	// of rejecting it. MaxAttempts and MaxAge do not apply.
	Postpone Strategy = "postpone"
)

// ParseStrategy parses "route", "drop", "retry" or "postpone" (also the
// original tool's "dlq" for route). "" is the mode's default: postpone in
// ModePaced, route in ModeSRE.
func ParseStrategy(s string) (Strategy, error) {
	switch s {
	case "":
		return "", nil
	case "route", "dlq", "DLQ":
		return Route, nil
	case "drop", "DROP":
		return Drop, nil
	case "retry", "RETRY":
		return Retry, nil
	case "postpone", "POSTPONE":
		return Postpone, nil
	}
	return "", fmt.Errorf("throttle: unknown strategy %q (want route, drop, retry or postpone)", s)
}

// Scope says which groups share one throttling policy.
type Scope string

// The scopes.
const (
	// ScopeWorker gives every group of the transform on a worker (one
	// process: a Dataflow or portable-runner SDK harness, or the process
	// running Prism) one policy, which they use together: the worker's
	// sends are paced as one stream, a 429 slows all its groups, and the
	// groups share the slots evenly. The policy lives in the worker's
	// memory, not in Beam state; a restarted worker starts it afresh. The
	// default in ModePaced.
	ScopeWorker Scope = "worker"
	// ScopeGroup gives each group its own policy, kept in the group's Beam
	// state between firings, so it follows the group from worker to
	// worker. Each group decides from what it saw alone. The default in
	// ModeSRE, as in the original tool.
	ScopeGroup Scope = "group"
)

// ParseScope parses "worker" or "group". "" is the mode's default: worker
// in ModePaced, group in ModeSRE.
func ParseScope(s string) (Scope, error) {
	switch Scope(s) {
	case "", ScopeWorker, ScopeGroup:
		return Scope(s), nil
	}
	return "", fmt.Errorf("throttle: unknown scope %q (want worker or group)", s)
}

// Defaults of the options. The throughput ceiling of one group is
// BatchSize / BatchInterval calls per second (with CallsInFlight 1 and a
// fast backend), so the ceiling of the transform is Groups × that.
const (
	DefaultGroups = 1
	// DefaultMode is the pacer: it postpones what it cannot send now and
	// holds up on every backend of the simulator (docs/sim/results.md),
	// where the SRE throttle wastes 30–60 % of its calls. ModeSRE is the
	// original tool's behaviour.
	DefaultMode          = adaptive.ModePaced
	DefaultBatchSize     = 100
	DefaultBatchInterval = time.Second
	DefaultK             = 2.0
	DefaultResetInterval = time.Minute
	DefaultMaxAttempts   = 3
	DefaultMaxAge        = 10 * time.Minute
	DefaultCallTimeout   = 30 * time.Second
	DefaultCallsInFlight = 1
	// DefaultMaxWait bounds nothing: an element waits in its group's queue
	// until it can be sent. Streaming pipelines should set WithMaxWait (the
	// pipeline's --max_wait does, to 10 minutes, for a subscription): see
	// docs/design/postponement.md.
	DefaultMaxWait time.Duration = 0
)

// config is filled by Options. Its exported fields are serialised into the
// DoFns.
type config struct {
	Groups        int
	BatchSize     int
	BatchInterval time.Duration
	Adaptive      adaptive.Config
	KeyFunc       any
	Strategy      Strategy
	MaxAttempts   int
	MaxAge        time.Duration
	CallTimeout   time.Duration
	CallsInFlight int
	Classifier    any
	Seed          uint64
	HasSeed       bool
	BufferBatch   int
	MaxPayload    int
	MaxBuffered   int
	MaxWait       time.Duration
	Scope         Scope
	Quota         QuotaConfig
}

func defaultConfig() config {
	return config{
		Groups:        DefaultGroups,
		BatchSize:     DefaultBatchSize,
		BatchInterval: DefaultBatchInterval,
		Adaptive:      adaptive.Config{Mode: DefaultMode, K: DefaultK, Window: adaptive.FixedReset, ResetInterval: DefaultResetInterval},
		MaxAttempts:   DefaultMaxAttempts,
		MaxAge:        DefaultMaxAge,
		CallTimeout:   DefaultCallTimeout,
		CallsInFlight: DefaultCallsInFlight,
		BufferBatch:   500,
	}
}

// resolved fills defaults that depend on other options.
func (c config) resolved() config {
	if c.Strategy == "" {
		c.Strategy = Route
		if c.Adaptive.Mode == adaptive.ModePaced {
			c.Strategy = Postpone
		}
	}
	if c.Scope == "" {
		c.Scope = ScopeGroup
		if c.Adaptive.Mode == adaptive.ModePaced {
			c.Scope = ScopeWorker
		}
	}
	return c
}

func (c config) validate() error {
	switch {
	case c.Groups < 1:
		return fmt.Errorf("groups must be >= 1, got %d", c.Groups)
	case c.Scope != ScopeWorker && c.Scope != ScopeGroup:
		return fmt.Errorf("unknown scope %q (want worker or group)", c.Scope)
	case c.BatchSize < 1:
		return fmt.Errorf("batch size must be >= 1, got %d", c.BatchSize)
	case c.BatchInterval <= 0:
		return fmt.Errorf("batch interval must be > 0, got %v", c.BatchInterval)
	case c.MaxAttempts < 1:
		return fmt.Errorf("max attempts must be >= 1, got %d", c.MaxAttempts)
	case c.MaxAge <= 0:
		return fmt.Errorf("max age must be > 0, got %v", c.MaxAge)
	case c.CallTimeout <= 0:
		return fmt.Errorf("call timeout must be > 0, got %v", c.CallTimeout)
	case c.CallsInFlight < 1:
		return fmt.Errorf("calls in flight must be >= 1, got %d", c.CallsInFlight)
	case c.MaxBuffered < 0:
		return fmt.Errorf("max buffered must be >= 0, got %d", c.MaxBuffered)
	case c.MaxWait < 0:
		return fmt.Errorf("max wait must be >= 0, got %v", c.MaxWait)
	case c.MaxPayload < 0:
		return fmt.Errorf("max payload bytes must be >= 0, got %d", c.MaxPayload)
	case c.BufferBatch < 1:
		return fmt.Errorf("buffer batch must be >= 1, got %d", c.BufferBatch)
	}
	if _, err := ParseStrategy(string(c.Strategy)); err != nil {
		return err
	}
	if err := c.Quota.Validate(); err != nil {
		return err
	}
	return c.Adaptive.Validate()
}

// Option configures Adaptive.
type Option func(*config)

// WithScope sets which groups share one throttling policy (see Scope). The
// default, "", is ScopeWorker in ModePaced and ScopeGroup in ModeSRE.
func WithScope(sc Scope) Option { return func(c *config) { c.Scope = sc } }

// WithGroups sets how many throttle groups elements are spread over at
// random (default 1). Each group has its own throttle state and buffer, and
// groups are processed in parallel by the runner. Ignored with WithKeyFunc.
func WithGroups(n int) Option { return func(c *config) { c.Groups = n } }

// WithBatchSize sets the maximum number of elements one group processes per
// batch interval (default 100).
func WithBatchSize(n int) Option { return func(c *config) { c.BatchSize = n } }

// WithBatchInterval sets how often a group with buffered elements processes a
// batch (default 1s).
func WithBatchInterval(d time.Duration) Option { return func(c *config) { c.BatchInterval = d } }

// WithK sets the SRE multiplier K (default 2.0, must be > 0). Lower values
// throttle more aggressively: the client sends at most about K times what
// the backend accepts.
func WithK(k float64) Option { return func(c *config) { c.Adaptive.K = k } }

// WithResetInterval selects the fixed-reset window (the default) and sets how
// often the counters are zeroed (default 1 minute).
func WithResetInterval(d time.Duration) Option {
	return func(c *config) {
		c.Adaptive.Window = adaptive.FixedReset
		c.Adaptive.ResetInterval = d
	}
}

// WithSlidingWindow selects the sliding window: counts over the last size
// (default 2 minutes when 0) in buckets of bucket (default 1s when 0), so
// history is forgotten gradually rather than all at once.
func WithSlidingWindow(size, bucket time.Duration) Option {
	return func(c *config) {
		c.Adaptive.Window = adaptive.Sliding
		c.Adaptive.WindowSize = size
		c.Adaptive.Bucket = bucket
	}
}

// WithMode selects the throttle algorithm: adaptive.ModePaced (the
// default: a pacer that spaces calls at the rate the backend accepts and
// postpones the rest) or adaptive.ModeSRE (the original tool's SRE formula,
// which rejects at random). See docs/sim/results.md for how they compare.
func WithMode(m adaptive.Mode) Option { return func(c *config) { c.Adaptive.Mode = m } }

// WithAdaptiveConfig sets the whole algorithm configuration at once,
// including its Mode (whose zero value is ModeSRE).
func WithAdaptiveConfig(ac adaptive.Config) Option { return func(c *config) { c.Adaptive = ac } }

// WithCountFailuresAsRejects makes calls that failed for reasons other than
// overload count as rejected by the backend (by default they count as
// accepted: the backend was not overloaded).
func WithCountFailuresAsRejects() Option {
	return func(c *config) { c.Adaptive.CountFailuresAsRejects = true }
}

// WithKeyFunc replaces the random group key with one computed from the
// element, so throttle state follows a shard, tenant or endpoint. k must be a
// value of a type registered with beam.RegisterType (configured by exported
// fields, not a closure) with a method
//
//	Key(elem E) string
//
// where E is the input element type.
func WithKeyFunc(k any) Option { return func(c *config) { c.KeyFunc = k } }

// WithStrategy sets what happens to throttled elements (default: Postpone in
// ModePaced, Route in ModeSRE).
func WithStrategy(s Strategy) Option { return func(c *config) { c.Strategy = s } }

// WithMaxAttempts bounds the Retry strategy: an element is decided on at most
// n times (default 3).
func WithMaxAttempts(n int) Option { return func(c *config) { c.MaxAttempts = n } }

// WithMaxAge bounds the Retry strategy: an element is not retried once this
// long has passed since its first attempt (default 10 minutes).
func WithMaxAge(d time.Duration) Option { return func(c *config) { c.MaxAge = d } }

// WithCallTimeout sets the per-call timeout (default 30s). A call that has
// not returned by then is abandoned and its element goes to Errors; the
// caller's goroutine is left to finish on its own, so callers should honour
// their context.
func WithCallTimeout(d time.Duration) Option { return func(c *config) { c.CallTimeout = d } }

// WithCallsInFlight sets how many calls one group makes at once (default 1).
// Callers must then be safe for concurrent use.
func WithCallsInFlight(n int) Option { return func(c *config) { c.CallsInFlight = n } }

// WithClassifier overrides clientcall.Classify. k must be a value of a
// registered type implementing clientcall.Classifier.
func WithClassifier(k any) Option { return func(c *config) { c.Classifier = k } }

// WithSeed fixes the random source of the keying and of the throttle
// decisions, for reproducible tests. By default the source is seeded
// randomly.
func WithSeed(seed uint64) Option {
	return func(c *config) {
		c.Seed = seed
		c.HasSeed = true
	}
}

// WithMaxPayloadBytes routes elements whose payload (the bytes of a []byte
// or string element, the JSON of any other) is larger than n bytes to Errors
// without calling the caller. 0, the default, means no limit.
func WithMaxPayloadBytes(n int) Option { return func(c *config) { c.MaxPayload = n } }

// WithMaxBuffered bounds how many elements one group keeps buffered: an
// element arriving at a full buffer goes to ClientThrottled at once with the
// error "Throttled by Client. Group buffer full (n elements)" (load
// shedding, so a backlog cannot grow without bound when the API stays
// slower than the input). 0, the default, means no bound: the backlog lives
// in runner state (persisted by Dataflow; in memory on Prism).
func WithMaxBuffered(n int) Option { return func(c *config) { c.MaxBuffered = n } }

// WithMaxWait bounds how long an element may wait in its group's queue
// (from the first firing that took it, at most one batch interval after it
// arrived, by the throttle's clock) before it goes to
// ClientThrottled, or to ServerThrottled if its last attempt was answered
// 429. 0, the default, means no bound, which suits bounded inputs: every
// element is tried and the job takes as long as the quota needs. Set it for
// streaming inputs, to bound latency and the backlog.
func WithMaxWait(d time.Duration) Option { return func(c *config) { c.MaxWait = d } }
