package throttle

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/beamthrottle/beamthrottle/internal/defaults"
	"github.com/beamthrottle/beamthrottle/internal/firing"
)

// bufferBatch is how many elements the keying step packs into one write to
// a group's buffer.
const bufferBatch = 500

// costBy is how elements are charged: one unit each by default.
type costBy int

const (
	costElement costBy = iota // 1 per element
	costFunc                  // WithCost's function
	costBytes                 // WithByteCost: the payload's size
	costCall                  // WithCallCost: 1 per call
)

// hook is a user's value given to a typed option (WithKeyFunc, WithCost,
// WithCacheKey, WithPriority),
// with the element type its method takes.
type hook struct {
	v    any
	elem reflect.Type
}

func newHook[E any](v any) hook { return hook{v: v, elem: reflect.TypeFor[E]()} }

// check reports whether h may be called with elements of type elemT.
func (h hook) check(option string, elemT reflect.Type) error {
	if h.v == nil {
		return &OptionError{Option: option, Err: errors.New("nil")}
	}
	if h.elem != elemT {
		return &OptionError{Option: option, Err: fmt.Errorf("%T takes %v, but the input PCollection holds %v", h.v, h.elem, elemT)}
	}
	return nil
}

// config is filled by Options: the settings the throttling DoFn takes
// whole, and the user's values (key, cost, cache key and priority
// functions, classifier) that the transform checks against the input's
// type and hands to the DoFns.
type config struct {
	settings
	KeyFunc     hook
	Classifier  any
	BufferBatch int
	MaxPayload  int
	Cost        hook
	CostBy      costBy
	CacheKey    hook // WithCacheKey
	Priority    hook // WithPriority
}

func defaultConfig() config {
	// MaxWait, MaxStall, MaxBuffered, MaxPayload and BytesPerCall are 0: no
	// bound.
	return config{
		settings: settings{
			Settings: firing.Settings{
				BatchSize:     defaults.BatchSize,
				BatchInterval: defaults.BatchInterval,
				MaxAttempts:   defaults.MaxAttempts,
				MaxAge:        defaults.MaxAge,
				CallsInFlight: defaults.CallsInFlight,
				ItemsPerCall:  defaults.ItemsPerCall,
			},
			Groups: defaults.Groups,
			// Mode "" is ModePaced (resolved); Adaptive's zero fields are
			// adaptive's defaults.
			CallTimeout: defaults.CallTimeout,
		},
		BufferBatch: bufferBatch,
	}
}

// newConfig applies opts to the defaults, resolves the defaults that depend
// on other options, and validates the result.
func newConfig(opts []Option) (config, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	cfg = cfg.resolved()
	return cfg, cfg.validate()
}

// ValidateOptions reports whether opts configure Adaptive validly, as
// TryAdaptive would find before building anything: nil, or every fault,
// each an *OptionError, joined with errors.Join. Options are applied in
// order, but no option undoes another: each sets its own settings, and
// options that contradict each other are a fault whatever their order.
func ValidateOptions(opts ...Option) error {
	_, err := newConfig(opts)
	return err
}

// resolved fills defaults that depend on other options, spells the
// strategy as its constant (an unknown one is left for validate), and sets
// the settings the DoFn reads from the user's values (CostPerCall,
// Priorities).
func (c config) resolved() config {
	c.CostPerCall = c.CostBy == costCall
	c.Priorities = c.Priority.v != nil
	c.Mode = Mode(strings.ToLower(string(c.Mode)))
	if c.Mode == "" {
		c.Mode = ModePaced
	}
	if s, err := parseStrategy(c.Strategy); err == nil {
		c.Strategy = s
	}
	if c.Strategy == "" {
		c.Strategy = Route
		if c.Mode == ModePaced {
			c.Strategy = Postpone
		}
	}
	if c.Scope == "" {
		c.Scope = ScopeGroup
		if c.Mode == ModePaced {
			c.Scope = ScopeWorker
		}
	}
	return c
}

// validate checks the transform's own settings here, the algorithm's in
// adaptive.SREConfig.Validate and the shared quota's in QuotaConfig.Validate:
// each rule in one place.
func (c config) validate() error {
	var errs []error
	bad := func(option, format string, args ...any) {
		errs = append(errs, &OptionError{Option: option, Err: fmt.Errorf(format, args...)})
	}
	if c.Groups < 1 {
		bad("WithGroups", "must be >= 1, got %d", c.Groups)
	}
	if c.Mode != ModePaced && c.Mode != ModeSRE {
		bad("WithMode", "must be %s or %s, got %q", ModeSRE, ModePaced, c.Mode)
	}
	if err := checkScope(c.Scope); err != nil {
		errs = append(errs, err)
	}
	if c.BatchSize < 1 {
		bad("WithBatchSize", "must be >= 1, got %d", c.BatchSize)
	}
	if c.BatchInterval <= 0 {
		bad("WithBatchInterval", "must be > 0, got %v", c.BatchInterval)
	}
	if c.MaxAttempts < 1 {
		bad("WithMaxAttempts", "must be >= 1, got %d", c.MaxAttempts)
	}
	if c.MaxAge <= 0 {
		bad("WithMaxAge", "must be > 0, got %v", c.MaxAge)
	}
	if c.CallTimeout <= 0 {
		bad("WithCallTimeout", "must be > 0, got %v", c.CallTimeout)
	}
	if c.CallsInFlight < 0 {
		bad("WithCallsInFlight", "must be >= 0 (0 sizes it to the pace), got %d", c.CallsInFlight)
	}
	if c.MaxBuffered < 0 {
		bad("WithMaxBuffered", "must be >= 0, got %d", c.MaxBuffered)
	}
	if c.MaxWait < 0 {
		bad("WithMaxWait", "must be >= 0, got %v", c.MaxWait)
	}
	if c.MaxStall < 0 {
		bad("WithMaxStall", "must be >= 0, got %v", c.MaxStall)
	}
	if c.MaxPayload < 0 {
		bad("WithMaxPayloadBytes", "must be >= 0, got %d", c.MaxPayload)
	}
	if c.ItemsPerCall < 1 || c.ItemsPerCall > maxItemsPerCall {
		bad("WithItemsPerCall", "must be in [1, %d], got %d", maxItemsPerCall, c.ItemsPerCall)
	}
	if c.BytesPerCall < 0 {
		bad("WithBytesPerCall", "must be >= 0, got %d", c.BytesPerCall)
	}
	if c.CacheTTL < 0 {
		bad("WithCache", "ttl must be >= 0, got %v", c.CacheTTL)
	}
	if _, err := parseStrategy(c.Strategy); err != nil {
		errs = append(errs, err)
	}
	// One flat list: the quota's and the algorithm's faults beside these.
	for _, err := range []error{c.Quota.validate(), optionErrors(c.Adaptive.Validate())} {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			errs = append(errs, j.Unwrap()...)
		} else {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
