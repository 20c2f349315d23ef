package quota_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/beamthrottle/beamthrottle/transforms/throttle/quota"
)

func TestSharesValidate(t *testing.T) {
	tests := []struct {
		s  quota.Shares
		ok bool
	}{
		{quota.Shares{}, true},
		{quota.Shares{High: 0.9}, true},
		{quota.Shares{High: 0.5, Normal: 0.3}, true},
		{quota.Shares{High: 1}, false},
		{quota.Shares{Normal: -0.1}, false},
	}
	for _, tt := range tests {
		if err := tt.s.Validate(); (err == nil) != tt.ok {
			t.Errorf("%+v.Validate() = %v, want ok %v", tt.s, err, tt.ok)
		}
	}
	if _, err := quota.NewSlots(quota.SlotsConfig{Rate: quota.Rate{N: 1, Per: time.Second}, Shares: quota.Shares{High: 2}}); err == nil {
		t.Error("NewSlots with a share of 2: no error")
	}
}

func TestSharesCaps(t *testing.T) {
	s := quota.Shares{High: 0.9, Normal: 0.5}
	sp := 100 * time.Millisecond
	tests := []struct {
		tier int
		want []quota.Cap
	}{
		{quota.TierHigh, nil},
		{quota.TierNormal, []quota.Cap{{Above: quota.TierHigh, Spacing: time.Second}}},
		{quota.TierLow, []quota.Cap{{Above: quota.TierHigh, Spacing: time.Second}, {Above: quota.TierNormal, Spacing: 200 * time.Millisecond}}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, s.Caps(tt.tier, sp)); diff != "" {
			t.Errorf("Caps(%d) (-want +got):\n%s", tt.tier, diff)
		}
	}
}

// TestSlotsShares drives two callers of one key on a virtual clock, each
// reserving every 100 ms what it has not been granted yet (a backlog that
// never empties), and counts the units each was granted: a high tier with
// a share of 0.9 and a low tier, both the whole time or the high one for
// the first half only.
func TestSlotsShares(t *testing.T) {
	const (
		rate    = 10 // per second
		seconds = 60
	)
	tests := []struct {
		name                  string
		shares                quota.Shares
		highFor               time.Duration // the high caller asks until then
		highAtLeast           int
		lowAtLeast, lowAtMost int
		totalAtLeast          int
	}{
		// The low tier is held to a tenth of the rate: 60 units, the cap's
		// first horizon (2) and one more; the high tier takes the rest.
		{"high reserves 0.9", quota.Shares{High: 0.9}, seconds * time.Second, 530, 55, 63, 600},
		// No share: the first to ask fills the horizon each time.
		{"no share", quota.Shares{}, seconds * time.Second, 0, 590, 610, 600},
		// The high tier stops at 30 s: from 35 s the low tier has the
		// whole rate (250 units, and the 10 of the horizon past the end);
		// the 5 s between, the share kept for a tier that stopped, idle.
		{"high stops", quota.Shares{High: 0.9}, 30 * time.Second, 260, 285, 300, 560},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSlots(t, quota.SlotsConfig{Rate: quota.Rate{N: rate, Per: time.Second}, Shares: tt.shares})
			ctx := context.Background()
			var high, low int
			for step := time.Duration(0); step < seconds*time.Second; step += 100 * time.Millisecond {
				now := t0.Add(step)
				// Each asks for one more unit than a step's worth: a
				// backlog. The low caller asks first, to have the
				// advantage.
				r, err := s.ReserveTier(ctx, "k", quota.TierLow, 2, now)
				if err != nil {
					t.Fatal(err)
				}
				low += r.Granted
				if step < tt.highFor {
					r, err := s.ReserveTier(ctx, "k", quota.TierHigh, 2, now)
					if err != nil {
						t.Fatal(err)
					}
					high += r.Granted
				}
			}
			t.Logf("high %d, low %d", high, low)
			if high < tt.highAtLeast || low < tt.lowAtLeast || low > tt.lowAtMost || high+low < tt.totalAtLeast {
				t.Errorf("granted high %d, low %d; want high >= %d, low in [%d, %d], total >= %d",
					high, low, tt.highAtLeast, tt.lowAtLeast, tt.lowAtMost, tt.totalAtLeast)
			}
		})
	}
}
