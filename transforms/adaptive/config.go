package adaptive

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"time"
)

// Defaults of SREConfig's zero fields, and the bound on its buckets.
const (
	defaultK             = 2.0
	defaultResetInterval = time.Minute
	defaultWindowSize    = 2 * time.Minute
	defaultBucket        = time.Second
	defaultSeed          = uint64(0x5eed_ada9_7140_0001)
	// maxBuckets bounds the number of buckets of a sliding window
	// (WindowSize divided by Bucket, rounded up): the ring and the saved
	// state grow with it.
	maxBuckets = 1 << 16
)

// SREConfig configures the [SRE] throttle. The zero value is valid and
// means: K = 2, fixed windows of one minute, failures other than overload
// counted as accepts.
type SREConfig struct {
	// K is the multiplier of accepts in the rejection probability
	//
	//	p = max(0, (requests − K·accepts) / (requests + 1)).
	//
	// Zero means 2. It must otherwise be positive and finite; lower values
	// throttle more aggressively, and values below 1 reject requests even
	// while the backend accepts all of them.
	K float64

	// Sliding selects a sliding window of WindowSize in buckets of Bucket,
	// which forgets history one bucket at a time. The zero value, false,
	// selects fixed windows of ResetInterval, whose end forgets everything
	// at once.
	Sliding bool

	// ResetInterval is the length of a fixed window. Zero means 1 minute;
	// negative is an error. Ignored by a sliding window.
	//
	// The first window starts at the first Decide or Record, at time Start,
	// and the counts are zeroed when time reaches Start + n·ResetInterval
	// for n = 1, 2, …: a window ends exactly at its boundary (an event at
	// the boundary belongs to the new window), and windows skipped while
	// idle do not shift later boundaries.
	ResetInterval time.Duration

	// WindowSize is how far back a sliding window counts. Zero means 2
	// minutes; negative is an error. Ignored by fixed windows.
	//
	// The window holds ceil(WindowSize/Bucket) buckets, aligned to the Unix
	// epoch, so when WindowSize is not a multiple of Bucket the effective
	// window is rounded up to the next multiple. An event is forgotten when
	// time enters the bucket that starts at most WindowSize (rounded up)
	// after the event.
	WindowSize time.Duration

	// Bucket is the granularity of a sliding window. Zero means 1 second;
	// negative is an error, and so is a Bucket longer than WindowSize or
	// one so short that the window would need more than 65536 buckets.
	// Ignored by fixed windows.
	Bucket time.Duration

	// CountFailuresAsRejects makes a Failed outcome (a failure that is not
	// overload, such as HTTP 400) count like Throttled, that is, not as an
	// accept. By default Failed counts as an accept because the backend was
	// not overloaded.
	CountFailuresAsRejects bool

	// Seed seeds the random source that [NewSRE] uses when given a nil
	// random function: math/rand/v2's PCG seeded with Seed, or with a
	// fixed seed of the package when Seed is zero, so such a policy is
	// reproducible.
	Seed uint64
}

// withDefaults returns c with zero fields replaced by their documented
// defaults (whatever the window). It does not validate.
func (c SREConfig) withDefaults() SREConfig {
	c.K = cmp.Or(c.K, defaultK)
	c.ResetInterval = cmp.Or(c.ResetInterval, defaultResetInterval)
	c.WindowSize = cmp.Or(c.WindowSize, defaultWindowSize)
	c.Bucket = cmp.Or(c.Bucket, defaultBucket)
	c.Seed = cmp.Or(c.Seed, defaultSeed)
	return c
}

// Validate reports whether c, after applying defaults, describes a usable
// [SRE]. It returns nil or every fault it finds, each a *[ConfigError]
// whose message begins with "adaptive: " and the field at fault, joined
// with [errors.Join]. WindowSize and Bucket are related to each other only
// in a sliding window, but negative durations are rejected in every
// window. This is the one place the algorithm's settings are checked:
// transforms/throttle and the pipeline's flags rely on it.
func (c SREConfig) Validate() error {
	d := c.withDefaults()
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &ConfigError{Field: field, Err: fmt.Errorf(format, args...)})
	}
	if math.IsNaN(d.K) || math.IsInf(d.K, 0) || d.K <= 0 {
		bad("K", "must be positive and finite, got %v", c.K)
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
	case !d.Sliding || d.WindowSize < 0:
	case d.Bucket > d.WindowSize:
		bad("Bucket", "%v must not exceed WindowSize %v", d.Bucket, d.WindowSize)
	case bucketCount(d.WindowSize, d.Bucket) > maxBuckets:
		bad("Bucket", "%v is too short for WindowSize %v: %d buckets, at most %d allowed",
			d.Bucket, d.WindowSize, bucketCount(d.WindowSize, d.Bucket), maxBuckets)
	}
	return errors.Join(errs...)
}

// A ConfigError reports a field of an [SREConfig] whose value cannot be
// used, so that a caller can say which of its own settings is at fault
// (the pipeline's flags do). Err says what is wrong with it.
type ConfigError struct {
	Field string // the SREConfig field: "K", "ResetInterval", "WindowSize" or "Bucket"
	Err   error  // what is wrong with it
}

// Error returns "adaptive: Field what is wrong".
func (e *ConfigError) Error() string { return "adaptive: " + e.Field + " " + e.Err.Error() }
