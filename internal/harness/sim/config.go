package sim

import (
	"fmt"
	"math"
	"time"

	"github.com/beamthrottle/beamthrottle/internal/defaults"
	"github.com/beamthrottle/beamthrottle/internal/firing"
)

// Config sets up the simulated system. The zero value means the documented
// defaults.
type Config struct {
	// Groups is the number of groups. Zero means 1.
	Groups int
	// Workers is the number of workers the groups are spread over (group
	// i runs on worker i mod Workers). An Algorithm with Shared set has
	// one Policy per worker, used by all its groups; the others have one
	// per group. Zero means 1.
	Workers int
	// Seed seeds every random stream of a run; runs with the same Seed and
	// Config are identical. Zero means DefaultSeed.
	Seed uint64
	// Capacity is the backend capacity, in requests per second, that a
	// Phase's Capacity, Offered and Competitor of 1 stand for. Zero means
	// DefaultCapacity.
	Capacity float64
	// Backend is the kind of backend. The zero value means DefaultBackend:
	// a token bucket holding one second of capacity whose 429s carry a
	// Retry-After, like the test server's default quota.
	Backend BackendModel
	// Latency is how long after sending a call its answer comes back and
	// is recorded: the same for every call, or, with LatencyP99, the median
	// of a lognormal draw per call. Zero means none; DefaultConfig uses
	// 500 µs.
	Latency time.Duration
	// LatencyP99, when above Latency, makes each call's latency a draw of a
	// lognormal distribution with median Latency and 99th percentile
	// LatencyP99 (heavy-tailed, as LLM and translation APIs answer), from a
	// seeded stream of each group's; answers then come back out of order.
	// Zero means a constant Latency.
	LatencyP99 time.Duration
	// RefuseAtOnce answers a call the backend refuses in full a
	// millisecond after it is sent, without Latency, as a gateway in
	// front of a slow backend refuses before the backend works (the quota
	// server's Config.RefuseAtOnce). False delays every answer alike.
	RefuseAtOnce bool
	// CallsInFlight is how many calls a group has sent and not had
	// answered at most. Zero means 1, or, with SizeCalls,
	// defaults.MaxCallsInFlight.
	CallsInFlight int
	// SizeCalls sizes each group's calls under way to what its policy's
	// pace needs at the calls' latency (firing.Config.SizeCalls), under
	// CallsInFlight, as the transform's paced mode does when its
	// CallsInFlight is 0; and the calls under way of a worker's groups are
	// bounded together by an adaptive.Ceiling fed with their answers, as
	// the transform's call board does. A policy without a pace (Budget
	// −1) gets CallsInFlight under the ceiling, where the transform's SRE
	// mode keeps one call. By default each group has CallsInFlight, and
	// no ceiling.
	SizeCalls bool
	// CallTimeout bounds each call: a call whose answer would come later
	// is answered at CallTimeout as failed, and its elements become final
	// errors (Outcomes.Errors). The backend still served it. Zero means no
	// timeout.
	CallTimeout time.Duration
	// BatchInterval is the period of each group's batch loop. Zero means one
	// second, the transform's default.
	BatchInterval time.Duration
	// BatchSize is the most elements a firing decides on (Send or Reject;
	// a Postpone ends the firing). Zero means 100 000, high enough that
	// the batch loop never limits throughput in the standard scenarios
	// (the transform's default is 100).
	BatchSize int
	// Firing selects the firing's model; the zero value is FiringInterval.
	Firing FiringModel
	// FiringWait is, with FiringInterval, how long a firing goes on
	// deciding after its timer. Zero means BatchInterval, as the
	// transform does.
	FiringWait time.Duration
	// Tick is the shortest time after a Postpone that ends a firing before
	// the group's next firing. Zero means DefaultTick.
	Tick time.Duration
	// StartJitter is the range of the uniformly random delay between a
	// firing's timer and its first decision, for the work a runner does
	// first. Zero means none; DefaultConfig uses 2 ms.
	StartJitter time.Duration
	// MaxWait bounds how long an element may wait in its group's queue: a
	// firing first rejects the elements that have waited longer, to
	// ClientThrottled if the backend never rejected them and to
	// ServerThrottled if it did. Zero means no bound.
	MaxWait time.Duration
	// ItemsPerCall bounds the elements of one call, as the transform's
	// WithItemsPerCall: a firing packs up to ItemsPerCall elements, in
	// queue order, into each call it decides on (firing.Config), and the
	// backend serves each of them as one request (a Take each). Zero or 1
	// means one element per call.
	ItemsPerCall int
	// CostOf, if set, gives each element its cost in cost units, by when
	// it arrived (firing.Elem.Cost, as the transform's WithCost sets it):
	// what a call is charged against the policy's pace and the quota, a
	// call of several elements the sum of theirs. The backend still serves
	// each element as one request. Nil means a cost of 1 each.
	CostOf func(arrived time.Duration) int
	// Quota, if set, returns the shared quota a firing of group asks for
	// permits before each call (firing.Env.Quota), as the transform's
	// firings ask their worker's permit pool: it is called at the start of
	// every firing, so it returns the same quota for the groups that
	// share one. Nil, or a nil Quota, means none. A slot of a quota of
	// time slots that a firing claimed and did not use (firing.Firing.Held) stays
	// claimed: firing.Quota cannot give it back, as the transform's permit
	// pool does when the firing ends. A Quota that is a QuotaService makes
	// the round trips to its service that the firings ask for
	// (firing.AskQuota) on the virtual clock; a SharedQuota per worker
	// over one QuotaModel models a quota shared by the workers.
	Quota func(group int) firing.Quota
	// MaxBuffered bounds a group's backlog (its elements not yet final,
	// including those in flight): an element arriving at a group holding
	// MaxBuffered is client-rejected at once. Zero means no bound.
	MaxBuffered int
	// FinalThrottled makes a 429 final (ServerThrottled), as the
	// transform's Route strategy did before postponement: the per-element
	// model, in which each element is decided on and sent at most once.
	// By default a throttled element goes back to its group's queue.
	FinalThrottled bool
	// Persist saves each group's Policy with MarshalBinary after every
	// firing and restores it, with UnmarshalBinary, into a new Policy from
	// Algorithm.New, as the transform keeps it in Beam state between
	// firings. A Policy whose state survives the round trip gives the
	// same results with and without Persist.
	Persist bool
	// Advertise passes the quota the backend advertises on each answer (an
	// [Advertiser]: the fixed windows and the token buckets) to the
	// policies, as adaptive.Answer.Quota, as the transform passes what its
	// clientcall reads from an answer's rate-limit headers. A call timed
	// out carries none. By default the answers carry no quota, as from an
	// API that advertises none.
	Advertise bool
	// AdvertiseSkew, with Advertise, moves the Reset each worker reads on
	// an advertised quota: later by AdvertiseSkew on even workers, earlier
	// on odd ones. It stands for what a client that corrects a Reset with
	// the answer's Date header still gets wrong: Date has whole-second
	// resolution, so its view of Reset is off by up to a second, either
	// way depending on how it rounds. Zero means none.
	AdvertiseSkew time.Duration
	// Headers, with Advertise, is the family of headers the quota is read
	// from, for the backends the quota server has too (the fixed windows,
	// the token buckets, GCRA): what the family tells, rounded as it
	// rounds. The others advertise as HeadersExact, the default.
	Headers Headers
	// OnFinal, if set, is told of every element's final outcome in turn:
	// when it arrived, and "success", "client-rejected" or
	// "server-throttled". Tests compare it with the transform's routes.
	OnFinal func(arrived time.Duration, outcome string)
}

