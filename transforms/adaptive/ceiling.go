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
// once per window (a second, or the last window's mean latency if longer,
// and enough answers to know their mean within a tenth), with short the
// mean latency of the window's answers and floor the lowest such mean,
//
//	gradient = clamp(Tolerance × floor / short, 0.5, 1)
//	limit    = gradient × limit + √limit
//
// A window's answers are those of whole cohorts, the calls sent in one
// second, all of them answered: a heavy tail's first answers are its fast
// ones. The limit moves only in a window where it bound (one of its calls
// was sent with the limit reached; concurrency-limits has a like rule for a
// client that does not use its limit), and stays within [1, Max]. After
// [stuckWindows] windows in a row with the limit under half its peak and
// the latency as high, the floor starts again from the latency (the
// server got slower, it is not queueing).
//
// While no window's mean has been a twentieth above the floor, the limit
// doubles instead of adding √limit (a slow start, which waits for a window
// of calls sent since the last doubling), so the limit does not hold back
// a client that needs many calls under way against a rate limit.
//
// Against a hard rate limit the latency does not climb with the calls under
// way, the gradient stays 1, and the limit grows with what the pacer's rate
// needs: the rate is the pacer's.
//
// A Ceiling is not safe for concurrent use.
type Ceiling struct {
	cfg    CeilingConfig
	limit  float64
	slow   bool    // still doubling
	grewAt int64   // Unix nanoseconds: when the slow start last doubled
	floor  float64 // nanoseconds; 0 before the first window
	peak   float64 // the highest limit since the floor was set
	last   float64 // the last window's mean latency, nanoseconds
	stuck  int     // windows in a row under half the peak with the latency high

	cohorts map[int64]*cohort // the calls sent, by second, until all are answered
	swept   int64             // the second of the last sweep

	// The window: the cohorts completed since it started.
	start      int64 // Unix nanoseconds; 0 before the first answer
	from       int64 // Unix nanoseconds: the start of its oldest cohort
	now        int64 // Unix nanoseconds: when it closes
	n          int
	sum, sumSq float64 // seconds, seconds²
	bound      bool
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
	// start against most slow APIs (32 requests/s at 2 s), while the slow
	// start doubles it as the answers show what the last doubling did.
	defaultCeilingStart = 64
	// defaultTolerance lets a queue add a quarter to the floor before the
	// limit shrinks (Gradient2's default is a half): the latency of
	// answers then stays within half again of the floor.
	defaultTolerance = 1.25
	// ceilingSamples is the fewest answers a window ends with: a mean of
	// fewer says little about a heavy-tailed latency.
	ceilingSamples = 20
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
	return &Ceiling{cfg: cfg, limit: l, peak: l, slow: true, cohorts: map[int64]*cohort{}}, nil
}

// Limit returns how many calls may be under way.
func (c *Ceiling) Limit() int {
	return max(1, int(c.limit))
}

// Sent counts a call sent at now, with underWay other calls under way.
func (c *Ceiling) Sent(now time.Time, underWay int) {
	n := unixNanos(now)
	c.sweep(n)
	k := n / int64(time.Second)
	co, ok := c.cohorts[k]
	if !ok {
		co = &cohort{}
		c.cohorts[k] = co
	}
	co.sent++
	co.bound = co.bound || underWay+1 >= c.Limit()
}

// Observe counts the answer, at now, to a call counted by Sent at sent. A
// window of answers moves the limit: its answers are
// those of the calls sent in whole seconds, every one of them answered, so
// that the slow answers of a heavy tail count as much as the fast ones
// that come first.
func (c *Ceiling) Observe(sent, now time.Time) {
	n := unixNanos(now)
	k := unixNanos(sent) / int64(time.Second)
	co, ok := c.cohorts[k]
	if !ok {
		return // not counted by Sent, or forgotten
	}
	co.answered++
	x := max(now.Sub(sent).Seconds(), 0)
	co.sum += x
	co.sumSq += x * x
	if k < n/int64(time.Second) && co.answered >= co.sent {
		c.complete(k, co)
	}
	c.sweep(n)
	c.closeWindow(n)
}

// cohort is the calls sent in one second.
type cohort struct {
	sent, answered int
	sum, sumSq     float64 // of the answers' latencies, in seconds
	bound          bool    // one was sent with the limit reached
}

// forgetCohort is how long a cohort waits for all its answers: a call
// never answered (its worker lost) does not hold its cohort for ever.
const forgetCohort = 10 * time.Minute

// sweep completes, once per second of now, the cohorts of past seconds
// whose calls are all answered, and forgets those older than forgetCohort.
func (c *Ceiling) sweep(n int64) {
	sec := n / int64(time.Second)
	if sec == c.swept {
		return
	}
	c.swept = sec
	for k, co := range c.cohorts {
		switch {
		case k < sec && co.answered >= co.sent:
			c.complete(k, co)
		case k < sec-int64(forgetCohort/time.Second):
			delete(c.cohorts, k)
		}
	}
}

// complete adds cohort k to the window.
func (c *Ceiling) complete(k int64, co *cohort) {
	delete(c.cohorts, k)
	if c.n == 0 || k*int64(time.Second) < c.from {
		c.from = k * int64(time.Second)
	}
	c.n += co.answered
	c.sum += co.sum
	c.sumSq += co.sumSq
	c.bound = c.bound || co.bound
}

// maxStdErr is the largest standard error of a window's mean latency,
// relative to the mean, that ends the window: a heavy tail needs more
// answers than a constant latency to say where its mean is.
const maxStdErr = 0.1

// closeWindow ends the window at n if it has lasted a second (or the
// floor, or the last window's mean, if longer) and its mean is known well
// enough.
func (c *Ceiling) closeWindow(n int64) {
	if c.start == 0 {
		c.start = n
	}
	window := max(float64(time.Second), c.floor, c.last)
	if float64(n-c.start) < window || c.n < ceilingSamples {
		return
	}
	mean := c.sum / float64(c.n)
	v := max(c.sumSq/float64(c.n)-mean*mean, 0)
	if math.Sqrt(v/float64(c.n)) > maxStdErr*mean && c.n < maxWindowSamples {
		return
	}
	short := mean * float64(time.Second)
	c.now = n
	c.close(short, c.bound)
	c.last = short
	c.start, c.n, c.sum, c.sumSq, c.bound = n, 0, 0, 0, false
}

// maxWindowSamples ends a window whatever its spread.
const maxWindowSamples = 400

// close ends a window whose answers took short on average; bound says
// whether one of its calls was sent with the limit reached.
func (c *Ceiling) close(short float64, bound bool) {
	if !(short > 0) {
		return
	}
	if c.floor == 0 || short < c.floor {
		c.floor = short
	}
	if !bound {
		// The limit held nothing back: the limit is not at issue.
		return
	}
	if c.slow && short <= c.floor*slowStartRise {
		// Doubled again only once the answers tell what the last
		// doubling did: all of the window's calls were sent since.
		if c.from >= c.grewAt {
			c.limit = min(c.limit*2, float64(c.cfg.Max))
			c.peak = max(c.peak, c.limit)
			c.grewAt = c.now
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
