package permits

import (
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
		back    *Claim            // then given back, if set
		expire  int               // then expired at this ms, if > 0
		cost    int               // then claimed, if > 0
		want    Claim             // the claim's slot
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
			{add: res(0, 3), cost: 1, want: Claim{at: ms(0), units: 1}, ok: true},
			{cost: 1, want: Claim{at: ms(100), units: 1}, ok: true},
			{cost: 1, want: Claim{at: ms(200), units: 1}, ok: true},
			{cost: 1},
		}},
		{"a cost takes its slots' worth", []step{
			{add: res(0, 3), cost: 2, want: Claim{at: ms(0), units: 2}, ok: true},
			{cost: 2}, // one left: not enough
			{cost: 1, want: Claim{at: ms(200), units: 1}, ok: true},
		}},
		{"contiguous reservations join", []step{
			{add: res(0, 1)},
			{add: res(100, 2), cost: 3, want: Claim{at: ms(0), units: 3}, ok: true},
		}},
		{"a reservation after a gap does not join", []step{
			{add: res(0, 1)},
			{add: res(300, 2), cost: 2, want: Claim{at: ms(300), units: 2}, ok: true},
			{cost: 1, want: Claim{at: ms(0), units: 1}, ok: true},
		}},
		{"given back, the earliest goes first", []step{
			{add: res(0, 3), cost: 1, want: Claim{at: ms(0), units: 1}, ok: true},
			{back: &Claim{at: ms(0), units: 1}, cost: 1, want: Claim{at: ms(0), units: 1}, ok: true},
			{cost: 1, want: Claim{at: ms(100), units: 1}, ok: true},
		}},
		{"passed slots lapse", []step{
			{add: res(0, 3), expire: 101, lapsed: 1, cost: 1, want: Claim{at: ms(100), units: 1}, ok: true},
			{back: &Claim{at: ms(100), units: 1}, expire: 201, lapsed: 1, cost: 1, want: Claim{at: ms(200), units: 1}, ok: true},
		}},
		{"within the tolerance a slot is still there", []step{
			{add: res(0, 1), expire: 1, cost: 1, want: Claim{at: ms(0), units: 1}, ok: true},
		}},
		{"a cost above the capacity takes the capacity", []step{
			{add: res(0, 3), capping: 2, cost: 5, want: Claim{at: ms(0), units: 2}, ok: true},
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
		back     *Claim
		tier     int
		wantAt   int // ms; -1: none
		wantTier int
	}{
		{tier: tierHigh, wantAt: 0, wantTier: tierLow},  // the earliest, a lower tier's
		{tier: tierLow, wantAt: 200, wantTier: tierLow}, // not the high slot at 100
		{tier: tierLow, wantAt: -1},                     // only the high slot is left
		{back: &Claim{at: ms(0), units: 1, tier: tierHigh}, tier: tierNormal, wantAt: -1},
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
