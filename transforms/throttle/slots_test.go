package throttle

import (
	"context"
	"testing"
	"time"
)

var slotT0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func ms(n int) time.Time { return slotT0.Add(time.Duration(n) * time.Millisecond) }

// localPool returns a permit pool over the local known rate.
func localPool(t *testing.T, rate string) *permitPool {
	t.Helper()
	cfg := QuotaConfig{Backend: quotaLocal, Rate: rate, Key: "k"}
	q, err := cfg.newQuota()
	if err != nil {
		t.Fatal(err)
	}
	p := newPermitPool(cfg, q)
	// The tests give the pool their own clock, in its now arguments; no wall
	// time passes for it within a call.
	stopped := time.Now()
	p.clock = func() time.Time { return stopped }
	return p
}

// TestPermitPoolSlots: a permit pool over the local known rate hands each
// call its own slot, spaced at the rate across firings, misses nothing it
// is not late for, and gives the slots no firing used back to the quota.
func TestPermitPoolSlots(t *testing.T) {
	p := localPool(t, "10/s")
	ctx := context.Background()
	now := ms(0)
	p.begin()
	var got []time.Duration
	for range 5 {
		perm := p.permit(ctx, now, tierNormal, 1, 1, time.Second)
		if !perm.OK() || !perm.Paid() {
			t.Fatalf("permit at %v: %+v, want a paid slot", now.Sub(slotT0), perm)
		}
		got = append(got, perm.Slot.At().Sub(slotT0))
		now = perm.Slot.At() // sent on it
		p.settle(ctx, perm, true)
	}
	want := []time.Duration{20, 120, 220, 320, 420} // the lead, then 1/rate apart
	for i := range want {
		if got[i] != want[i]*time.Millisecond {
			t.Fatalf("slots %v, want %v ms", got, want)
		}
	}
	// A slot claimed and not used goes back; the firing ends and the
	// quota gets it back, so the next reservation starts there.
	held := p.permit(ctx, now, tierNormal, 1, 3, time.Second)
	p.end(ctx, now, held)
	if tally := p.m.Tally(); tally.Released != 0 || tally.Lapsed != 0 { // reported by end
		t.Errorf("tally after end %+v, want it reported", tally)
	}
	p.begin()
	next := p.permit(ctx, now, tierNormal, 1, 1, time.Second)
	if !next.Slot.At().Equal(held.Slot.At()) {
		t.Errorf("after giving back, the next slot is at %v, want %v", next.Slot.At().Sub(slotT0), held.Slot.At().Sub(slotT0))
	}
	p.end(ctx, now, next)
}

// TestPermitPoolSlotCosts: a call of cost c takes c slots' worth of time,
// whether its slots come in one reservation or join several.
func TestPermitPoolSlotCosts(t *testing.T) {
	p := localPool(t, "10/s")
	ctx := context.Background()
	now := ms(0)
	var got []time.Duration
	for _, c := range []struct{ cost, want int }{{3, 3}, {1, 1}, {2, 1}} { // asking for fewer than a call costs
		perm := p.permit(ctx, now, tierNormal, c.cost, c.want, time.Second)
		if !perm.Paid() || perm.Slot.Units() != c.cost {
			t.Fatalf("permit for cost %d: %+v, want %d paid units", c.cost, perm, c.cost)
		}
		got = append(got, perm.Slot.At().Sub(slotT0))
		now = perm.Slot.At()
		p.settle(ctx, perm, true)
	}
	want := []time.Duration{20 * time.Millisecond, 320 * time.Millisecond, 420 * time.Millisecond}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("slots %v, want %v", got, want)
		}
	}
}

// TestPermitPoolShares: two workers' permit pools share one known rate of
// 10/s, one worker sending high-priority calls and the other low, each one
// call at a time on its slot and with more to send than the rate allows,
// on a virtual clock for 60 s (the high worker asks first). With a share
// of 0.9 kept for the high tier, the low worker is held to a tenth of the
// rate and the high one gets the rest; with none, they split it.
func TestPermitPoolShares(t *testing.T) {
	tests := []struct {
		name        string
		share       float64
		highAtLeast int
		lowIn       [2]int
	}{
		{"high share 0.9", 0.9, 530, [2]int{55, 64}},
		{"no share", 0, 250, [2]int{250, 350}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := QuotaConfig{Backend: quotaLocal, Rate: "10/s", Key: "k", HighShare: tc.share}
			q, err := cfg.newQuota()
			if err != nil {
				t.Fatal(err)
			}
			type worker struct {
				p     *permitPool
				tier  int
				next  time.Time // when it may ask again: its last call's slot, or a refusal's retry
				calls int
			}
			ws := []*worker{{p: newPermitPool(cfg, q), tier: tierHigh}, {p: newPermitPool(cfg, q), tier: tierLow}}
			ctx := context.Background()
			end := ms(60_000)
			for now := ms(0); now.Before(end); now = now.Add(10 * time.Millisecond) {
				for _, w := range ws {
					if now.Before(w.next) {
						continue
					}
					perm := w.p.permit(ctx, now, w.tier, 1, 5, time.Second)
					if !perm.OK() {
						w.next = perm.RetryAt
						continue
					}
					w.p.settle(ctx, perm, true)
					w.next = perm.Slot.At()
					if perm.Slot.At().Before(end) {
						w.calls++
					}
				}
			}
			high, low := ws[0].calls, ws[1].calls
			t.Logf("high %d, low %d", high, low)
			if high < tc.highAtLeast || low < tc.lowIn[0] || low > tc.lowIn[1] || high+low < 595 {
				t.Errorf("high %d, low %d calls; want high >= %d, low in %v, together >= 595", high, low, tc.highAtLeast, tc.lowIn)
			}
		})
	}
}
