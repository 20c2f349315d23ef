package quotabench

import (
	"fmt"
	"slices"
	"time"

	"github.com/beamthrottle/beamthrottle/testserver"
)

// MinHighShare is the target of the priority scenarios with a share: the
// high process has at least this part of its demand accepted while both
// processes send (Result.SteadyShare).
const MinHighShare = 0.9

// steadyAfter is how long after a priority scenario's first timed element
// its steady window starts, so that the window leaves out the start-up:
// the processes' first firings, and the low process's reservations at the
// whole rate before the high tier first marks itself as sending. The
// per-second counts of the runs show it over within a few seconds.
const steadyAfter = 5 * time.Second

// TierShare is what one process of a priority scenario offered and what
// the quota server accepted of it. The process is named after its tier.
type TierShare struct {
	// Tier is the priority of all the process's elements, and its name
	// (testserver.ClientHeader).
	Tier string
	// Offered is its demand over the whole run: the elements its source
	// offered, the warm-up included.
	Offered int
	// Accepted and Rejected count its calls the server answered 200 and
	// 429 over the whole run.
	Accepted, Rejected int64
	// SteadyAccepted counts its calls accepted in the steady window
	// (Result.SteadyFrom to Result.SteadyTo).
	SteadyAccepted int64
	// Series holds its calls accepted in each second, from the first
	// second the server counted a call of any client to the last.
	Series []int64 `json:",omitempty"`
}

// Share is Accepted ÷ Offered: the part of its demand over the whole run
// the process had accepted; 0 if it offered nothing.
func (s TierShare) Share() float64 { return ratio(float64(s.Accepted), float64(s.Offered)) }

// Waste is Rejected ÷ (Accepted + Rejected), 0 without calls.
func (s TierShare) Waste() float64 {
	return ratio(float64(s.Rejected), float64(s.Accepted+s.Rejected))
}

// seconds is a run of whole seconds, in Unix seconds, both ends
// included; empty when To < From.
type seconds struct{ From, To int64 }

// tierShares counts, for each process of a priority scenario (named after
// the tiers, each offering offered[i] elements), its calls in the quota
// server's stats st: over the whole run, per second, and accepted in the
// seconds of steady.
func tierShares(st testserver.Stats, tiers []string, offered []int, steady seconds) []TierShare {
	secs := slices.Clone(st.Series)
	slices.SortFunc(secs, func(a, b testserver.Second) int { return int(a.T - b.T) })
	out := make([]TierShare, len(tiers))
	for i, t := range tiers {
		n := st.Clients[t]
		out[i] = TierShare{Tier: t, Accepted: n.Accepted, Rejected: n.Rejected}
		if i < len(offered) {
			out[i].Offered = offered[i]
		}
		if len(secs) == 0 {
			continue
		}
		t0 := secs[0].T
		out[i].Series = make([]int64, secs[len(secs)-1].T-t0+1)
		for _, sec := range secs {
			a := sec.Clients[t].Accepted
			out[i].Series[sec.T-t0] += a
			if sec.T >= steady.From && sec.T <= steady.To {
				out[i].SteadyAccepted += a
			}
		}
	}
	return out
}

// SteadySeconds is the length of a priority scenario's steady window, 0
// if there is none.
func (r Result) SteadySeconds() int {
	if r.SteadyTo < r.SteadyFrom || r.SteadyFrom == 0 {
		return 0
	}
	return int(r.SteadyTo - r.SteadyFrom + 1)
}

// SteadyRate is what the process of a priority scenario had accepted per
// second in the steady window; 0 without one.
func (r Result) SteadyRate(s TierShare) float64 {
	return ratio(float64(s.SteadyAccepted), float64(r.SteadySeconds()))
}

// SteadyShare is the part of its demand the process of a priority
// scenario had accepted in the steady window: SteadyRate ÷ what its source
// offered per second (Result.Rate). Unlike TierShare.Share, it leaves out
// the start, and the end, when a process's backlog (up to --max_wait of
// elements) is still called after its source stopped.
func (r Result) SteadyShare(s TierShare) float64 {
	return ratio(float64(s.SteadyAccepted), r.Rate*float64(r.SteadySeconds()))
}

// tier returns the share of the process of tier t, and whether r has one.
func (r Result) tier(t string) (TierShare, bool) {
	for _, s := range r.Tiers {
		if s.Tier == t {
			return s, true
		}
	}
	return TierShare{}, false
}

// HighVerdict checks the part of its demand the high process of a
// priority scenario had accepted while both processes sent
// (SteadyShare) against the scenario's MinHigh.
func (r Result) HighVerdict() Verdict {
	s, ok := r.tier("high")
	share := r.SteadyShare(s)
	return Verdict{
		OK:   ok && share > 0 && share >= r.Scenario.MinHigh,
		Text: fmt.Sprintf("%s (≥ %s)", pct(share), pct(r.Scenario.MinHigh)),
	}
}
