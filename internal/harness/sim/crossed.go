package sim

import (
	"fmt"
	"slices"
	"time"

	"github.com/beamthrottle/beamthrottle/internal/defaults"
)

// FamilyCrossed is the family of CrossedCases.
const FamilyCrossed = "crossed: latency × limiter × headers × workers"

// Targets of the crossed grid, as the paced mode's users meet the API: every
// element succeeds, nothing is client-throttled, 90 % of the quota's rate
// over the whole run (to the send of the last call accepted) and, where
// the limiter's rate is even over a second, 95 % of it from the tenth
// second on; waste at most 1 % when the API advertises its quota, 2 % when
// not. Harder cells have their own: the seed's drifting window (3 % of
// waste), several workers that share nothing but a quota that is not
// advertised (5 %). A queue accepts what it will serve later: it is to be
// done within the time of 90 % of its rate plus the latency (the p99 for a
// lognormal one), its answers within twice the unloaded latency.
const (
	crossedMinSteadyUse      = 0.95
	crossedMinRunUse         = 0.90
	crossedMaxWasteTold      = 0.01
	crossedMaxWasteSilent    = 0.02
	crossedMaxWasteDrift     = 0.03
	crossedMaxWasteWorkers   = 0.05
	crossedQueueAnswerFactor = 2
	// A queue answering at once still queues a little: a few turns.
	crossedQueueAnswerSlack = 250 * time.Millisecond
)

// crossedLatency is one latency of the grid.
type crossedLatency struct {
	name        string
	median, p99 time.Duration // p99 0: constant
}

// crossedLatencies: answers at once (a round trip on loopback), in 2 s,
// and lognormal with a median of 3 s and a p99 of 20 s, as LLM APIs answer.
var crossedLatencies = []crossedLatency{
	{"at-once", time.Millisecond, 0},
	{"2s", 2 * time.Second, 0},
	{"lognormal", 3 * time.Second, 20 * time.Second},
}

// crossedLimiter is one limiter of the grid, at its capacity.
type crossedLimiter struct {
	name     string
	model    BackendModel
	capacity float64       // requests per second
	quota    time.Duration // the elements of one worker: capacity × quota
	even     bool          // its rate is even over a second: SteadyUse measures it
}

// crossedLimiters: a strict GCRA (no burst), the quota server's token
// bucket (a second of burst, refilled in 100 ms steps), fixed windows of a
// second and a minute (600 a minute, no Retry-After), the seed's drifting
// window (99 per 4–5 s, no Retry-After) and a server that queues instead
// of refusing. The limiters that refuse answer with Retry-After unless
// said, and every refusal at once, as gateways refuse before the backend
// works.
func crossedLimiters() []crossedLimiter {
	return []crossedLimiter{
		{"gcra", GCRA(1, true), 20, time.Minute, true},
		{"bucket", SteppedTokenBucket(time.Second, serverRefill, true), 20, time.Minute, true},
		{"fixed-1s", FixedWindow(time.Second, true), 20, time.Minute, true},
		{"fixed-60s", FixedWindow(time.Minute, false), 10, 2 * time.Minute, false},
		{"drift", DriftingWindow(4*time.Second, time.Second, false), limitDriftCapacity, time.Minute, false},
		{"queue", Queue(), 20, time.Minute, true},
	}
}

// CrossedHeaders are the header families of the grid: none, then those
// the quota server sends.
var CrossedHeaders = []Headers{HeadersExact, HeadersIETF, HeadersX, HeadersOpenAI}

// CrossedWorkers are the numbers of workers of the grid, each with one
// group and its own pacer, sharing one API key and nothing else.
var CrossedWorkers = []int{1, 8}

// CrossedAlgorithms are the algorithms of CrossedCases: the pacer as the
// transform's paced mode builds it.
var CrossedAlgorithms = []string{Pacer}

