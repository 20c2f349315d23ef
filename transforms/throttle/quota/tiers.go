package quota

import (
	"fmt"
	"math"
	"time"
)

// The priority tiers of a reservation (see [Shares]), highest last: those
// of transforms/throttle's WithPriority.
const (
	TierLow    = -1
	TierNormal = 0
	TierHigh   = 1
)

// TierName returns the name of tier t, as it appears in the keys of a
// quota kept by a service: "low", "normal" or "high".
func TierName(t int) string {
	switch {
	case t < TierNormal:
		return "low"
	case t > TierNormal:
		return "high"
	}
	return "normal"
}

// ActiveFor is how long a tier with a share counts as sending after its
// last reservation (granted or not). A caller that has elements of the
// tier waiting asks again well within it: a firing of transforms/throttle
// reserves at least once per batch interval while it has calls to make.
const ActiveFor = 5 * time.Second

// Shares keeps parts of a quota's rate for its callers' higher priority
// tiers, as LiteLLM's priority reservations do: while a tier with a share
// is sending (it reserved within ActiveFor), the tiers below it together
// reserve at most 1 − share of the rate; while it is not, they may reserve
// the whole rate. A share is thus kept only while its tier uses it, and a
// backfill sharing the key with a live feed takes what the live feed
// leaves. The zero value keeps nothing: every tier reserves alike. Every
// client of a key must use the same Shares, as the same rate.
//
// A lower tier's limit is a GCRA of its own at 1 − share of the rate (one
// per tier with a share), which its reservations count against besides
// the quota's: its calls still take the quota's evenly spaced slots. Units
// given back with Release return to the quota, not to those limits.
type Shares struct {
	// High is kept for the high tier: the share of the rate the normal and
	// low tiers cannot reserve while the high tier sends. In [0, 1).
	High float64
	// Normal is kept for the normal tier and above: the share the low tier
	// cannot reserve while the normal tier sends. In [0, 1).
	Normal float64
}

// Validate reports whether s is usable: each share at least 0 and less
// than 1.
func (s Shares) Validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"High", s.High}, {"Normal", s.Normal}} {
		if !(f.v >= 0 && f.v < 1) {
			return fmt.Errorf("quota: Shares: %s must be at least 0 and less than 1, got %v", f.name, f.v)
		}
	}
	return nil
}

// Zero reports whether s keeps nothing: tiers do not matter.
func (s Shares) Zero() bool { return s.High == 0 && s.Normal == 0 }

// share returns the share kept for tier t.
func (s Shares) share(t int) float64 {
	switch t {
	case TierHigh:
		return s.High
	case TierNormal:
		return s.Normal
	}
	return 0
}

// Marks reports whether a reservation of tier t marks the tier as sending:
// whether t has a share.
func (s Shares) Marks(t int) bool { return s.share(t) > 0 }

// Cap is a limit a lower tier's reservations are held to while tier Above
// sends: a GCRA of the given Spacing, 1 − share of the quota's rate.
type Cap struct {
	Above   int
	Spacing time.Duration
}

// Caps returns the limits of tier t's reservations, for a quota whose
// slots are spacing apart: one for each higher tier with a share.
func (s Shares) Caps(t int, spacing time.Duration) []Cap {
	var cs []Cap
	for _, above := range []int{TierHigh, TierNormal} {
		if above <= t || s.share(above) <= 0 {
			continue
		}
		// Rounded up, less a thousandth of a nanosecond of float error.
		d := math.Ceil(float64(spacing)/(1-s.share(above)) - 1e-3)
		cs = append(cs, Cap{Above: above, Spacing: time.Duration(min(d, math.MaxInt64/4))})
	}
	return cs
}

// capSlots is a cap's part of a reservation, with times as offsets from
// now: how many units its GCRA, whose TAT is ahead of now (negative when
// it has passed), lets start by horizon. Its TAT moves by spacing per unit
// granted, from now at the earliest. The Redis script of package
// redisquota does the same arithmetic.
func capSlots(ahead, spacing, horizon time.Duration) int {
	ahead = max(ahead, 0)
	if ahead > horizon {
		return 0
	}
	return int((horizon-ahead)/spacing + 1)
}
