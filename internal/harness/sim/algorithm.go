package sim

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/beamthrottle/beamthrottle/internal/firing"
	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// Env is what an Algorithm gets to build the Policy of one group.
type Env struct {
	// Group is the group's number in [0, Groups).
	Group, Groups int
	// Worker is the number of the group's worker in [0, Workers).
	Worker, Workers int
	// Rand returns uniform values in [0, 1), seeded per run and group.
	Rand func() float64
	// Start is the wall-clock time of the run's start, as the policy sees
	// it: simulated time d is Start.Add(d).
	Start time.Time
	// BatchInterval, CallsInFlight and Tick are the run's Config values
	// (with defaults applied), as the transform would pass its options.
	BatchInterval time.Duration
	CallsInFlight int
	Tick          time.Duration
	// NextAvailable is the backend's Backend.NextAvailable, for oracles
	// only: no real client knows it.
	NextAvailable func(at time.Duration) time.Duration
}

// Algorithm is a throttling algorithm under test.
type Algorithm struct {
	// Name identifies the algorithm in the report.
	Name string
	// Description says what it is, in one line.
	Description string
	// New returns the Policy of one group, or with Shared of one worker.
	// With Config.Persist it is also called after every firing, to restore
	// the saved state into (not with Shared: a worker's policy lives in
	// its memory).
	New func(Env) adaptive.Policy
	// Shared makes one Policy per worker (Config.Workers), which every
	// group of the worker uses, as the transform's worker scope does. New
	// is then called once per worker, with Env.Group the worker's first
	// group.
	Shared bool
	// Paced says the Policy paces, as the transform's paced mode does:
	// the core is configured for it (firing.Settings.Paced), and a group
	// fires at once when an element arrives while it is idle.
	Paced bool
}

// The standard policies.
var (
	_ adaptive.Policy = (*adaptive.SRE)(nil)
	_ adaptive.Policy = (*original)(nil)
	_ adaptive.Policy = none{}
	_ adaptive.Policy = oracle{}
	_ adaptive.Policy = (*adaptive.Pacer)(nil)
)

// Names of the standard algorithms.
const (
	Original   = "original"
	SREFixedK2 = "sre-fixed-k2"
	SREK2      = "sre-k2"
	SREK11     = "sre-k1.1"
	Pacer      = "pacer"
	// PacerPerGroup is the Pacer with one per group (the transform's group
	// scope).
	PacerPerGroup = "pacer-per-group"
	None          = "none"
	Oracle        = "oracle"
)

// Algorithms returns the standard algorithms: the pacer as the transform's
// paced mode builds it, the per-element throttles (SRE, the original
// tool's) behind a Policy that never postpones (see AdaptiveAlgorithm), no
// throttle and the oracle.
func Algorithms() []Algorithm {
	return []Algorithm{
		PacerAlgorithm(),
		PacerPerGroupAlgorithm(),
		OriginalAlgorithm(),
		AdaptiveAlgorithm(SREFixedK2, "SRE, K=2, all requests counted, fixed 1-minute window (the transform's default)",
			adaptive.SREConfig{K: 2}),
		AdaptiveAlgorithm(SREK2, "SRE, K=2, sliding 2-minute window in 1 s buckets",
			adaptive.SREConfig{K: 2, Sliding: true}),
		AdaptiveAlgorithm(SREK11, "SRE, K=1.1, sliding 2-minute window in 1 s buckets",
			adaptive.SREConfig{K: 1.1, Sliding: true}),
		NoneAlgorithm(),
		OracleAlgorithm(),
	}
}

// PacerAlgorithm is adaptive.Pacer as the transform's paced mode builds it
// (transforms/throttle, worker scope): one Pacer per worker, shared by the
// worker's groups (adaptive.NewShared, PacerConfig{Groups: 1}). It spaces the
// worker's sends at its rate and postpones the rest; it never rejects.
func PacerAlgorithm() Algorithm {
	return Algorithm{
		Name:        Pacer,
		Description: "adaptive.Pacer as the transform's paced mode builds it: one per worker, shared by its groups; postpones, never rejects",
		Shared:      true,
		Paced:       true,
		New: func(Env) adaptive.Policy {
			return mustPolicy(firing.PolicySettings{Paced: true, Shared: true})
		},
	}
}

// PacerPerGroupAlgorithm is adaptive.Pacer with one per group, as the
// transform's group scope builds it (PacerConfig{Groups: G}): each group
// paces alone, as groups on separate workers do.
func PacerPerGroupAlgorithm() Algorithm {
	return Algorithm{
		Name:        PacerPerGroup,
		Description: "adaptive.Pacer, one per group (the transform's group scope, PacerConfig{Groups: G}), as groups on separate workers pace",
		Paced:       true,
		New: func(e Env) adaptive.Policy {
			return mustPolicy(firing.PolicySettings{Paced: true, Groups: e.Groups})
		},
	}
}

// mustPolicy returns the transform's policy for s (firing.NewPolicy),
// which the standard algorithms' settings make valid.
func mustPolicy(s firing.PolicySettings) adaptive.Policy {
	p, err := firing.NewPolicy(s)
	if err != nil {
		panic(fmt.Sprintf("sim: %v", err))
	}
	return p
}