// FiringModel is how a firing handles time: how long it decides, and what
// a Postpone does.
type FiringModel int

const (
	// FiringInterval is the transform's firing
	// (docs/design/postponement.md): a firing decides for at most
	// FiringWait from its timer. A Postpone to a time before then
	// waits for it inside the firing (MinWait at least), recording the
	// answers that come meanwhile, so sends are spread over the interval
	// at the policy's pace; a Postpone to a later time ends the firing's
	// decisions and sets the timer to max(RetryAt, now + Tick).
	FiringInterval FiringModel = iota
	// FiringStop has no time bound: a firing decides until BatchSize or the
	// eligible elements run out, and any Postpone ends its decisions and
	// sets the timer to max(RetryAt, now + Tick). With policies that never
	// postpone it is the transform's loop before firings waited for slots (PerElementCases
	// use it).
	FiringStop
)

// String returns the model's name.
func (m FiringModel) String() string {
	switch m {
	case FiringInterval:
		return "interval"
	case FiringStop:
		return "stop"
	}
	return fmt.Sprintf("FiringModel(%d)", int(m))
}

// Defaults of Config.
const (
	DefaultSeed     uint64  = 0x51_5eed
	DefaultCapacity float64 = 100
	DefaultTick             = 50 * time.Millisecond
)

