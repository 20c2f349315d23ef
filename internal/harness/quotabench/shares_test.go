package quotabench

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/beamthrottle/beamthrottle/testserver"
)

func TestTierShares(t *testing.T) {
	st := stats(
		sec(100, map[string][2]int64{"high": {1, 0}}),                // the warm-ups
		sec(101, map[string][2]int64{"low": {1, 0}}),                 //
		sec(102, map[string][2]int64{"high": {4, 0}, "low": {5, 1}}), // low reserved first
		sec(103, map[string][2]int64{"high": {8, 1}, "low": {1, 0}}),
		sec(104, map[string][2]int64{"high": {9, 0}, "low": {1, 0}, "competitor": {3, 0}}),
		sec(105, map[string][2]int64{"high": {2, 0}}), // the high backlog
	)
	// The seconds out of order, as the server need not keep them, and one
	// without a call (106) between two.
	st.Series = append([]testserver.Second{sec(107, map[string][2]int64{"low": {1, 0}})}, st.Series...)
	st.Clients["low"] = testserver.Counts{Accepted: 8, Rejected: 1}
	high := []int64{1, 0, 4, 8, 9, 2, 0, 0}
	low := []int64{0, 1, 5, 1, 1, 0, 0, 1}
	tests := []struct {
		name     string
		offered  []int
		from, to int64
		want     []TierShare
	}{{
		name:    "steady window inside the run",
		offered: []int{28, 28},
		from:    103, to: 104,
		want: []TierShare{
			{Tier: "high", Offered: 28, Accepted: 24, Rejected: 1, SteadyAccepted: 17, Series: high},
			{Tier: "low", Offered: 28, Accepted: 8, Rejected: 1, SteadyAccepted: 2, Series: low},
		},
	}, {
		name:    "no steady window",
		offered: []int{28, 28},
		want: []TierShare{
			{Tier: "high", Offered: 28, Accepted: 24, Rejected: 1, Series: high},
			{Tier: "low", Offered: 28, Accepted: 8, Rejected: 1, Series: low},
		},
	}, {
		name:    "source stopped before the low process was counted",
		offered: []int{1},
		from:    100, to: 105,
		want: []TierShare{
			{Tier: "high", Offered: 1, Accepted: 24, Rejected: 1, SteadyAccepted: 24, Series: high},
			{Tier: "low", Accepted: 8, Rejected: 1, SteadyAccepted: 8, Series: low},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tierShares(st, []string{"high", "low"}, tt.offered, seconds{tt.from, tt.to})
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("tierShares (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTierShareRatios(t *testing.T) {
	tests := []struct {
		s            TierShare
		share, waste float64
	}{
		{TierShare{Offered: 361, Accepted: 325}, 325.0 / 361, 0},
		{TierShare{Offered: 10, Accepted: 9, Rejected: 1}, 0.9, 0.1},
		{TierShare{}, 0, 0},
		{TierShare{Rejected: 3}, 0, 1},
	}
	for _, tt := range tests {
		if got := tt.s.Share(); got != tt.share {
			t.Errorf("%+v.Share() = %v, want %v", tt.s, got, tt.share)
		}
		if got := tt.s.Waste(); got != tt.waste {
			t.Errorf("%+v.Waste() = %v, want %v", tt.s, got, tt.waste)
		}
	}
}

func TestHighVerdict(t *testing.T) {
	// steady is a run whose steady window is 40 s long, in which the high
	// process had accepted high and the low one 30, each offered 9/s.
	steady := func(name string, high int64) Result {
		return Result{Scenario: named(name), Rate: 9, SteadyFrom: 1001, SteadyTo: 1040,
			Tiers: []TierShare{{Tier: "high", Offered: 361, Accepted: 361, SteadyAccepted: high}, {Tier: "low", Offered: 361, SteadyAccepted: 30}}}
	}
	tests := []struct {
		name string
		r    Result
		want Verdict
	}{
		{"met", steady("priority-shares-95", 342), Verdict{true, "95 % (≥ 90 %)"}},
		{"at the target", steady("priority-shares", 324), Verdict{true, "90 % (≥ 90 %)"}},
		// The whole run's 100 % does not count: the backlog was called
		// after the source stopped.
		{"missed", steady("priority-shares", 288), Verdict{false, "80 % (≥ 90 %)"}},
		{"no steady window", Result{Scenario: named("priority-shares"), Rate: 9,
			Tiers: []TierShare{{Tier: "high", Offered: 361, Accepted: 361, SteadyAccepted: 342}}}, Verdict{false, "0 % (≥ 90 %)"}},
		{"no high process", Result{Scenario: named("priority-shares"), Rate: 9, SteadyFrom: 1001, SteadyTo: 1040}, Verdict{false, "0 % (≥ 90 %)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.r.HighVerdict(); got != tt.want {
				t.Errorf("HighVerdict() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestSteadyShare(t *testing.T) {
	tests := []struct {
		r          Result
		s          TierShare
		rate, part float64
	}{
		{Result{Rate: 9, SteadyFrom: 1001, SteadyTo: 1040}, TierShare{SteadyAccepted: 324}, 8.1, 0.9},
		{Result{Rate: 9, SteadyFrom: 1001, SteadyTo: 1001}, TierShare{SteadyAccepted: 9}, 9, 1},
		{Result{Rate: 9}, TierShare{SteadyAccepted: 9}, 0, 0},
		{Result{SteadyFrom: 1001, SteadyTo: 1040}, TierShare{SteadyAccepted: 9}, 0.225, 0},
	}
	for _, tt := range tests {
		if got := tt.r.SteadyRate(tt.s); got != tt.rate {
			t.Errorf("SteadyRate(%+v) of %+v = %v, want %v", tt.s, tt.r, got, tt.rate)
		}
		if got := tt.r.SteadyShare(tt.s); got != tt.part {
			t.Errorf("SteadyShare(%+v) of %+v = %v, want %v", tt.s, tt.r, got, tt.part)
		}
	}
}

func TestSteadySeconds(t *testing.T) {
	for _, tt := range []struct {
		from, to int64
		want     int
	}{{102, 141, 40}, {102, 102, 1}, {102, 101, 0}, {0, 0, 0}} {
		if got := (Result{SteadyFrom: tt.from, SteadyTo: tt.to}).SteadySeconds(); got != tt.want {
			t.Errorf("SteadySeconds of [%d, %d] = %d, want %d", tt.from, tt.to, got, tt.want)
		}
	}
}
