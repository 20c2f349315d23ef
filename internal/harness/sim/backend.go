package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Backend is the simulated service, shared by every group of a run and by
// the competitor. Times are durations since the start of the run; a Backend
// is called with times that never go back, and is not safe for concurrent
// use. Its capacity follows the scenario's phases (see [Capacity]).
//
// To add a kind of backend, implement Backend and describe it with a
// [BackendModel]; Config.Backend selects the model of a run. A backend that
// makes requests wait instead of refusing them implements [Queuer] too.
type Backend interface {
	// Take serves a request arriving at at: ok if the backend accepts it,
	// else a rejection (HTTP 429) with its Retry-After, 0 when the backend
	// sends none.
	Take(at time.Duration) (ok bool, retryAfter time.Duration)
	// NextAvailable returns the earliest time not before at at which a
	// request would be accepted if no other request came first (Never if
	// none ever would). It changes nothing the backend will answer: Take at
	// a time t answers the same whether NextAvailable was called before or
	// not. An oracle uses it; Take(NextAvailable(at)) accepts (and, for a
	// Queuer, serves the request without waiting).
	NextAvailable(at time.Duration) time.Duration
}

// Never is a time after every run, returned by Backend.NextAvailable when no
// request would ever be accepted.
const Never = time.Duration(math.MaxInt64)

// BackendModel describes a kind of backend and builds one per run.
type BackendModel struct {
	// Name identifies the model in tables, such as "fixed-5s-ra".
	Name string
	// Description says what it is, in one line.
	Description string
	// New returns a backend with capacity c, fresh (full) at the start of
	// the run; seed seeds whatever it draws at random.
	New func(c Capacity, seed uint64) Backend
}

// Capacity is what a backend accepts over a run, in requests per second: the
// scenario's phases' Capacity scaled by Config.Capacity, zero during an
// outage. Backends read it as a step function.
type Capacity struct {
	base   float64
	phases []Phase
}

// NewCapacity returns the capacity of phases (in order of At, the first at
// 0) scaled by base requests per second.
func NewCapacity(base float64, phases []Phase) Capacity {
	return Capacity{base: base, phases: phases}
}

// At returns the rate in force at t, in requests per second, and the end of
// the phase holding t: the rate is constant on [start of phase, until),
// and until is Never for the last phase.
func (c Capacity) At(t time.Duration) (rate float64, until time.Duration) {
	i := 0
	for i+1 < len(c.phases) && c.phases[i+1].At <= t {
		i++
	}
	until = Never
	if i+1 < len(c.phases) {
		until = c.phases[i+1].At
	}
	return c.phases[i].capacity() * c.base, until
}

// tolerance absorbs float rounding when a backend compares its state with
// the exact threshold of acceptance: NextAvailable computes the nanosecond
// at which the threshold is reached, rounded up, and Take at that time must
// accept.
const tolerance = 1e-9

// retryAfter is the Retry-After of a request rejected at at, when the next
// would be accepted at next, like the test server's: the wait rounded up to
// whole seconds, at least one second. During an outage (rate 0) the backend
// does not know when it ends and says one second.
func retryAfter(at, next time.Duration, rate float64) time.Duration {
	if rate == 0 || next == Never {
		return time.Second
	}
	s := (next - at + time.Second - 1) / time.Second
	return max(s, 1) * time.Second
}

// withRetryAfter names a model with or without Retry-After.
func withRetryAfter(name, description string, on bool) (string, string) {
	if on {
		return name + "-ra", description + "; a 429 carries a Retry-After (the wait rounded up to whole seconds, at least 1 s)"
	}
	return name, description + "; a 429 carries no Retry-After"
}

// TokenBucket is a token bucket refilled continuously at the capacity and
// holding burst of it (at least one token), full at the start; burst 0 is
// a one-token bucket. A phase change keeps the tokens, up to the new depth;
// during an outage it holds none. With a burst of one second and
// Retry-After on it is the default backend.
func TokenBucket(burst time.Duration, retryAfterOn bool) BackendModel {
	return SteppedTokenBucket(burst, 0, retryAfterOn)
}