// CrossedCases returns the grid that crosses every capability of the paced
// mode as users meet them together: each latency of crossedLatencies ×
// each limiter of crossedLimiters × advertising nothing or each family of
// CrossedHeaders (a queue advertises nothing) × each number of
// CrossedWorkers, a bounded input of a minute of the quota (two minutes
// for the window of a minute) spread evenly over the workers, the calls
// sized to the pace (the transform's defaults), no bound on an element's
// wait, batches of the transform's default size. Each cell has the
// targets above.
func CrossedCases() []Case {
	var cs []Case
	for _, lat := range crossedLatencies {
		for _, lim := range crossedLimiters() {
			for _, h := range CrossedHeaders {
				if lim.name == "queue" && h != HeadersExact {
					continue
				}
				for _, w := range CrossedWorkers {
					cs = append(cs, crossedCase(lat, lim, h, w))
				}
			}
		}
	}
	return cs
}

// crossedCase returns the cell of the grid at lat, lim, h (HeadersExact:
// nothing advertised) and w workers.
func crossedCase(lat crossedLatency, lim crossedLimiter, h Headers, w int) Case {
	told := h != HeadersExact
	headers := "none"
	if told {
		headers = h.String()
	}
	name := fmt.Sprintf("x/%s/%s/%s/%dw", lat.name, lim.name, headers, w)
	cfg := Config{Backend: lim.model, Capacity: lim.capacity, Latency: lat.median, LatencyP99: lat.p99,
		RefuseAtOnce: true, StartJitter: DefaultConfig(1).StartJitter, SizeCalls: true, CallTimeout: defaults.CallTimeout,
		Advertise: told, Headers: h, Workers: w, BatchSize: defaults.BatchSize}
	n := int(lim.capacity * lim.quota.Seconds())
	ideal := time.Duration(float64(n) / lim.capacity * float64(time.Second))
	sc := bounded(name, n, 3*ideal+2*time.Minute)

	g := Goal{AllSucceed: true, NoTimeouts: true, MinRunUse: crossedMinRunUse, MaxWaste: crossedMaxWasteSilent}
	if lim.even {
		g.MinSteadyUse = crossedMinSteadyUse
	}
	tail := max(lat.median, lat.p99)
	switch {
	case lim.name == "queue":
		g.MaxWaste, g.MinRunUse, g.MinSteadyUse = 0, 0, 0
		g.MaxDrainFactor = (ideal.Seconds()/crossedMinRunUse + tail.Seconds()) / ideal.Seconds()
		g.MaxAnswerP99 = crossedQueueAnswerFactor*tail + crossedQueueAnswerSlack
	case told:
		g.MaxWaste = crossedMaxWasteTold
	case w > 1:
		g.MaxWaste = crossedMaxWasteWorkers
	case lim.name == "drift":
		g.MaxWaste = crossedMaxWasteDrift
	}
	what := "nothing advertised"
	if told {
		what = "advertised in " + h.String() + " headers"
	}
	latency := spaced(lat.median)
	if lat.p99 > 0 {
		latency = fmt.Sprintf("lognormal, median %s, p99 %s", spaced(lat.median), spaced(lat.p99))
	}
	title := fmt.Sprintf("%s at %g/s, %s; answers %s (refusals at once); %s elements; %s",
		lim.model.Description, lim.capacity, what, latency, thousands(int64(n)), workersTitle(w))
	return Case{Name: name, Family: FamilyCrossed, Title: title, Scenario: sc, Config: cfg, Goal: g,
		Groups: []int{w}, Algorithms: CrossedAlgorithms}
}

// CrossedSuite is the suite of the crossed grid: CrossedCases with the
// algorithms they name.
func CrossedSuite() Suite {
	var algs []Algorithm
	for _, a := range Algorithms() {
		if slices.Contains(CrossedAlgorithms, a.Name) {
			algs = append(algs, a)
		}
	}
	return Suite{Cases: CrossedCases(), Algorithms: algs, DropSeries: true}
}
