package throttle

import (
	"context"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/transforms/throttle/quota"
)

var slotT0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func ms(n int) time.Time { return slotT0.Add(time.Duration(n) * time.Millisecond) }

// res is a reservation of granted slots 100 ms apart from first (ms),
// ending at its stamp on a quota clock that is the caller's.
func res(first, granted int) quota.Reservation {
	r := quota.Reservation{First: ms(first), Spacing: 100 * time.Millisecond, Granted: granted}
	r.Stamp = r.First.Add(time.Duration(granted) * r.Spacing).UnixNano()
	return r
}

func TestSlotLedger(t *testing.T) {
	type step struct {
		add     quota.Reservation // added first, if Granted > 0
		back    *claim            // then given back, if set
		expire  int               // then expired at this ms, if > 0
		cost    int               // then claimed, if > 0
		want    claim             // the claim's slot
		ok      bool
		lapsed  int
		capping int // capacity
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"empty", []step{{cost: 1}}},
		{"in order", []step{
			{add: res(0, 3), cost: 1, want: claim{at: ms(0), units: 1}, ok: true},
			{cost: 1, want: claim{at: ms(100), units: 1}, ok: true},
			{cost: 1, want: claim{at: ms(200), units: 1}, ok: true},
			{cost: 1},
		}},
		{"a cost takes its slots' worth", []step{
			{add: res(0, 3), cost: 2, want: claim{at: ms(0), units: 2}, ok: true},
			{cost: 2}, // one left: not enough
			{cost: 1, want: claim{at: ms(200), units: 1}, ok: true},
		}},
		{"contiguous reservations join", []step{
			{add: res(0, 1)},
			{add: res(100, 2), cost: 3, want: claim{at: ms(0), units: 3}, ok: true},
		}},
		{"a reservation after a gap does not join", []step{
			{add: res(0, 1)},
			{add: res(300, 2), cost: 2, want: claim{at: ms(300), units: 2}, ok: true},
			{cost: 1, want: claim{at: ms(0), units: 1}, ok: true},
		}},
		{"given back, the earliest goes first", []step{
			{add: res(0, 3), cost: 1, want: claim{at: ms(0), units: 1}, ok: true},
			{back: &claim{at: ms(0), units: 1}, cost: 1, want: claim{at: ms(0), units: 1}, ok: true},
			{cost: 1, want: claim{at: ms(100), units: 1}, ok: true},
		}},
		{"passed slots lapse", []step{
			{add: res(0, 3), expire: 101, lapsed: 1, cost: 1, want: claim{at: ms(100), units: 1}, ok: true},
			{back: &claim{at: ms(100), units: 1}, expire: 201, lapsed: 1, cost: 1, want: claim{at: ms(200), units: 1}, ok: true},
		}},
		{"within the tolerance a slot is still there", []step{
			{add: res(0, 1), expire: 1, cost: 1, want: claim{at: ms(0), units: 1}, ok: true},
		}},
		{"a cost above the capacity takes the capacity", []step{
			{add: res(0, 3), capping: 2, cost: 5, want: claim{at: ms(0), units: 2}, ok: true},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var l slotLedger
			for i, s := range tc.steps {
				if s.capping > 0 {
					l.capacity = s.capping
				}
				l.add(s.add, tierNormal)
				if s.back != nil {
					l.giveBack(*s.back)
				}
				if s.expire > 0 {
					if got := l.expire(ms(s.expire)); got != s.lapsed {
						t.Errorf("step %d: %d lapsed, want %d", i, got, s.lapsed)
					}
				}
				if s.cost > 0 {
					got, ok := l.claim(s.cost, tierNormal)
					if ok != s.ok || ok && (!got.at.Equal(s.want.at) || got.units != s.want.units) {
						t.Errorf("step %d: claim(%d) = %v at %v, %v; want %v at %v, %v",
							i, s.cost, got.units, got.at.Sub(slotT0), ok, s.want.units, s.want.at.Sub(slotT0), s.ok)
					}
				}
			}
		})
	}
}

