// Package sim is a deterministic simulator for client-side throttling
// algorithms: it replays load scenarios (steady overload, under-load, quota
// drop and rise, a burst, an outage) against a simulated backend, on a
// virtual clock with seeded randomness, and measures how much of the
// backend's capacity each algorithm uses, how many of the calls it sends are
// wasted on rejections, and how fast it recovers after a change.
//
// # Model
//
// The backend is a token bucket refilled at the scenario's capacity and
// holding Config.BackendBurst of it (one second by default, like the test
// server's quota), shared by all groups; during an outage it rejects
// everything. A rejected call gets a Retry-After like the test server's
// (whole seconds, at least one).
//
// Elements arrive as a Poisson process at the offered rate, spread evenly
// over Config.Groups groups, each with its own throttle. Each group runs the
// batch loop of the Beam transform in transforms/throttle: its timer fires
// Config.BatchInterval after the first element arrives in an empty buffer;
// a firing takes up to Config.BatchSize buffered elements, oldest first, and
// decides on them one by one: a locally rejected element takes no time; an
// allowed one is sent to the backend at once, and its answer is recorded
// Config.Latency later, before the next decision (one call in flight per
// group, as with the transform's default). If elements are left in the
// buffer, the timer fires again BatchInterval after the previous firing (or
// at once if the firing ran longer); otherwise the next arrival arms it
// again. So groups do not fire in step, and their periods are a little
// longer than BatchInterval and vary. A firing's first decision comes
// Config.StartJitter (uniform random) after the timer, for the work a runner
// does first. Throttled elements are not retried: each arrival is decided on
// once (the transform's Route strategy).
//
// The groups' events are processed in global time order, so they share the
// backend's tokens as concurrent clients would. Arrivals, start delays and
// the throttles' random numbers come from separate seeded streams per group;
// arrivals are the same Poisson process for every algorithm, though not the
// same draws, since batch timing (which depends on the calls sent) decides
// how the stream is consumed.
//
// # Metrics
//
// Every metric leaves out the scenario's warm-up. Utilisation is accepted
// calls divided by the integral of min(offered rate, capacity) (the nominal
// rates, zero during an outage); waste is backend rejections divided by
// calls sent; client-rejected is local rejections divided by arrivals. The
// recovery time after a change is r = s − change + 1 s for the first second
// s from which three consecutive seconds reach 90 % utilisation together.
package sim

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// Config sets up the simulated system. The zero value means the documented
// defaults.
type Config struct {
	// Groups is the number of groups, each with its own throttle. Zero means 1.
	Groups int
	// Seed seeds every random stream of a run; runs with the same Seed and
	// Config are identical. Zero means DefaultSeed.
	Seed uint64
	// Capacity is the backend capacity, in requests per second, that a
	// Phase's Capacity and Offered of 1 stand for. Zero means
	// DefaultCapacity.
	Capacity float64
	// BackendBurst is the depth of the backend's token bucket, as time at
	// its capacity. Zero means one second.
	BackendBurst time.Duration
	// Latency is how long after sending a call its answer is recorded, and
	// the time a group spends on one call. Zero means no latency;
	// DefaultConfig uses 500 µs.
	Latency time.Duration
	// BatchInterval is the period of each group's batch loop. Zero means one
	// second, the transform's default.
	BatchInterval time.Duration
	// BatchSize is the most elements a group decides on per batch. Zero
	// means 100 000, high enough that the batch loop never limits
	// throughput in the standard scenarios (the transform's default is 100).
	BatchSize int
	// StartJitter is the range of the uniformly random delay between a
	// batch's nominal time and its first decision. Zero means none;
	// DefaultConfig uses 2 ms.
	StartJitter time.Duration
	// RetryAfter passes the backend's Retry-After of each rejection to the
	// throttle (the transform does so after a throttled answer that
	// carries one).
	RetryAfter bool
}

// Defaults of Config.
const (
	DefaultSeed     uint64  = 0x51_5eed
	DefaultCapacity float64 = 100
)

// DefaultConfig returns the configuration of the standard report: G groups,
// 100 requests per second of capacity, 500 µs latency, 2 ms start jitter,
// Retry-After passed on.
func DefaultConfig(groups int) Config {
	return Config{
		Groups:      groups,
		Latency:     500 * time.Microsecond,
		StartJitter: 2 * time.Millisecond,
		RetryAfter:  true,
	}
}

