package firing

import (
	"time"

	"github.com/beamthrottle/beamthrottle/internal/defaults"
)

// Settings are a throttle's settings, from which NewConfig makes the
// firings' Config: the one place where the transform's DoFn and the
// simulator make the core's configuration, so that the simulator runs the
// core as the transform configures it. Where the two drivers differ, the
// difference is a field here that each sets, not a second way to build a
// Config.
type Settings struct {
	// BatchInterval is Config.BatchInterval.
	BatchInterval time.Duration
	// Wait is how long a firing goes on deciding (Config.Wait): zero means
	// BatchInterval, as the transform has it; negative that a firing ends
	// at its first postponement (the simulator's per-element model).
	Wait time.Duration
	// BatchSize is Config.BatchSize.
	BatchSize int
	// CallsInFlight fixes the calls under way of a group when positive.
	// Zero sizes them to the pace (Config.SizeCalls), up to MaxCalls, for
	// a policy that paces (Paced); one at a time for one that does not
	// (the SRE rule has no pace to size them by).
	CallsInFlight int
	// MaxCalls bounds the calls under way when they are sized; zero means
	// the transform's, defaults.MaxCallsInFlight.
	MaxCalls int
	// Paced says the policy paces (the default mode's Pacer).
	Paced bool
	// ItemsPerCall, BytesPerCall and CostPerCall are Config's.
	ItemsPerCall, BytesPerCall int
	CostPerCall                bool
	// MaxWait, MaxStall, Strategy, MaxAttempts and MaxAge are Config's.
	MaxWait, MaxStall time.Duration
	Strategy          Strategy
	MaxAttempts       int
	MaxAge            time.Duration
	// FinalRejects is Config.FinalRejects: the simulator's model of
	// per-element throttles.
	FinalRejects bool
	// Priorities says a firing takes the highest tier first (the
	// transform's WithPriority): the first firing of an idle group waits a
	// batch interval (no Config.Prompt), so that it chooses among the
	// tiers that arrived meanwhile.
	Priorities bool
	// MinWait and Tick are the timer rule (Config.MinWait, Config.Tick).
	// The transform leaves both zero: its waits are on the wall clock and
	// its timers Prism's or the runner's, whose own granularity bounds
	// them. The simulator's event loop sets both, so that a policy that
	// postpones to its own time does not fire again at the same instant.
	MinWait, Tick time.Duration
}

// NewConfig returns the firings' configuration for s. Calls always outlive
// the firing that sent them (Config.Detach).
func NewConfig(s Settings) Config {
	wait := s.Wait
	switch {
	case wait == 0:
		wait = s.BatchInterval
	case wait < 0:
		wait = 0
	}
	calls, size := s.CallsInFlight, false
	switch {
	case calls > 0:
	case s.Paced:
		calls, size = s.MaxCalls, true
		if calls <= 0 {
			calls = defaults.MaxCallsInFlight
		}
	default:
		calls = 1
	}
	c := Config{
		BatchInterval: s.BatchInterval, Wait: wait, MinWait: s.MinWait, Tick: s.Tick, BatchSize: s.BatchSize,
		CallsInFlight: calls, SizeCalls: size, Detach: true,
		ItemsPerCall: s.ItemsPerCall, BytesPerCall: s.BytesPerCall, CostPerCall: s.CostPerCall,
		MaxWait: s.MaxWait, MaxStall: s.MaxStall, Strategy: s.Strategy, FinalRejects: s.FinalRejects,
		MaxAttempts: s.MaxAttempts, MaxAge: s.MaxAge,
	}
	c.Prompt = s.Paced && !s.Priorities && !c.batching()
	return c
}