// TestSlotLedgerTiers: a call claims slots reserved for its tier or a
// lower one, never a higher one's, and runs of different tiers do not join.
func TestSlotLedgerTiers(t *testing.T) {
	var l slotLedger
	l.add(res(0, 1), tierLow)
	l.add(res(100, 1), tierHigh) // contiguous, but another tier
	l.add(res(200, 1), tierLow)
	steps := []struct {
		back     *claim
		tier     int
		wantAt   int // ms; -1: none
		wantTier int
	}{
		{tier: tierHigh, wantAt: 0, wantTier: tierLow},  // the earliest, a lower tier's
		{tier: tierLow, wantAt: 200, wantTier: tierLow}, // not the high slot at 100
		{tier: tierLow, wantAt: -1},                     // only the high slot is left
		{back: &claim{at: ms(0), units: 1, tier: tierHigh}, tier: tierNormal, wantAt: -1},
		{tier: tierHigh, wantAt: 0, wantTier: tierHigh}, // given back, the earliest
		{tier: tierHigh, wantAt: 100, wantTier: tierHigh},
	}
	for i, s := range steps {
		if s.back != nil {
			l.giveBack(*s.back)
		}
		got, ok := l.claim(1, s.tier)
		switch {
		case s.wantAt < 0 && ok:
			t.Errorf("step %d: claim for tier %d = %v, want none", i, s.tier, got.at.Sub(slotT0))
		case s.wantAt >= 0 && (!ok || !got.at.Equal(ms(s.wantAt)) || got.tier != s.wantTier):
			t.Errorf("step %d: claim for tier %d = %v of tier %d, %v; want %dms of tier %d",
				i, s.tier, got.at.Sub(slotT0), got.tier, ok, s.wantAt, s.wantTier)
		}
	}
}

func TestTolerance(t *testing.T) {
	for _, tc := range []struct{ spacing, want time.Duration }{
		{time.Microsecond, minTolerance},
		{12 * time.Millisecond, minTolerance},
		{120 * time.Millisecond, 10 * time.Millisecond},
		{time.Hour, maxTolerance},
	} {
		if got := tolerance(tc.spacing); got != tc.want {
			t.Errorf("tolerance(%v) = %v, want %v", tc.spacing, got, tc.want)
		}
	}
}

func TestSlotLedgerTail(t *testing.T) {
	var l slotLedger
	l.add(res(0, 4), tierNormal)
	l.claim(1, tierNormal)         // 0 ms
	d, _ := l.claim(1, tierNormal) // 100 ms
	l.giveBack(d)                  // ends where 200 ms begins: joins the tail
	if _, ok := l.tail(ms(500)); ok {
		t.Error("tail after its slots passed: ok, want none")
	}
	l = slotLedger{}
	l.add(res(0, 4), tierNormal)
	l.claim(1, tierNormal)
	d, _ = l.claim(1, tierNormal)
	l.giveBack(d)
	r, ok := l.tail(ms(50))
	if !ok || !r.next.Equal(ms(100)) || r.left != 3 {
		t.Fatalf("tail = %v from %v, %v; want 3 from 100ms", r.left, r.next.Sub(slotT0), ok)
	}
	if len(l.runs) != 0 || len(l.back) != 0 {
		t.Errorf("after tail: %d runs, %d given back; want none", len(l.runs), len(l.back))
	}
}

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
		if !perm.ok || !perm.paid {
			t.Fatalf("permit at %v: %+v, want a paid slot", now.Sub(slotT0), perm)
		}
		got = append(got, perm.slot.at.Sub(slotT0))
		now = perm.slot.at // sent on it
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
	if p.tally.released != 0 || p.tally.lapsed != 0 { // reported by end
		t.Errorf("tally after end %+v, want it reported", p.tally)
	}
	p.begin()
	next := p.permit(ctx, now, tierNormal, 1, 1, time.Second)
	if !next.slot.at.Equal(held.slot.at) {
		t.Errorf("after giving back, the next slot is at %v, want %v", next.slot.at.Sub(slotT0), held.slot.at.Sub(slotT0))
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
		if !perm.paid || perm.slot.units != c.cost {
			t.Fatalf("permit for cost %d: %+v, want %d paid units", c.cost, perm, c.cost)
		}
		got = append(got, perm.slot.at.Sub(slotT0))
		now = perm.slot.at
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
					if !perm.ok {
						w.next = perm.retryAt
						continue
					}
					w.p.settle(ctx, perm, true)
					w.next = perm.slot.at
					if perm.slot.at.Before(end) {
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