func (c Config) withDefaults() Config {
	if c.Groups == 0 {
		c.Groups = 1
	}
	if c.Seed == 0 {
		c.Seed = DefaultSeed
	}
	if c.Capacity == 0 {
		c.Capacity = DefaultCapacity
	}
	if c.BackendBurst == 0 {
		c.BackendBurst = time.Second
	}
	if c.BatchInterval == 0 {
		c.BatchInterval = time.Second
	}
	if c.BatchSize == 0 {
		c.BatchSize = 100_000
	}
	return c
}

func (c Config) validate() error {
	switch {
	case c.Groups < 1:
		return fmt.Errorf("sim: Groups must be at least 1, got %d", c.Groups)
	case !(c.Capacity > 0):
		return fmt.Errorf("sim: Capacity must be positive, got %v", c.Capacity)
	case c.BackendBurst < 0 || c.Latency < 0 || c.StartJitter < 0 || c.BatchInterval <= 0:
		return fmt.Errorf("sim: durations must not be negative")
	case c.BatchSize < 1:
		return fmt.Errorf("sim: BatchSize must be at least 1, got %d", c.BatchSize)
	}
	return nil
}

// Series holds per-second counts of a run, indexed by second since the
// start. Elements are counted in the second they arrive (Offered) or are
// decided on (the others).
type Series struct {
	Offered         []int64
	Sent            []int64
	Accepted        []int64
	BackendRejected []int64
	ClientRejected  []int64
	// Limit is min(offered rate, capacity) in requests per second: what a
	// perfect client gets accepted.
	Limit []float64
}

// Result is the outcome of one run.
type Result struct {
	Scenario  string
	Algorithm string
	Groups    int
	Series    Series
	Metrics   Metrics
}

// group is one group of the transform: a buffer, a batch loop and a
// throttle.
type group struct {
	id         int
	thr        Throttle
	arrivals   *rand.Rand // arrival counts
	jitter     *rand.Rand // start jitter
	at         int64      // time of the group's next event
	nominal    int64      // nominal time of the next batch
	arrived    int64      // arrivals are drawn up to this time
	buffer     int64      // elements waiting for a batch
	remaining  int        // elements left in the current batch
	pending    bool       // a call's answer is due at at
	outcome    adaptive.Outcome
	retryAfter time.Duration
	index      int // in the heap
}

// queue orders groups by their next event, then by id.
type queue []*group

func (q queue) Len() int { return len(q) }
func (q queue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].id < q[j].id
}
func (q queue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index, q[j].index = i, j
}
func (q *queue) Push(x any) {
	g := x.(*group)
	g.index = len(*q)
	*q = append(*q, g)
}
func (q *queue) Pop() any {
	old := *q
	g := old[len(old)-1]
	*q = old[:len(old)-1]
	return g
}

// stream returns a random source for run seed, group g and purpose k, so
// that streams are independent of each other and of the algorithm.
func stream(seed uint64, g int, k uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, uint64(g)<<8|k))
}

