package firing

import (
	"time"

	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// PolicySettings say which policy a throttle's firings decide with: the
// one place where the transform's DoFn and the simulator turn a mode into
// an adaptive.Policy, so that the simulator measures the policy the
// transform ships.
type PolicySettings struct {
	// Paced picks the default mode's adaptive.Pacer; otherwise the SRE
	// rule (adaptive.SRE).
	Paced bool
	// Groups is how many pacers share the backend, each pacing its share
	// (PacerConfig.Groups); zero means one.
	Groups int
	// Rate is the rate known in advance, per second (a local quota's), at
	// which the pacer starts and which it never exceeds; zero if none is
	// known.
	Rate float64
	// SRE configures the SRE rule; Rand is its random source (nil: one
	// seeded from SRE.Seed) and Postpone how far it postpones an element it
	// would reject, zero to reject it (see adaptive.NewSRE).
	SRE      adaptive.SREConfig
	Rand     func() float64
	Postpone time.Duration
	// Shared makes the policy safe for the groups of a worker to use at
	// once (adaptive.NewShared).
	Shared bool
}

// NewPolicy returns the policy for s, or an error naming what is not
// valid.
func NewPolicy(s PolicySettings) (adaptive.Policy, error) {
	var p adaptive.Policy
	var err error
	if s.Paced {
		p, err = adaptive.NewPacer(adaptive.PacerConfig{Groups: max(s.Groups, 1), Rate: s.Rate})
	} else {
		p, err = adaptive.NewSRE(s.SRE, s.Rand, s.Postpone)
	}
	if err != nil {
		return nil, err
	}
	if s.Shared {
		p = adaptive.NewShared(p)
	}
	return p, nil
}
