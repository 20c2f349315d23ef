package adaptive

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Probability returns the local rejection probability
//
//	max(0, (requests − k·accepts) / (requests + 1))
//
// clamped to [0, 1]. It never returns NaN: negative counts are treated as
// zero, and a k that is not a positive finite number is replaced by DefaultK.
func Probability(requests, accepts int64, k float64) float64 {
	if requests <= 0 {
		return 0
	}
	if accepts < 0 {
		accepts = 0
	}
	if !(k > 0) || math.IsInf(k, 1) {
		k = DefaultK
	}
	r := float64(requests)
	p := (r - k*float64(accepts)) / (r + 1)
	if !(p > 0) { // also catches NaN, which cannot happen with the guards above
		return 0
	}
	if p > 1 {
		return 1
	}
	return p
}

// Throttler is the SRE throttle: it decides whether to send or locally
// reject each request, from the requests and accepts it has counted in its
// current window, with the probability of [Probability]. [SRE] is the same
// rule behind the [Policy] interface.
//
// Every method takes the current time; the Throttler never reads the clock. A
// time earlier than one seen before is treated as belonging to the current
// window (FixedReset) or the newest bucket (Sliding): the window never moves
// back. Times are handled with nanosecond precision between the years 1678
// and 2262 and saturate outside that range.
//
// Decide, Record, Probability and Counts do not allocate. A Throttler is not
// safe for concurrent use; use an [SRE] in a [Limiter], or your own lock,
// to share one between goroutines. Create Throttlers with [New]; the zero
// value is not usable.
type Throttler struct {
	cfg Config
	rnd func() float64

	sliding  bool
	interval int64 // FixedReset window length, nanoseconds
	bucket   int64 // Sliding bucket width, nanoseconds

	started bool
	start   int64 // FixedReset: start of the current window, Unix nanoseconds
	head    int64 // Sliding: number of the newest bucket (Unix nanoseconds / bucket, floored)

	requests int64 // in the current window
	accepts  int64 // in the current window

	bucketRequests []int64 // Sliding ring: slot floorMod(bucket number, len)
	bucketAccepts  []int64
}

// New returns a Throttler for cfg, or the error of cfg.Validate. cfg.Mode
// must be ModeSRE: ModePaced is the [Pacer]'s mode, made by [NewPacer].
//
// rnd must return values uniformly distributed in [0, 1); Decide calls it
// exactly once per request and rejects the request when the value is below
// the current probability. If rnd is nil, New uses a math/rand/v2 PCG source
// seeded from cfg.Seed, or from DefaultSeed when cfg.Seed is zero, so two
// such Throttlers fed the same events make the same decisions. Callers that
// create many short-lived Throttlers should pass a shared or differently
// seeded rnd, or vary cfg.Seed, so that they do not all replay the same
// random sequence.
func New(cfg Config, rnd func() float64) (*Throttler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Mode != ModeSRE {
		return nil, fmt.Errorf("adaptive: a Throttler needs Mode ModeSRE, got %v (ModePaced is the Pacer: use NewPacer)", cfg.Mode)
	}
	cfg = cfg.WithDefaults()
	if rnd == nil {
		seed := cfg.Seed
		if seed == 0 {
			seed = DefaultSeed
		}
		rnd = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)).Float64
	}
	t := &Throttler{
		cfg:      cfg,
		rnd:      rnd,
		sliding:  cfg.Window == Sliding,
		interval: int64(cfg.ResetInterval),
		bucket:   int64(cfg.Bucket),
	}
	if t.sliding {
		n := bucketCount(cfg.WindowSize, cfg.Bucket)
		t.bucketRequests = make([]int64, n)
		t.bucketAccepts = make([]int64, n)
	}
	return t, nil
}

// Config returns the configuration of t, with defaults applied.
func (t *Throttler) Config() Config { return t.cfg }

// Decide reports whether the request being attempted at now should be sent
// (allow) or rejected locally, and the rejection probability p it used. p is
// computed from the counts before this request; the request is then counted
// (requests++) whether it is allowed or not. Follow an allowed request with
// Record once its outcome is known; a rejected one needs nothing more.
func (t *Throttler) Decide(now time.Time) (allow bool, p float64) {
	t.touch(unixNanos(now))
	p = Probability(t.requests, t.accepts, t.cfg.K)
	allow = !(t.rnd() < p)
	t.addRequest()
	return allow, p
}