// SteppedTokenBucket is TokenBucket refilled in steps, as the test server's
// quota is (every 100 ms by default): at every multiple of step since the
// start of the run it adds capacity × step tokens. Step 0 is continuous.
// A one-token bucket refilled continuously accepts exactly what a GCRA
// limiter with no burst does; refilled in steps it accepts only on the
// grid of steps.
func SteppedTokenBucket(burst, step time.Duration, retryAfterOn bool) BackendModel {
	name, desc := fmt.Sprintf("token-bucket-%s", compact(burst)), fmt.Sprintf("token bucket holding %s of capacity", spaced(burst))
	if burst == 0 {
		name, desc = "one-token", "token bucket of one token"
	}
	if step > 0 {
		name += "-step-" + compact(step)
		desc += fmt.Sprintf(", refilled every %s", spaced(step))
	}
	name, desc = withRetryAfter(name, desc, retryAfterOn)
	return BackendModel{Name: name, Description: desc, New: func(c Capacity, seed uint64) Backend {
		b := &tokenBucket{cap: c, burst: burst.Seconds(), step: step, ra: retryAfterOn}
		r, _ := c.At(0)
		b.tokens = b.depth(r)
		return b
	}}
}

// FixedWindow is a fixed-window quota: windows of length window aligned to
// the start of the run, each accepting capacity × window requests (rounded
// down; the capacity in force at each request counts, and a change keeps
// the window's count). It accepts nothing during an outage.
func FixedWindow(window time.Duration, retryAfterOn bool) BackendModel {
	name, desc := withRetryAfter(fmt.Sprintf("fixed-%s", compact(window)),
		fmt.Sprintf("fixed window of %s aligned to the run's start, quota = capacity × %s", spaced(window), spaced(window)), retryAfterOn)
	return BackendModel{Name: name, Description: desc, New: func(c Capacity, seed uint64) Backend {
		return &fixedWindow{cap: c, window: window, ra: retryAfterOn}
	}}
}

// DriftingWindow is a fixed-window quota whose windows are not aligned to
// the run or to each other: each lasts window plus a uniformly random
// extra in [0, jitter), the first began at a random time before the start
// of the run, and each accepts capacity × (window + jitter/2) requests
// (rounded down), as FixedWindow's do.
func DriftingWindow(window, jitter time.Duration, retryAfterOn bool) BackendModel {
	name, desc := withRetryAfter(fmt.Sprintf("drift-%s-%s", compact(window), compact(window+jitter)),
		fmt.Sprintf("fixed windows of %s to %s, drifting, not aligned, quota = capacity × %s", spaced(window),
			spaced(window+jitter), spaced(window+jitter/2)), retryAfterOn)
	return BackendModel{Name: name, Description: desc, New: func(c Capacity, seed uint64) Backend {
		return &fixedWindow{cap: c, window: window, jitter: jitter, ra: retryAfterOn,
			rng: rand.New(rand.NewPCG(seed, 0xd41f7))}
	}}
}

// GCRA is the generic cell rate algorithm as API gateways use it (and the
// test server's gcra mode): a request at t is accepted iff t ≥ TAT − τ, TAT
// being the theoretical arrival time, which then becomes max(TAT, t) + T,
// with T = 1/capacity and τ = (burst − 1)·T. Burst 0 or 1 means none:
// requests must be at least T apart. A change of capacity keeps the
// emission intervals TAT is ahead of now, at the new rate; an outage rejects
// everything and leaves TAT alone.
func GCRA(burst int, retryAfterOn bool) BackendModel {
	burst = max(burst, 1)
	name, desc := "gcra", "strict GCRA limiter, no burst: requests at least 1/capacity apart"
	if burst > 1 {
		name, desc = fmt.Sprintf("gcra-burst-%d", burst), fmt.Sprintf("GCRA limiter with a burst of %d", burst)
	}
	name, desc = withRetryAfter(name, desc, retryAfterOn)
	return BackendModel{Name: name, Description: desc, New: func(c Capacity, seed uint64) Backend {
		r, _ := c.At(0)
		return &gcra{cap: c, burst: float64(burst), rate: r, ra: retryAfterOn}
	}}
}

// compact formats d in whole seconds or milliseconds when it can: "1s",
// "60s", "500ms".
func compact(d time.Duration) string {
	switch {
	case d >= time.Second && d%time.Second == 0:
		return fmt.Sprintf("%ds", d/time.Second)
	case d%time.Millisecond == 0:
		return fmt.Sprintf("%dms", d/time.Millisecond)
	}
	return d.String()
}