// Run simulates scenario sc with algorithm alg.
func Run(sc Scenario, alg Algorithm, cfg Config) (Result, error) {
	if err := sc.Validate(); err != nil {
		return Result{}, err
	}
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return Result{}, err
	}
	secs := int(sc.Duration / time.Second)
	res := Result{
		Scenario: sc.Name, Algorithm: alg.Name, Groups: cfg.Groups,
		Series: Series{
			Offered: make([]int64, secs), Sent: make([]int64, secs), Accepted: make([]int64, secs),
			BackendRejected: make([]int64, secs), ClientRejected: make([]int64, secs), Limit: make([]float64, secs),
		},
	}
	for s := range secs {
		res.Series.Limit[s] = sc.Phases[sc.phaseAt(time.Duration(s)*time.Second)].limit() * cfg.Capacity
	}
	b := newBackend(&sc, cfg.Capacity, cfg.BackendBurst)
	available := func(at time.Duration) bool { return b.available(int64(at)) }
	end := int64(sc.Duration)
	interval := int64(cfg.BatchInterval)
	perGroup := cfg.Capacity / float64(cfg.Groups)

	q := make(queue, 0, cfg.Groups)
	for i := range cfg.Groups {
		thrRand := stream(cfg.Seed, i, 3)
		g := &group{
			id:       i,
			arrivals: stream(cfg.Seed, i, 1),
			jitter:   stream(cfg.Seed, i, 2),
			thr:      alg.New(Env{Group: i, Groups: cfg.Groups, Rand: thrRand.Float64, Available: available}),
		}
		g.arm(&sc, 0, end, interval, perGroup, &res.Series)
		q = append(q, g)
	}
	heap.Init(&q)

	series := &res.Series
	for len(q) > 0 {
		g := q[0]
		if g.at >= end {
			break
		}
		now := g.at
		if g.pending {
			g.pending = false
			g.thr.Record(time.Duration(now), g.outcome)
			if g.retryAfter > 0 && cfg.RetryAfter {
				g.thr.RecordRetryAfter(time.Duration(now), g.retryAfter)
			}
		} else if g.remaining == 0 {
			// A batch fires: buffer what arrived since the last one.
			g.arrive(&sc, now, perGroup, series)
			take := int(min(g.buffer, int64(cfg.BatchSize)))
			g.buffer -= int64(take)
			g.remaining = take
			g.nominal += interval
			if take > 0 && cfg.StartJitter > 0 {
				now += int64(g.jitter.Float64() * float64(cfg.StartJitter))
			}
		}
		// Decide until a call is sent or the batch is done.
		for g.remaining > 0 && !g.pending && now < end {
			g.remaining--
			sec := int(now / int64(time.Second))
			if !g.thr.Decide(time.Duration(now)) {
				series.ClientRejected[sec]++
				continue
			}
			series.Sent[sec]++
			ok, ra := b.take(now)
			if ok {
				series.Accepted[sec]++
				g.outcome, g.retryAfter = adaptive.Accepted, 0
			} else {
				series.BackendRejected[sec]++
				g.outcome, g.retryAfter = adaptive.Throttled, ra
			}
			g.pending = true
			now += int64(cfg.Latency)
		}
		switch {
		case g.pending:
			g.at = now
		case g.buffer > 0:
			g.at = max(g.nominal, now)
		default:
			g.arm(&sc, now, end, interval, perGroup, series)
		}
		heap.Fix(&q, 0)
	}
	res.Metrics = measure(&sc, series)
	return res, nil
}

// arm sets the timer of a group whose buffer a firing emptied, at t, the
// end of that firing: elements that arrived during the firing are handled
// after it and arm the timer for t + BatchInterval; otherwise the next
// arrival arms it for BatchInterval after itself (and nothing happens if no
// element arrives before end).
func (g *group) arm(sc *Scenario, t, end, interval int64, perGroup float64, series *Series) {
	g.arrive(sc, t, perGroup, series)
	if g.buffer > 0 {
		g.nominal = t + interval
		g.at = g.nominal
		return
	}
	e := g.arrivals.ExpFloat64() // in units of expected arrivals
	for t < end {
		i := sc.phaseAt(time.Duration(t))
		segEnd := min(end, int64(sc.phaseEnd(i)))
		rate := sc.Phases[i].Offered * perGroup
		if need := e / rate * 1e9; rate > 0 && need < float64(segEnd-t) {
			t += max(1, int64(need))
			g.buffer++
			if s := int(t / int64(time.Second)); s < len(series.Offered) {
				series.Offered[s]++
			}
			g.arrived = t
			g.nominal = t + interval
			g.at = g.nominal
			return
		}
		e -= rate * float64(segEnd-t) / 1e9
		t = segEnd
	}
	g.arrived = end
	g.at = end
}

// arrive draws the group's arrivals up to t, second by second (phases
// begin on whole seconds), into its buffer and the Offered series.
func (g *group) arrive(sc *Scenario, t int64, perGroup float64, series *Series) {
	const sec = int64(time.Second)
	for g.arrived < t {
		s := g.arrived / sec
		segEnd := min(t, (s+1)*sec)
		rate := sc.Phases[sc.phaseAt(time.Duration(s*sec))].Offered * perGroup
		k := poisson(g.arrivals, rate*float64(segEnd-g.arrived)/1e9)
		g.buffer += k
		if int(s) < len(series.Offered) {
			series.Offered[s] += k
		}
		g.arrived = segEnd
	}
}
