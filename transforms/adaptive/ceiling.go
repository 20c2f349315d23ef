package adaptive

import (
	"fmt"
	"math"
	"time"
)

// Ceiling bounds the calls under way by their latency, for a server that
// queues instead of refusing: sending faster than it serves only lengthens
// its queue, and every answer takes longer. A pacer sees no refusal there
// and would climb without end; the Ceiling sees the latency climb above its
// floor and holds the calls under way to what the server serves with a
// short queue.
//
// It follows the gradient rule of Netflix's concurrency-limits (Gradient2):
// once per window (a second, or the floor if longer, and at least
// [ceilingSamples] answers), with short the mean latency of the window's
// answers and floor the lowest such mean (which rises slowly, a
// [ceilingFloorRise] of the way to each window's mean, so a server whose
// latency changes for good is followed),
//
//	gradient = clamp(Tolerance × floor / short, 0.5, 1)
//	limit    = gradient × limit + √limit
//
// While no window's mean has been a twentieth above the floor, the limit
// doubles every other window instead of adding √limit (a slow start, which
// waits a window to see what the last doubling did), so the limit does not
// hold back a client that needs many calls under way against a rate limit.
// The limit moves only when at least half of it was in use during the
// window (concurrency-limits' rule for a client that does not use its
// limit), and stays within [1, Max].
//
// Against a hard rate limit the latency does not climb with the calls under
// way, the gradient stays 1, and the limit is Max: the rate is the pacer's.
//
// A Ceiling is not safe for concurrent use.
type Ceiling struct {
	cfg   CeilingConfig
	limit float64
	slow  bool    // still doubling
	held  bool    // doubled at the last window
	floor float64 // nanoseconds; 0 before the first window
	peak  float64 // the highest limit since the floor was set
	last  float64 // the last window's mean latency, nanoseconds
	stuck int     // windows in a row under half the peak with the latency high

	start int64   // the window's start, Unix nanoseconds; 0 before the first answer
	n     int     // answers in the window
	sum   float64 // their latencies, nanoseconds
	used  int     // the most calls under way an answer saw in the window
}

// CeilingConfig configures a Ceiling.
type CeilingConfig struct {
	// Max is the largest limit, the bound it starts from when Start is 0.
	// It must be at least 1.
	Max int
	// Start is the first limit; 0 means defaultCeilingStart, at most Max.
	Start int
	// Tolerance is how far the mean latency may rise above the floor
	// before the limit shrinks; 0 means 1.25. It must
	// be at least 1.
	Tolerance float64
}

const (
	// defaultCeilingStart is a Ceiling's first limit: enough for a fast
	// start against most slow APIs (16 requests/s at 2 s), while the slow
	// start doubles it each window.
	defaultCeilingStart = 32
	// defaultTolerance lets a queue add a quarter to the floor before the
	// limit shrinks (Gradient2's default is a half): the latency of
	// answers then stays within half again of the floor.
	defaultTolerance = 1.25
	// ceilingSamples is the fewest answers a window ends with: a mean of
	// fewer says little about a heavy-tailed latency.
	ceilingSamples = 10
	// ceilingFloorRise is how far the floor moves towards a window's mean
	// above it: by a thirty-second, it follows a server whose latency rose
	// for good within a few dozen windows.
	ceilingFloorRise = 1.0 / 32
	// stuckWindows is how many windows in a row with the limit under half
	// its peak and the latency still above the tolerance say that the
	// server got slower rather than queued: a queue drains within one or
	// two.
	stuckWindows = 3
	// slowStartRise is the rise of the mean latency over the floor that
	// ends the Ceiling's slow start: a queue of a twentieth of the calls
	// under way.
	slowStartRise = 1.05
)

// NewCeiling returns a Ceiling, or an error naming the field of cfg that is
// out of range.
func NewCeiling(cfg CeilingConfig) (*Ceiling, error) {
	switch {
	case cfg.Max < 1:
		return nil, fmt.Errorf("adaptive: CeilingConfig.Max %d: want at least 1", cfg.Max)
	case cfg.Start < 0:
		return nil, fmt.Errorf("adaptive: CeilingConfig.Start %d: want at least 0", cfg.Start)
	case cfg.Tolerance != 0 && !(cfg.Tolerance >= 1):
		return nil, fmt.Errorf("adaptive: CeilingConfig.Tolerance %v: want 0 or at least 1", cfg.Tolerance)
	}
	if cfg.Start == 0 {
		cfg.Start = defaultCeilingStart
	}
	if cfg.Tolerance == 0 {
		cfg.Tolerance = defaultTolerance
	}
	l := float64(min(cfg.Start, cfg.Max))
	return &Ceiling{cfg: cfg, limit: l, peak: l, slow: true}, nil
}

// Limit returns how many calls may be under way.
func (c *Ceiling) Limit() int {
	return max(1, int(c.limit))
}

// Observe counts an answer that came at now after latency, with underWay
// calls under way when it came (itself included); the window that it ends
// moves the limit.
func (c *Ceiling) Observe(now time.Time, latency time.Duration, underWay int) {
	n := unixNanos(now)
	if c.start == 0 {
		c.start = n
	}
	c.n++
	c.sum += float64(max(latency, 0))
	c.used = max(c.used, underWay)
	window := max(float64(time.Second), c.floor, c.last)
	if float64(n-c.start) < window || c.n < ceilingSamples {
		return
	}
	short := c.sum / float64(c.n)
	c.close(short, c.used)
	c.last = short
	c.start, c.n, c.sum, c.used = n, 0, 0, 0
}

// close ends a window whose answers took short on average, with at most
// used calls under way.
func (c *Ceiling) close(short float64, used int) {
	if !(short > 0) {
		return
	}
	if c.floor == 0 || short < c.floor {
		c.floor = short
	}
	if used < c.Limit() {
		// The limit held nothing back: the latency is the server's own,
		// and the limit is not at issue.
		c.floor += (short - c.floor) * ceilingFloorRise
		return
	}
	if c.slow && short <= c.floor*slowStartRise {
		// The window's answers were sent a latency ago, under the limit
		// before the last doubling: double every other window, once
		// the answers tell what the last doubling did.
		if c.held = !c.held; c.held {
			c.limit = min(c.limit*2, float64(c.cfg.Max))
			c.peak = max(c.peak, c.limit)
		}
		return
	}
	c.slow = false
	g := min(max(c.cfg.Tolerance*c.floor/short, 0.5), 1)
	c.limit = min(max(g*c.limit+math.Sqrt(c.limit), 1), float64(c.cfg.Max))
	c.peak = max(c.peak, c.limit)
	if c.limit < c.peak/2 && short > c.cfg.Tolerance*c.floor {
		c.stuck++
	} else {
		c.stuck = 0
	}
	if c.stuck >= stuckWindows {
		// Half the calls under way, and still as slow: the server got
		// slower, it is not queueing. Start again from this latency.
		c.floor, c.peak, c.slow, c.stuck = short, c.limit, true, 0
	}
}
