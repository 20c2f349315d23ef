package sim

import (
	"fmt"
	"time"

	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// epoch is the wall-clock time at which every simulated run starts, as
// seen by the throttles.
var epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// Throttle is the throttle of one group, driven by simulated time: at is
// the time since the start of the run. The simulator calls Decide for every
// element, and for an allowed one Record when the answer arrives, then
// RecordRetryAfter if the backend rejected it with a Retry-After (and
// Config.RetryAfter is set).
type Throttle interface {
	Decide(at time.Duration) bool
	Record(at time.Duration, o adaptive.Outcome)
	RecordRetryAfter(at, d time.Duration)
}

// Env is what an Algorithm gets to build the Throttle of one group.
type Env struct {
	// Group is the group's number in [0, Groups).
	Group, Groups int
	// Rand returns uniform values in [0, 1), seeded per run and group.
	Rand func() float64
	// Available reports whether the backend would accept a request at at.
	// Only an oracle may use it.
	Available func(at time.Duration) bool
}

// Algorithm is a throttling algorithm under test.
type Algorithm struct {
	// Name identifies the algorithm in the report.
	Name string
	// Description says what it is, in one line.
	Description string
	// New returns the throttle of one group.
	New func(Env) Throttle
}

// Names of the standard algorithms.
const (
	Original   = "original"
	SREFixedK2 = "sre-fixed-k2"
	SREK2      = "sre-k2"
	SREK11     = "sre-k1.1"
	Paced      = "paced"
	None       = "none"
	Oracle     = "oracle"
)

// Algorithms returns the standard algorithms of the report.
func Algorithms() []Algorithm {
	return []Algorithm{
		{
			Name:        Original,
			Description: "the original tool: SRE formula with K=2 over requests sent only, counters reset every minute",
			New: func(e Env) Throttle {
				return &original{k: 2, window: int64(time.Minute), rnd: e.Rand}
			},
		},
		AdaptiveAlgorithm(SREFixedK2, "SRE, K=2, all requests counted, fixed 1-minute window (the transform's default)",
			adaptive.Config{K: 2, Window: adaptive.FixedReset}),
		AdaptiveAlgorithm(SREK2, "SRE, K=2, sliding 2-minute window in 1 s buckets",
			adaptive.Config{K: 2, Window: adaptive.Sliding}),
		AdaptiveAlgorithm(SREK11, "SRE, K=1.1, sliding 2-minute window in 1 s buckets",
			adaptive.Config{K: 1.1, Window: adaptive.Sliding}),
		AdaptiveAlgorithm(Paced, "adaptive.ModePaced with default settings",
			adaptive.Config{Mode: adaptive.ModePaced}),
		{
			Name:        None,
			Description: "no throttle: every element is sent",
			New:         func(Env) Throttle { return none{} },
		},
		{
			Name:        Oracle,
			Description: "knows the backend: sends exactly when it would accept (the limit)",
			New:         func(e Env) Throttle { return oracle{e.Available} },
		},
	}
}

// AdaptiveAlgorithm returns an Algorithm running an adaptive.Throttler with
// cfg in every group. It panics if cfg is invalid.
func AdaptiveAlgorithm(name, description string, cfg adaptive.Config) Algorithm {
	if err := cfg.Validate(); err != nil {
		panic(fmt.Sprintf("sim.AdaptiveAlgorithm: %v", err))
	}
	return Algorithm{
		Name:        name,
		Description: description,
		New: func(e Env) Throttle {
			t, err := adaptive.New(cfg, e.Rand)
			if err != nil {
				panic(err) // validated above
			}
			return throttler{t}
		},
	}
}

// throttler adapts an adaptive.Throttler.
type throttler struct{ t *adaptive.Throttler }

func (a throttler) Decide(at time.Duration) bool {
	allow, _ := a.t.Decide(epoch.Add(at))
	return allow
}

func (a throttler) Record(at time.Duration, o adaptive.Outcome) { a.t.Record(epoch.Add(at), o) }

func (a throttler) RecordRetryAfter(at, d time.Duration) { a.t.RecordRetryAfter(epoch.Add(at), d) }

// original is the original tool's throttle: p = max(0, (sent − K·accepts) /
// (sent + 1)) where only requests actually sent are counted, so local
// rejections do not raise p, and both counters are zeroed every window,
// starting at the first request.
type original struct {
	k              float64
	window         int64
	rnd            func() float64
	started        bool
	start          int64
	sent, accepted int64
}

func (o *original) advance(at time.Duration) {
	n := int64(at)
	if !o.started {
		o.started, o.start = true, n
	}
	if n-o.start >= o.window {
		o.start += (n - o.start) / o.window * o.window
		o.sent, o.accepted = 0, 0
	}
}

func (o *original) Decide(at time.Duration) bool {
	o.advance(at)
	p := max(0, (float64(o.sent)-o.k*float64(o.accepted))/(float64(o.sent)+1))
	if o.rnd() < p {
		return false
	}
	o.sent++
	return true
}

func (o *original) Record(at time.Duration, out adaptive.Outcome) {
	o.advance(at)
	if out != adaptive.Throttled {
		o.accepted++
	}
}

func (o *original) RecordRetryAfter(time.Duration, time.Duration) {}

// none sends everything.
type none struct{}

func (none) Decide(time.Duration) bool                     { return true }
func (none) Record(time.Duration, adaptive.Outcome)        {}
func (none) RecordRetryAfter(time.Duration, time.Duration) {}

// oracle sends exactly when the backend would accept.
type oracle struct{ available func(time.Duration) bool }

func (o oracle) Decide(at time.Duration) bool                { return o.available(at) }
func (oracle) Record(time.Duration, adaptive.Outcome)        {}
func (oracle) RecordRetryAfter(time.Duration, time.Duration) {}