// AdaptiveAlgorithm returns an Algorithm running the SRE throttle with cfg
// (an adaptive.SRE policy) in every group, in the
// per-element model: it sends or rejects, never postpones. It panics if
// cfg is invalid.
func AdaptiveAlgorithm(name, description string, cfg adaptive.SREConfig) Algorithm {
	if _, err := firing.NewPolicy(firing.PolicySettings{SRE: cfg}); err != nil {
		panic(fmt.Sprintf("sim.AdaptiveAlgorithm: %v", err))
	}
	return Algorithm{
		Name:        name,
		Description: description,
		New: func(e Env) adaptive.Policy {
			return mustPolicy(firing.PolicySettings{SRE: cfg, Rand: e.Rand})
		},
	}
}

// verdict is Send if allow, else Reject.
func verdict(allow bool, p float64) adaptive.Decision {
	if allow {
		return adaptive.Decision{Verdict: adaptive.Send, Probability: p}
	}
	return adaptive.Decision{Verdict: adaptive.Reject, Probability: p}
}

// OriginalAlgorithm is the original tool's throttle, in the per-element
// model: p = max(0, (sent − 2·accepts) / (sent + 1)) where only requests
// actually sent are counted, so local rejections do not raise p, and both
// counters are zeroed every minute from the first request.
func OriginalAlgorithm() Algorithm {
	return Algorithm{
		Name:        Original,
		Description: "the original tool: SRE formula with K=2 over requests sent only, counters reset every minute",
		New: func(e Env) adaptive.Policy {
			return &original{k: 2, window: int64(time.Minute), rnd: e.Rand}
		},
	}
}

// original is the Policy of OriginalAlgorithm.
type original struct {
	k              float64
	window         int64
	rnd            func() float64
	started        bool
	start          int64
	sent, accepted int64
}

func (o *original) advance(now time.Time) {
	n := now.UnixNano()
	if !o.started {
		o.started, o.start = true, n
	}
	if n-o.start >= o.window {
		o.start += (n - o.start) / o.window * o.window
		o.sent, o.accepted = 0, 0
	}
}

func (o *original) Decide(now time.Time, _, _ int) adaptive.Decision {
	o.advance(now)
	p := max(0, (float64(o.sent)-o.k*float64(o.accepted))/(float64(o.sent)+1))
	if o.rnd() < p {
		return verdict(false, p)
	}
	o.sent++
	return verdict(true, p)
}

// Budget sets no bound, as the SRE throttle's.
func (o *original) Budget(time.Time, time.Time) int { return -1 }

func (o *original) Record(now time.Time, a adaptive.Answer) {
	o.advance(now)
	if a.Outcome != adaptive.Throttled {
		o.accepted++
	}
}

// originalStateLen is the length of original's state: a version byte, then
// started, start, sent and accepted.
const originalStateLen = 1 + 4*8

func (o *original) MarshalBinary() ([]byte, error) {
	b := make([]byte, 1, originalStateLen)
	b[0] = 1
	var started uint64
	if o.started {
		started = 1
	}
	for _, v := range []uint64{started, uint64(o.start), uint64(o.sent), uint64(o.accepted)} {
		b = binary.BigEndian.AppendUint64(b, v)
	}
	return b, nil
}

func (o *original) UnmarshalBinary(b []byte) error {
	if len(b) != originalStateLen || b[0] != 1 {
		return errors.New("sim: original: unknown state")
	}
	v := func(i int) int64 { return int64(binary.BigEndian.Uint64(b[1+8*i:])) }
	o.started, o.start, o.sent, o.accepted = v(0) == 1, v(1), v(2), v(3)
	return nil
}

// NoneAlgorithm sends every element, whatever the backend says.
func NoneAlgorithm() Algorithm {
	return Algorithm{
		Name:        None,
		Description: "no throttle: every element is sent (and a throttled one again at its next eligible firing)",
		New:         func(Env) adaptive.Policy { return none{} },
	}
}

// none is the Policy of NoneAlgorithm.
type none struct{}

func (none) Decide(time.Time, int, int) adaptive.Decision {
	return adaptive.Decision{Verdict: adaptive.Send}
}
func (none) Record(time.Time, adaptive.Answer) {}
func (none) Budget(time.Time, time.Time) int   { return -1 }
func (none) MarshalBinary() ([]byte, error)    { return nil, nil }
func (none) UnmarshalBinary([]byte) error      { return nil }

// OracleAlgorithm knows the backend: it sends exactly when the backend
// would accept, and otherwise postpones to the time it will
// (Env.NextAvailable). It wastes nothing and is the limit of what the
// transform's loop can get out of a backend.
func OracleAlgorithm() Algorithm {
	return Algorithm{
		Name:        Oracle,
		Description: "knows the backend: sends when it would accept, else postpones until it will",
		New:         func(e Env) adaptive.Policy { return oracle{e.Start, e.NextAvailable} },
	}
}

// oracle is the Policy of OracleAlgorithm.
type oracle struct {
	start time.Time
	next  func(time.Duration) time.Duration
}

func (o oracle) Decide(now time.Time, _, _ int) adaptive.Decision {
	at := now.Sub(o.start)
	next := o.next(at)
	if next <= at {
		return adaptive.Decision{Verdict: adaptive.Send}
	}
	if next == Never {
		return adaptive.Decision{Verdict: adaptive.Postpone, RetryAt: o.start.Add(24 * 365 * time.Hour), Probability: 1}
	}
	return adaptive.Decision{Verdict: adaptive.Postpone, RetryAt: o.start.Add(next), Probability: 1}
}

func (oracle) Record(time.Time, adaptive.Answer) {}
func (oracle) Budget(time.Time, time.Time) int   { return -1 }
func (oracle) MarshalBinary() ([]byte, error)    { return nil, nil }
func (oracle) UnmarshalBinary([]byte) error      { return nil }
