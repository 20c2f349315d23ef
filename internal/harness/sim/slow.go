package sim

import (
	"fmt"
	"time"

	"github.com/beamthrottle/beamthrottle/internal/defaults"
)

// Targets of the slow APIs: 95 % of the quota's (or the queue's) rate, plus
// one latency for the last answers (the p99 for a lognormal one), as the
// real-time runs' targets are.
const (
	slowMaxWaste = 0.02
	// (2,000 ÷ 20/s ÷ 0.95 + 2 s) ÷ 100 s.
	slowDrainFactor = 1.073
	// (360 s ÷ 0.95 + 20 s) ÷ 360 s, rounded down.
	slowLognormalDrainFactor = 1.10
	// (12,000 ÷ 50/s ÷ 0.95 + 2 s) ÷ 240 s, rounded down.
	queueDrainFactor = 1.06
	// A short queue: answers within twice the unloaded latency.
	queueMaxAnswerFactor = 2
	// A fixed bound on calls under way far above the queue's rate ×
	// latency keeps most calls waiting past the timeout.
	contrastMinTimedOut = 0.5
	// An outage of a slow API: the classic targets, less the utilisation a
	// latency of dark spell costs at each end of the outage.
	slowOutageMaxWaste       = 0.03
	slowOutageMinUtilisation = 0.9
)

// Settings of SlowCases: the real-time runs' (docs/live).
const (
	slowCapacity       = 20         // requests/s: the GCRA limiter of the 2 s API
	lognormalCapacity  = 500.0 / 60 // requests/s: 500 a minute
	queueCapacity      = 50         // requests/s: the queue's rate
	slowElements       = 2000
	lognormalElements  = 3000
	queueElements      = 12000
	queueCallTimeout   = 5 * time.Second
	queueFixedInFlight = 256
	serverRefill       = 100 * time.Millisecond // the quota server's token bucket refills in steps of this
)

// SlowGroups are the numbers of groups of SlowCases: one, and a worker's
// groups sharing its ceiling.
var SlowGroups = []int{1, 8}

// SlowAlgorithms are the algorithms of SlowCases: the pacer, whose calls
// the transform's paced mode sizes, and the oracle as the limit.
var SlowAlgorithms = []string{Pacer, Oracle}

// SlowCases returns bounded inputs against APIs that answer in seconds,
// with the calls under way sized to the pace (Config.SizeCalls, the
// transform's default) and the transform's call timeout unless said
// otherwise:
//   - 2 s calls against a strict GCRA limiter (no burst) at 20/s: 2,000
//     elements; the same against a token bucket of a second's burst
//     refilled in 100 ms steps (the quota server's default limiter); and
//     against the GCRA limiter answering each refusal at once
//     (Config.RefuseAtOnce), as a gateway in front of a slow backend does.
//   - Lognormal latency, median 3 s and p99 20 s, against a strict GCRA
//     limiter at 500 a minute: 3,000 elements.
//   - A server that queues at 50/s instead of refusing (Queue), 2 s calls
//     and a call timeout of 5 s: 12,000 elements; and the same with 256
//     calls under way per group, fixed, as the contrast, run with the pacer
//     only.
//   - The classic outage scenario (offered twice the capacity, every
//     request refused for a minute) against the 2 s API: a slow API's
//     outage must start a dark spell, not a slow decline of the rate.
func SlowCases() []Case {
	var cs []Case
	add := func(name, title string, cfg Config, n int, d time.Duration, g Goal, algs []string) {
		sc := bounded(name, n, d)
		cs = append(cs, Case{Name: name, Family: FamilySlow, Title: title, Scenario: sc, Config: cfg, Goal: g,
			Groups: SlowGroups, Algorithms: algs})
	}
	sized := func(b BackendModel, capacity float64, latency time.Duration) Config {
		return Config{Backend: b, Capacity: capacity, Latency: latency, StartJitter: DefaultConfig(1).StartJitter,
			SizeCalls: true, CallTimeout: defaults.CallTimeout}
	}

	twoSec := Goal{AllSucceed: true, MaxWaste: slowMaxWaste, MaxDrainFactor: slowDrainFactor, NoTimeouts: true}
	gcra := sized(GCRA(1, true), slowCapacity, 2*time.Second)
	add("slow/2s", fmt.Sprintf("%s; %d elements at the start", gcra.Backend.Description, slowElements),
		gcra, slowElements, 4*time.Minute,
		twoSec, SlowAlgorithms)

	bucket := sized(SteppedTokenBucket(time.Second, serverRefill, true), slowCapacity, 2*time.Second)
	add("slow/2s-bucket", fmt.Sprintf("%s (the quota server's default limiter); %d elements at the start",
		bucket.Backend.Description, slowElements), bucket, slowElements, 4*time.Minute,
		twoSec, SlowAlgorithms)

	atOnce := gcra
	atOnce.RefuseAtOnce = true
	add("slow/2s-at-once", fmt.Sprintf("%s, each refusal answered at once as a gateway answers it; %d elements at the start",
		gcra.Backend.Description, slowElements), atOnce, slowElements, 4*time.Minute,
		twoSec, SlowAlgorithms)

	logn := sized(GCRA(1, true), lognormalCapacity, 3*time.Second)
	logn.LatencyP99 = 20 * time.Second
	add("slow/lognormal", fmt.Sprintf("%s, 500 a minute; lognormal latency, median 3 s, p99 20 s; %d elements at the start",
		logn.Backend.Description, lognormalElements), logn, lognormalElements, 10*time.Minute,
		Goal{AllSucceed: true, MaxWaste: slowMaxWaste, MaxDrainFactor: slowLognormalDrainFactor, NoTimeouts: true}, SlowAlgorithms)

	queue := sized(Queue(), queueCapacity, 2*time.Second)
	queue.CallTimeout = queueCallTimeout
	title := fmt.Sprintf("%s; %d elements at the start", queue.Backend.Description, queueElements)
	add("slow/queue-50", title, queue, queueElements, 6*time.Minute,
		Goal{AllSucceed: true, NoTimeouts: true, MaxDrainFactor: queueDrainFactor, MaxAnswerP99: queueMaxAnswerFactor * queue.Latency},
		SlowAlgorithms)

	fixed := queue
	fixed.SizeCalls, fixed.CallsInFlight = false, queueFixedInFlight
	add("slow/queue-50-fixed256", fmt.Sprintf("%s; %d calls under way per group, fixed, as the contrast",
		title, queueFixedInFlight), fixed, queueElements, 6*time.Minute, Goal{MinTimedOut: contrastMinTimedOut}, []string{Pacer})

	for _, sc := range Scenarios() {
		if sc.Name != "outage" {
			continue
		}
		out := gcra
		out.MaxWait = MatrixMaxWait
		cs = append(cs, Case{Name: "slow/outage", Family: FamilySlow, Title: fmt.Sprintf("%s; %s", gcra.Backend.Description, sc.Title),
			Scenario: sc, Config: out, Goal: Goal{MaxWaste: slowOutageMaxWaste, MinUtilisation: slowOutageMinUtilisation},
			Groups: SlowGroups, Algorithms: SlowAlgorithms})
	}
	return cs
}