// DecideWithPending is Decide for a caller with pending calls: allowed
// requests whose outcome has not been recorded yet. They are left out of
// p, as if not yet made, so a wave of concurrent calls does not throttle
// itself before any response has come back (with pending 0 it is exactly
// Decide); the request is still counted.
func (t *Throttler) DecideWithPending(now time.Time, pending int) (allow bool, p float64) {
	if pending <= 0 {
		return t.Decide(now)
	}
	t.touch(unixNanos(now))
	p = Probability(max(t.requests-int64(pending), 0), t.accepts, t.cfg.K)
	allow = !(t.rnd() < p)
	t.addRequest()
	return allow, p
}

// Record counts the outcome, observed at now, of a request Decide allowed.
// Accepted counts as an accept; Failed counts as an accept unless
// Config.CountFailuresAsRejects is set; Throttled does not count. Record
// never counts a request: Decide has done so already.
func (t *Throttler) Record(now time.Time, o Outcome) {
	t.touch(unixNanos(now))
	switch o {
	case Accepted:
	case Throttled:
		return
	default: // Failed and unknown values
		if t.cfg.CountFailuresAsRejects {
			return
		}
	}
	t.addAccept()
}

// Probability returns the rejection probability the next Decide at now would
// use, after moving the window to now. It counts nothing and returns 0 before
// the first event.
func (t *Throttler) Probability(now time.Time) float64 {
	t.advance(unixNanos(now))
	return Probability(t.requests, t.accepts, t.cfg.K)
}

// Counts returns the requests and accepts counted in the window as of now,
// after moving the window to now. It counts nothing.
func (t *Throttler) Counts(now time.Time) (requests, accepts int64) {
	t.advance(unixNanos(now))
	return t.requests, t.accepts
}

// SRE is the SRE throttle of the original tool as a [Policy]: it sends a
// request unless a random draw r falls below
//
//	p = max(0, (requests − K·accepts) / (requests + 1)),
//
// counting requests and accepts in the windows of its [Config] (see
// [Throttler]). A request it does not send is rejected locally, or, when
// made with a postponement, postponed by that long instead (and counted as
// a request all the same). Requests in flight are left out of p, as
// [Throttler.DecideWithPending] does.
//
// SRE is not a [Coster]: the rule weighs requests against accepts, one
// each whatever a request costs, and a quota counted in tokens or bytes
// shows in it only through the backend's rejections. [DecideCost] asks it
// with Decide.
//
// Create one with [NewSRE]; the zero value is not usable.
type SRE struct {
	t        *Throttler
	postpone time.Duration
}

// NewSRE returns the SRE policy for cfg (whose Mode must be ModeSRE) with
// the random source rnd, or the error of [New]. A positive postpone turns
// its local rejections into postponements of that long.
func NewSRE(cfg Config, rnd func() float64, postpone time.Duration) (*SRE, error) {
	if postpone < 0 {
		return nil, fmt.Errorf("adaptive: NewSRE: postpone must not be negative, got %v", postpone)
	}
	t, err := New(cfg, rnd)
	if err != nil {
		return nil, err
	}
	return &SRE{t: t, postpone: postpone}, nil
}

// Decide sends with probability 1 − p, and otherwise rejects or postpones.
func (s *SRE) Decide(now time.Time, inFlight int) Decision {
	allow, p := s.t.DecideWithPending(now, inFlight)
	switch {
	case allow:
		return Decision{Verdict: Send, Probability: p}
	case s.postpone > 0:
		return Decision{Verdict: Postpone, RetryAt: now.Add(s.postpone), Probability: p}
	}
	return Decision{Verdict: Reject, Probability: p}
}

// Record counts an accept, unless the answer was Throttled (or Failed, with
// Config.CountFailuresAsRejects). The SRE rule ignores Retry-After.
func (s *SRE) Record(now time.Time, a Answer) { s.t.Record(now, a.Outcome) }

// Throttler returns the Throttler behind s, for its counts.
func (s *SRE) Throttler() *Throttler { return s.t }

// MarshalBinary encodes the counters, versioned (see
// [Throttler.MarshalBinary]).
func (s *SRE) MarshalBinary() ([]byte, error) { return s.t.MarshalBinary() }

// UnmarshalBinary restores counters made by MarshalBinary, adapted to this
// policy's windows (see [Throttler.UnmarshalBinary]). Empty data resets
// them; data of another version or shape is refused with an error wrapping
// ErrState and leaves the counters reset.
func (s *SRE) UnmarshalBinary(data []byte) error { return s.t.UnmarshalBinary(data) }

var _ Policy = (*SRE)(nil)
