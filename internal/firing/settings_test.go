package firing_test

import (
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/internal/defaults"
	"github.com/beamthrottle/beamthrottle/internal/firing"
)

// TestNewConfig: the derived fields of the one configuration both drivers
// use: calls under way fixed, sized for a pacer (up to MaxCalls, else the
// transform's most) or one at a time for the SRE rule; a firing's wait a
// batch interval by default, none when negative; calls always detached.
func TestNewConfig(t *testing.T) {
	const bi = 2 * time.Second
	tests := []struct {
		name      string
		s         firing.Settings
		calls     int
		size      bool
		wait      time.Duration
		minWait   time.Duration
		finalRejs bool
	}{
		{"transform, paced", firing.Settings{BatchInterval: bi, Paced: true}, defaults.MaxCallsInFlight, true, bi, 0, false},
		{"transform, fixed calls", firing.Settings{BatchInterval: bi, Paced: true, CallsInFlight: 8}, 8, false, bi, 0, false},
		{"transform, SRE", firing.Settings{BatchInterval: bi}, 1, false, bi, 0, false},
		{"simulator, sized up to 80", firing.Settings{BatchInterval: bi, Paced: true, MaxCalls: 80, Wait: time.Second,
			MinWait: time.Millisecond, FinalRejects: true}, 80, true, time.Second, time.Millisecond, true},
		{"simulator, no wait", firing.Settings{BatchInterval: bi, CallsInFlight: 1, Wait: -1}, 1, false, 0, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := firing.NewConfig(tc.s)
			if c.CallsInFlight != tc.calls || c.SizeCalls != tc.size || c.Wait != tc.wait || c.MinWait != tc.minWait ||
				c.FinalRejects != tc.finalRejs || !c.Detach || c.BatchInterval != bi {
				t.Errorf("got %+v; want CallsInFlight %d, SizeCalls %v, Wait %v, MinWait %v, FinalRejects %v, Detach, BatchInterval %v",
					c, tc.calls, tc.size, tc.wait, tc.minWait, tc.finalRejs, bi)
			}
		})
	}
}

// TestArmDelay: an idle group's first element fires it at once when the
// policy paces and every call is one element, a batch interval later when
// calls pack several elements (by count or by bytes), with priorities, or
// under the SRE rule.
func TestArmDelay(t *testing.T) {
	const bi = 2 * time.Second
	tests := []struct {
		name string
		s    firing.Settings
		want time.Duration
	}{
		{"paced, one element a call", firing.Settings{Paced: true}, 0},
		{"paced, fixed calls", firing.Settings{Paced: true, CallsInFlight: 4}, 0},
		{"paced, ItemsPerCall 1", firing.Settings{Paced: true, ItemsPerCall: 1}, 0},
		{"paced, ItemsPerCall 2", firing.Settings{Paced: true, ItemsPerCall: 2}, bi},
		{"paced, BytesPerCall", firing.Settings{Paced: true, BytesPerCall: 1 << 20}, bi},
		{"paced, priorities", firing.Settings{Paced: true, Priorities: true}, bi},
		{"SRE", firing.Settings{}, bi},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.s.BatchInterval = bi
			c := firing.NewConfig(tc.s)
			if got := c.ArmDelay(); got != tc.want {
				t.Errorf("ArmDelay() = %v, want %v", got, tc.want)
			}
		})
	}
}