// DefaultBackend is the backend of a zero Config: today's test server
// quota.
func DefaultBackend() BackendModel { return TokenBucket(time.Second, true) }

// DefaultConfig returns the configuration of the classic scenarios: G
// groups, 100 requests per second of capacity, the default backend, 500 µs
// latency and 2 ms start jitter.
func DefaultConfig(groups int) Config {
	return Config{
		Groups:      groups,
		Latency:     500 * time.Microsecond,
		StartJitter: 2 * time.Millisecond,
	}
}

func (c Config) withDefaults() Config {
	if c.Groups == 0 {
		c.Groups = 1
	}
	if c.Workers == 0 {
		c.Workers = 1
	}
	if c.Seed == 0 {
		c.Seed = DefaultSeed
	}
	if c.Capacity == 0 {
		c.Capacity = DefaultCapacity
	}
	if c.Backend.New == nil {
		c.Backend = DefaultBackend()
	}
	if c.CallsInFlight == 0 {
		c.CallsInFlight = 1
		if c.SizeCalls {
			c.CallsInFlight = defaults.MaxCallsInFlight
		}
	}
	if c.BatchInterval == 0 {
		c.BatchInterval = time.Second
	}
	if c.FiringWait == 0 {
		c.FiringWait = c.BatchInterval
	}
	if c.BatchSize == 0 {
		c.BatchSize = 100_000
	}
	if c.Tick == 0 {
		c.Tick = DefaultTick
	}
	return c
}

func (c Config) validate() error {
	switch {
	case c.Groups < 1:
		return fmt.Errorf("sim: Groups must be at least 1, got %d", c.Groups)
	case c.Workers < 1 || c.Workers > c.Groups:
		return fmt.Errorf("sim: Workers must be in [1, Groups], got %d", c.Workers)
	case !(c.Capacity > 0):
		return fmt.Errorf("sim: Capacity must be positive, got %v", c.Capacity)
	case c.Latency < 0 || c.StartJitter < 0 || c.BatchInterval <= 0 || c.FiringWait <= 0 || c.Tick <= 0 || c.MaxWait < 0 ||
		c.CallTimeout < 0 || c.AdvertiseSkew < 0:
		return fmt.Errorf("sim: durations must not be negative")
	case c.LatencyP99 != 0 && (c.Latency <= 0 || c.LatencyP99 <= c.Latency):
		return fmt.Errorf("sim: LatencyP99 %v must be above a positive Latency (the median), got %v", c.LatencyP99, c.Latency)
	case c.BatchSize < 1:
		return fmt.Errorf("sim: BatchSize must be at least 1, got %d", c.BatchSize)
	case c.CallsInFlight < 1:
		return fmt.Errorf("sim: CallsInFlight must be at least 1, got %d", c.CallsInFlight)
	case c.ItemsPerCall < 0:
		return fmt.Errorf("sim: ItemsPerCall must not be negative, got %d", c.ItemsPerCall)
	case c.MaxBuffered < 0:
		return fmt.Errorf("sim: MaxBuffered must not be negative, got %d", c.MaxBuffered)
	case c.Firing != FiringInterval && c.Firing != FiringStop:
		return fmt.Errorf("sim: unknown Firing %v", c.Firing)
	}
	return nil
}

// ceiling is the most calls per second the groups can send at all: their
// calls under way at most (Groups × CallsInFlight; with SizeCalls,
// Workers × CallsInFlight, or Groups if more) / the mean latency (+Inf
// without latency).
func (c Config) ceiling() float64 {
	if c.Latency <= 0 {
		return inf
	}
	calls := c.Groups * c.CallsInFlight
	if c.SizeCalls {
		calls = max(c.Workers*c.CallsInFlight, c.Groups)
	}
	s := lognormalSigma(c.Latency, c.LatencyP99)
	return float64(calls) / (c.Latency.Seconds() * math.Exp(s*s/2))
}

// z99 is the standard normal distribution's 99th percentile.
const z99 = 2.3263478740408408

// lognormalSigma returns the σ of a lognormal latency of median median
// and 99th percentile p99; 0 (constant) when p99 is not above median.
func lognormalSigma(median, p99 time.Duration) float64 {
	if median <= 0 || p99 <= median {
		return 0
	}
	return math.Log(float64(p99)/float64(median)) / z99
}
