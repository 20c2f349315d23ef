package adaptive

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// Defaults applied by [Config.WithDefaults] to zero-valued fields.
const (
	// DefaultK is the accepts multiplier used when Config.K is zero.
	DefaultK = 2.0
	// DefaultResetInterval is the FixedReset window length used when Config.ResetInterval is zero.
	DefaultResetInterval = time.Minute
	// DefaultWindowSize is the Sliding window length used when Config.WindowSize is zero.
	DefaultWindowSize = 2 * time.Minute
	// DefaultBucket is the Sliding bucket width used when Config.Bucket is zero.
	DefaultBucket = time.Second
	// DefaultSeed seeds the random source of a Throttler made by [New] with a nil
	// random function and a zero Config.Seed.
	DefaultSeed uint64 = 0x5eed_ada9_7140_0001
	// MaxBuckets bounds the number of buckets of a Sliding window
	// (WindowSize divided by Bucket, rounded up). The ring buffer and the
	// serialised state grow with it.
	MaxBuckets = 1 << 16
)

// Mode selects the throttling policy: the SRE throttle ([SRE], a
// [Throttler] configured by this package's [Config]) or the [Pacer]
// (configured by [PacerConfig]). transforms/throttle and the pipeline's
// --throttle_mode choose with it.
type Mode int

const (
	// ModeSRE is the original tool's throttle: it rejects requests at
	// random with the SRE book's probability
	// max(0, (requests − K·accepts) / (requests + 1)). It is simple and
	// stateless apart from two counters, but under sustained overload it
	// lets about K times the accepted rate through, so with K = 2 about
	// half of the requests sent are rejected by the backend. The zero
	// value.
	ModeSRE Mode = iota
	// ModePaced is the [Pacer]: it spaces the requests at the rate the
	// backend accepts and postpones the others, never rejecting (see
	// docs/sim/results.md for measurements).
	ModePaced
)

// String returns the name of the mode.
func (m Mode) String() string {
	switch m {
	case ModeSRE:
		return "SRE"
	case ModePaced:
		return "Paced"
	default:
		return fmt.Sprintf("Mode(%d)", int(m))
	}
}

// Name returns the name of the mode as [ParseMode] takes it and a pipeline
// flag gives it: "sre" or "paced".
func (m Mode) Name() string { return strings.ToLower(m.String()) }

// ParseMode parses "sre" (or "") and "paced", in any case, as a pipeline
// flag would give them. Its error is a *[ConfigError] for the field Mode.
func ParseMode(s string) (Mode, error) {
	if s == "" {
		return ModeSRE, nil
	}
	for _, m := range []Mode{ModeSRE, ModePaced} {
		if strings.EqualFold(s, m.Name()) {
			return m, nil
		}
	}
	return 0, &ConfigError{Field: "Mode", Err: fmt.Errorf("must be %s or %s, got %q", ModeSRE.Name(), ModePaced.Name(), s)}
}

// Window selects how a [Throttler] forgets old requests and accepts.
type Window int

const (
	// FixedReset counts in consecutive windows of Config.ResetInterval and
	// zeroes both counters when a window ends. The first window starts at the
	// first event (Decide or Record) the Throttler sees; window boundaries are
	// Start + n·ResetInterval for whole n, so idle time never shifts them.
	FixedReset Window = iota
	// Sliding counts over the last Config.WindowSize, in buckets of
	// Config.Bucket aligned to the Unix epoch, and forgets the oldest bucket
	// whenever time enters a new one.
	Sliding
)

// String returns the name of the window mode.
func (w Window) String() string {
	switch w {
	case FixedReset:
		return "FixedReset"
	case Sliding:
		return "Sliding"
	default:
		return fmt.Sprintf("Window(%d)", int(w))
	}
}

// Name returns the name of the window as [ParseWindow] takes it and a
// pipeline flag gives it: "fixed" or "sliding".
func (w Window) Name() string {
	switch w {
	case FixedReset:
		return "fixed"
	case Sliding:
		return "sliding"
	default:
		return w.String()
	}
}

// ParseWindow parses "fixed" (or "") and "sliding", in any case, as a
// pipeline flag would give them; the String names FixedReset and Sliding
// too. Its error is a *[ConfigError] for the field Window.
func ParseWindow(s string) (Window, error) {
	if s == "" {
		return FixedReset, nil
	}
	for _, w := range []Window{FixedReset, Sliding} {
		if strings.EqualFold(s, w.Name()) || strings.EqualFold(s, w.String()) {
			return w, nil
		}
	}
	return 0, &ConfigError{Field: "Window", Err: fmt.Errorf("must be %s or %s, got %q", FixedReset.Name(), Sliding.Name(), s)}
}

// A ConfigError reports a field of a [Config] whose value cannot be used.
// [Config.Validate], [ParseMode] and [ParseWindow] return it, so that a
// caller can say which of its own settings is at fault (the pipeline's
// flags do).
type ConfigError struct {
	Field string // the Config field: "K", "Window", "ResetInterval", "WindowSize", "Bucket" or "Mode"
	Err   error  // what is wrong with it
}

// Error returns "adaptive: Field what is wrong".
func (e *ConfigError) Error() string { return "adaptive: " + e.Field + " " + e.Err.Error() }

// Unwrap returns Err.
func (e *ConfigError) Unwrap() error { return e.Err }

