package adaptive

import (
	"fmt"
	"math"
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
	// serialised [State] grow with it.
	MaxBuckets = 1 << 16

	// DefaultTargetWaste is the ModePaced target share of sent requests that
	// the backend rejects, used when Config.TargetWaste is zero.
	DefaultTargetWaste = 0.025
	// DefaultInterval is the ModePaced control interval used when
	// Config.Interval is zero.
	DefaultInterval = time.Second
	// DefaultBurst is the ModePaced token bucket depth, in time at the
	// current rate, used when Config.Burst is zero.
	DefaultBurst = time.Second
	// DefaultMinRate is the ModePaced floor of the sending rate, in requests
	// per second, used when Config.MinRate is zero.
	DefaultMinRate = 1.0
	// MaxTargetWaste bounds Config.TargetWaste.
	MaxTargetWaste = 0.5
	// RetryAfterSlack is subtracted from a Retry-After before ModePaced
	// honours it; see [Throttler.RecordRetryAfter].
	RetryAfterSlack = time.Second
)

// Mode selects the throttling algorithm of a [Throttler].
type Mode int

const (
	// ModeSRE, the default, rejects requests at random with the SRE book's
	// probability max(0, (requests − K·accepts) / (requests + 1)). It is
	// simple and stateless apart from two counters, but under sustained
	// overload it lets about K times the accepted rate through, so with
	// K = 2 about half of the requests sent are rejected by the backend.
	ModeSRE Mode = iota
	// ModePaced sends at most at a paced rate, enforced by a token bucket
	// (Config.Burst deep), and does not limit at all until the backend first
	// rejects more than Config.TargetWaste of the requests sent in a control
	// interval (Config.Interval): a backend that is never overloaded never
	// sees a request rejected locally. From then on, at the end of every
	// interval in which the pace limited or the backend rejected more than
	// the target share, the log of the rate moves by 2.5·(TargetWaste − w),
	// w being the share the backend rejected: an integral controller that
	// keeps the backend's rejections at the target share on average, for
	// one group or several sharing a backend, while probing upward by
	// 2.5·TargetWaste (6.25 %) per clean interval. An interval cuts the rate
	// to a quarter at most. A run of clean intervals (at least three) that
	// would have been unlikely, probability 0.1 or less, given how often the
	// group saw a rejection before it, is taken as a sign of more capacity:
	// the rate then grows faster, by about 8 %, then 13 % per interval. A
	// group that saw a rejection in most intervals accelerates after three
	// clean ones; one whose rejections are sparse, as a small group's among
	// several sharing a backend, after more. After an outage (three
	// intervals in which nothing was accepted) the rate, kept at
	// Config.MinRate meanwhile, climbs back eight-fold per interval to the
	// pace the backend coped with before. When the demand falls sharply (a burst ends), the pacer
	// stops limiting and learns again. Long Retry-After answers passed to
	// [Throttler.RecordRetryAfter] block sending.
	//
	// The controller uses the share of answers rejected, never rates
	// measured over an interval (except to pick the first rate), so it
	// copes with calls that arrive in batches: in a batch loop set
	// Config.Interval to the batch interval and Config.Burst to at least
	// that.
	//
	// K, Window and the window lengths still define the window reported by
	// Counts, but do not influence decisions. Decide does not use the random
	// function.
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

// ParseMode parses "sre" (or "") and "paced", as a pipeline flag would
// give them.
func ParseMode(s string) (Mode, error) {
	switch s {
	case "", "sre", "SRE":
		return ModeSRE, nil
	case "paced", "Paced", "PACED":
		return ModePaced, nil
	}
	return 0, fmt.Errorf("adaptive: Mode must be sre or paced, got %q", s)
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

// Config configures a [Throttler] or [Limiter]. The zero value is valid and
// means: K = 2, FixedReset windows of one minute, failures other than
// overload counted as accepts.
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
	// reproducible. [NewLimiter] uses Seed the same way when it is non-zero
	// and a randomly seeded source when it is zero.
	Seed uint64

	// Mode selects the algorithm; the zero value is ModeSRE. The fields
	// below configure ModePaced and are ignored by ModeSRE.
	Mode Mode

	// TargetWaste is the share of sent requests that ModePaced lets the
	// backend reject under sustained overload, the price of finding out
	// quickly when capacity grows. Zero means DefaultTargetWaste (2.5 %);
	// otherwise it must be in (0, MaxTargetWaste].
	TargetWaste float64

	// Interval is how often ModePaced adjusts its rate. An interval ends at
	// the first event at least 7/8 of Interval after it began (the slack
	// absorbs the jitter of a batch loop that runs every Interval); rates
	// are computed over the interval's actual length. Zero means
	// DefaultInterval (1 s); negative is an error. In a batch loop, use the
	// batch interval.
	Interval time.Duration

	// Burst is the depth of the ModePaced token bucket, as time at the
	// current rate: up to rate·Burst requests (at least one) can be sent at
	// once after an idle period. Zero means DefaultBurst (1 s); negative is
	// an error. In a batch loop, use at least the batch interval, or a batch
	// cannot use a whole interval's worth of the rate.
	Burst time.Duration

	// MinRate is the lowest rate, in requests per second, that ModePaced
	// falls to while the backend rejects everything; it keeps probing at
	// this rate to notice the recovery. Zero means DefaultMinRate (1 per
	// second); otherwise it must be positive and finite.
	MinRate float64
}

// WithDefaults returns c with zero fields replaced by their documented
// defaults (K, ResetInterval, WindowSize and Bucket, whatever the Window;
// TargetWaste, Interval, Burst and MinRate only when Mode is ModePaced).
// It does not validate; invalid non-zero values are kept as they are.
func (c Config) WithDefaults() Config {
	if c.K == 0 {
		c.K = DefaultK
	}
	if c.ResetInterval == 0 {
		c.ResetInterval = DefaultResetInterval
	}
	if c.WindowSize == 0 {
		c.WindowSize = DefaultWindowSize
	}
	if c.Bucket == 0 {
		c.Bucket = DefaultBucket
	}
	if c.Mode == ModePaced {
		if c.TargetWaste == 0 {
			c.TargetWaste = DefaultTargetWaste
		}
		if c.Interval == 0 {
			c.Interval = DefaultInterval
		}
		if c.Burst == 0 {
			c.Burst = DefaultBurst
		}
		if c.MinRate == 0 {
			c.MinRate = DefaultMinRate
		}
	}
	return c
}

// Validate reports whether c, after applying defaults, describes a usable
// Throttler. The error message begins with "adaptive: " and names the
// offending field. WindowSize and Bucket are related to each other only when
// Window is Sliding, but negative durations are rejected in every mode.
func (c Config) Validate() error {
	d := c.WithDefaults()
	if math.IsNaN(d.K) || math.IsInf(d.K, 0) || d.K <= 0 {
		return fmt.Errorf("adaptive: K must be positive and finite, got %v", c.K)
	}
	if d.Window != FixedReset && d.Window != Sliding {
		return fmt.Errorf("adaptive: Window must be FixedReset or Sliding, got %v", c.Window)
	}
	if d.ResetInterval < 0 {
		return fmt.Errorf("adaptive: ResetInterval must not be negative, got %v", c.ResetInterval)
	}
	if d.WindowSize < 0 {
		return fmt.Errorf("adaptive: WindowSize must not be negative, got %v", c.WindowSize)
	}
	if d.Bucket < 0 {
		return fmt.Errorf("adaptive: Bucket must not be negative, got %v", c.Bucket)
	}
	if d.Window == Sliding {
		if d.Bucket > d.WindowSize {
			return fmt.Errorf("adaptive: Bucket %v must not exceed WindowSize %v", d.Bucket, d.WindowSize)
		}
		if n := bucketCount(d.WindowSize, d.Bucket); n > MaxBuckets {
			return fmt.Errorf("adaptive: Bucket %v is too short for WindowSize %v: %d buckets, at most %d allowed",
				d.Bucket, d.WindowSize, n, MaxBuckets)
		}
	}
	if d.Mode != ModeSRE && d.Mode != ModePaced {
		return fmt.Errorf("adaptive: Mode must be ModeSRE or ModePaced, got %v", c.Mode)
	}
	if d.Mode == ModePaced {
		if !(d.TargetWaste > 0 && d.TargetWaste <= MaxTargetWaste) {
			return fmt.Errorf("adaptive: TargetWaste must be in (0, %v], got %v", MaxTargetWaste, c.TargetWaste)
		}
		if d.Interval < 0 {
			return fmt.Errorf("adaptive: Interval must not be negative, got %v", c.Interval)
		}
		if d.Burst < 0 {
			return fmt.Errorf("adaptive: Burst must not be negative, got %v", c.Burst)
		}
		if !(d.MinRate > 0) || math.IsInf(d.MinRate, 1) || d.MinRate > maxRate {
			return fmt.Errorf("adaptive: MinRate must be positive and at most %v, got %v", maxRate, c.MinRate)
		}
	}
	return nil
}

// bucketCount returns ceil(size/bucket) for positive durations.
func bucketCount(size, bucket time.Duration) int64 {
	n := int64(size / bucket)
	if size%bucket != 0 {
		n++
	}
	return n
}