// Config configures the SRE throttle, a [Throttler] or an [SRE] policy, and
// carries the Mode that selects between it and the [Pacer]. The zero value
// is valid and means: ModeSRE, K = 2, FixedReset windows of one minute,
// failures other than overload counted as accepts.
type Config struct {
	// K is the multiplier of accepts in the rejection probability
	//
	//	p = max(0, (requests − K·accepts) / (requests + 1)).
	//
	// Zero means DefaultK (2). It must otherwise be positive and finite;
	// lower values throttle more aggressively, and values below 1 reject
	// requests even while the backend accepts all of them.
	K float64

	// Window selects the forgetting strategy; the zero value is FixedReset.
	Window Window

	// ResetInterval is the length of a FixedReset window. Zero means
	// DefaultResetInterval (1 minute); negative is an error. Ignored by Sliding.
	//
	// The first window starts at the first Decide or Record, at time Start,
	// and the counters are zeroed when time reaches Start + n·ResetInterval
	// for n = 1, 2, …: a window ends exactly at its boundary (an event at
	// the boundary belongs to the new window), and windows skipped while
	// idle do not shift later boundaries.
	ResetInterval time.Duration

	// WindowSize is how far back a Sliding window counts. Zero means
	// DefaultWindowSize (2 minutes); negative is an error. Ignored by
	// FixedReset.
	//
	// The window holds ceil(WindowSize/Bucket) buckets, so when WindowSize is
	// not a multiple of Bucket the effective window is rounded up to the next
	// multiple. An event is forgotten when time enters the bucket that starts
	// at most WindowSize (rounded up) after the event.
	WindowSize time.Duration

	// Bucket is the granularity of a Sliding window: history is forgotten
	// one bucket at a time. Zero means DefaultBucket (1 second); negative is
	// an error, and so is a Bucket longer than WindowSize or one so short
	// that the window would need more than MaxBuckets buckets. Ignored by
	// FixedReset.
	Bucket time.Duration

	// CountFailuresAsRejects makes a Failed outcome (a failure that is not
	// overload, such as HTTP 400) count like Throttled, that is, not as an
	// accept. By default Failed counts as an accept because the backend was
	// not overloaded.
	CountFailuresAsRejects bool

	// Seed seeds the random source that [New] uses when given a nil random
	// function: the generator is math/rand/v2's PCG seeded with Seed, or
	// with DefaultSeed when Seed is zero, so such a Throttler is
	// reproducible.
	Seed uint64

	// Mode selects the policy; the zero value is ModeSRE. A Throttler
	// (and so [SRE]) needs ModeSRE; with ModePaced the fields above are not
	// used by the [Pacer], which has its own [PacerConfig], but Validate
	// still checks them.
	Mode Mode
}

// WithDefaults returns c with zero fields replaced by their documented
// defaults (K, ResetInterval, WindowSize and Bucket, whatever the Window).
// It does not validate; invalid non-zero values are kept as they are.
func (c Config) WithDefaults() Config {
	c.K = cmp.Or(c.K, DefaultK)
	c.ResetInterval = cmp.Or(c.ResetInterval, DefaultResetInterval)
	c.WindowSize = cmp.Or(c.WindowSize, DefaultWindowSize)
	c.Bucket = cmp.Or(c.Bucket, DefaultBucket)
	return c
}

// Validate reports whether c, after applying defaults, describes a usable
// Throttler, but for its Mode, which may be either ([New] needs ModeSRE).
// It returns nil or every fault it finds, each a *[ConfigError] whose
// message begins with "adaptive: " and the field at fault, joined with
// [errors.Join]. WindowSize and Bucket are related to each other only when
// Window is Sliding, but negative durations are rejected in every window.
// This is the one place the algorithm's settings are checked:
// transforms/throttle and the pipeline's flags rely on it.
func (c Config) Validate() error {
	d := c.WithDefaults()
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &ConfigError{Field: field, Err: fmt.Errorf(format, args...)})
	}
	if math.IsNaN(d.K) || math.IsInf(d.K, 0) || d.K <= 0 {
		bad("K", "must be positive and finite, got %v", c.K)
	}
	if d.Window != FixedReset && d.Window != Sliding {
		bad("Window", "must be FixedReset or Sliding, got %v", c.Window)
	}
	if d.ResetInterval < 0 {
		bad("ResetInterval", "must not be negative, got %v", c.ResetInterval)
	}
	if d.WindowSize < 0 {
		bad("WindowSize", "must not be negative, got %v", c.WindowSize)
	}
	switch {
	case d.Bucket < 0:
		bad("Bucket", "must not be negative, got %v", c.Bucket)
	case d.Window != Sliding || d.WindowSize < 0:
	case d.Bucket > d.WindowSize:
		bad("Bucket", "%v must not exceed WindowSize %v", d.Bucket, d.WindowSize)
	case bucketCount(d.WindowSize, d.Bucket) > MaxBuckets:
		bad("Bucket", "%v is too short for WindowSize %v: %d buckets, at most %d allowed",
			d.Bucket, d.WindowSize, bucketCount(d.WindowSize, d.Bucket), MaxBuckets)
	}
	if d.Mode != ModeSRE && d.Mode != ModePaced {
		bad("Mode", "must be ModeSRE or ModePaced, got %v", c.Mode)
	}
	return errors.Join(errs...)
}

// bucketCount returns ceil(size/bucket) for positive durations.
func bucketCount(size, bucket time.Duration) int64 {
	n := int64(size / bucket)
	if size%bucket != 0 {
		n++
	}
	return n
}
