package permits

import (
	"errors"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/transforms/throttle/quota"
)

// TestPool runs a Pool of a count of permits through scripts of asks and
// answers, on a fake clock, and checks what it says at each step: permits
// held are granted without a round trip; one round trip at a time, the
// others joining it; a short grant refuses until the service's RetryAt;
// permits lapse at the end of their window; a failed round trip makes the
// pool decide without the service, failing open or closed, until a probe
// after the back-off; a call not sent gives its permits back.
func TestPool(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	const retry = 200 * time.Millisecond
	type op int
	const (
		ask    op = iota // Permit(at, cost, want)
		answer           // Answered the last Ask or probe with grant (err if fail)
		settle           // Settle the last Granted, not sent
	)
	type step struct {
		op         op
		ms         int
		cost, want int
		grant      int  // answer
		retryMs    int  // answer: the service's RetryAt, 0 for none
		fail       bool // answer: an error
		kind       Kind // ask: what it says
		trip       int  // ask: the round trip's N (0: none)
		probe      bool // ask: the trip is a probe
		retryAt    int  // ask, Refused: ms
		have       int  // after the step
	}
	tests := []struct {
		name     string
		failOpen bool
		window   time.Duration // fixed windows of permits; 0: none
		steps    []step
	}{
		{"a round trip, then what it brought", false, 0, []step{
			{op: ask, ms: 0, cost: 1, want: 5, kind: Ask, trip: 5},
			{op: ask, ms: 1, cost: 1, want: 5, kind: Join}, // one round trip at a time
			{op: answer, ms: 2, grant: 5, have: 5},
			{op: ask, ms: 2, cost: 1, want: 5, kind: Granted, have: 4},
			{op: ask, ms: 3, cost: 3, want: 5, kind: Granted, have: 1},
			{op: settle, have: 4}, // not sent: back
			{op: ask, ms: 4, cost: 4, want: 4, kind: Granted, have: 0},
		}},
		{"a short grant refuses until RetryAt", false, 0, []step{
			{op: ask, ms: 0, cost: 2, want: 6, kind: Ask, trip: 6},
			{op: answer, ms: 1, grant: 1, retryMs: 500, have: 1},
			{op: ask, ms: 1, cost: 2, want: 6, kind: Refused, retryAt: 500, have: 1},
			{op: ask, ms: 500, cost: 2, want: 6, kind: Ask, trip: 5, have: 1}, // what is missing
			{op: answer, ms: 501, grant: 5, have: 6},
			{op: ask, ms: 501, cost: 2, want: 6, kind: Granted, have: 4},
		}},
		{"no RetryAt: refused for the retry", false, 0, []step{
			{op: ask, ms: 0, cost: 1, want: 1, kind: Ask, trip: 1},
			{op: answer, ms: 1, grant: 0},
			{op: ask, ms: 1, cost: 1, want: 1, kind: Refused, retryAt: 200},
		}},
		{"permits lapse at the end of their window", false, time.Second, []step{
			{op: ask, ms: 900, cost: 1, want: 5, kind: Ask, trip: 5},
			{op: answer, ms: 901, grant: 5, have: 5},
			{op: ask, ms: 999, cost: 1, want: 5, kind: Granted, have: 4},
			{op: ask, ms: 1000, cost: 1, want: 5, kind: Ask, trip: 5, have: 0},
		}},
		{"down, failing closed, then a probe", false, 0, []step{
			{op: ask, ms: 0, cost: 1, want: 3, kind: Ask, trip: 3},
			{op: answer, ms: 100, fail: true},
			{op: ask, ms: 100, cost: 1, want: 3, kind: Refused, retryAt: 300},
			{op: ask, ms: 1099, cost: 1, want: 3, kind: Refused, retryAt: 1299}, // within the back-off of 1 s
			{op: ask, ms: 1100, cost: 1, want: 3, kind: Refused, retryAt: 1300, trip: 3, probe: true},
			{op: ask, ms: 1101, cost: 1, want: 3, kind: Refused, retryAt: 1301}, // the probe is under way
			{op: answer, ms: 1150, grant: 3, have: 3},
			{op: ask, ms: 1150, cost: 1, want: 3, kind: Granted, have: 2},
		}},
		{"down, failing open; the back-off doubles", true, 0, []step{
			{op: ask, ms: 0, cost: 1, want: 1, kind: Ask, trip: 1},
			{op: answer, ms: 0, fail: true},
			{op: ask, ms: 10, cost: 1, want: 1, kind: Open},
			{op: ask, ms: 1000, cost: 1, want: 1, kind: Open, trip: 1, probe: true},
			{op: answer, ms: 1000, fail: true}, // down for 2 s
			{op: ask, ms: 2999, cost: 1, want: 1, kind: Open},
			{op: ask, ms: 3000, cost: 1, want: 1, kind: Open, trip: 1, probe: true},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{FailOpen: tc.failOpen}
			if tc.window > 0 {
				cfg.WindowEnd = func(now time.Time) time.Time { return now.Truncate(tc.window).Add(tc.window) }
			}
			p := New(cfg)
			var last, granted Permission
			for i, s := range tc.steps {
				now := at(s.ms)
				switch s.op {
				case ask:
					perm := p.Permit(now, now, tierNormal, s.cost, s.want, retry)
					if perm.Kind != s.kind || perm.Trip.N != s.trip || perm.Trip.Probe != s.probe {
						t.Fatalf("step %d: Permit = kind %v, trip %d (probe %v); want kind %v, trip %d (probe %v)",
							i, perm.Kind, perm.Trip.N, perm.Trip.Probe, s.kind, s.trip, s.probe)
					}
					if s.kind == Refused && !perm.RetryAt.Equal(at(s.retryAt)) {
						t.Errorf("step %d: RetryAt %v, want %v ms", i, perm.RetryAt.Sub(t0), s.retryAt)
					}
					if perm.Trip.N > 0 {
						last = perm
					}
					if perm.Kind == Granted {
						granted = perm
					}
				case answer:
					var err error
					g := Grant{Grant: quota.Grant{Granted: s.grant}}
					if s.retryMs > 0 {
						g.RetryAt = at(s.retryMs)
					}
					if s.fail {
						err = errors.New("no answer")
					}
					p.Answered(last.Trip, now, g, err, retry)
				case settle:
					p.Settle(granted, false)
				}
				if p.Have() != s.have {
					t.Errorf("step %d: %d permits held, want %d", i, p.Have(), s.have)
				}
			}
		})
	}
}

// TestPoolSlots: with time slots, a call claims the next slot of what the
// worker reserved; the call that takes the last one asks for more ahead of
// need; a slot not used goes back, and a firing's end gives back the
// unclaimed tail, the slot given back joining it.
func TestPoolSlots(t *testing.T) {
	p := New(Config{Slots: true, Spacing: 100 * time.Millisecond})
	const retry = time.Second
	perm := p.Permit(ms(0), ms(0), tierNormal, 1, 2, retry)
	if perm.Kind != Ask || perm.Trip.N != 2 {
		t.Fatalf("first Permit: kind %v trip %d, want Ask for 2", perm.Kind, perm.Trip.N)
	}
	p.Answered(perm.Trip, ms(1), Grant{Grant: quota.Grant{Granted: 2}, Res: res(20, 2)}, nil, retry)
	p.Begin()
	first := p.Permit(ms(1), ms(1), tierNormal, 1, 3, retry)
	if first.Kind != Granted || !first.Slot.At().Equal(ms(20)) || first.Trip.N != 0 {
		t.Fatalf("after the answer: kind %v at %v trip %d, want the slot at 20 ms, no trip", first.Kind, first.Slot.At().Sub(slotT0), first.Trip.N)
	}
	second := p.Permit(ms(20), ms(20), tierNormal, 1, 3, retry)
	if second.Kind != Granted || !second.Slot.At().Equal(ms(120)) || second.Trip.N != 2 {
		t.Fatalf("the last slot: kind %v at %v trip %d, want the slot at 120 ms and 2 more ahead", second.Kind, second.Slot.At().Sub(slotT0), second.Trip.N)
	}
	p.Answered(second.Trip, ms(21), Grant{Grant: quota.Grant{Granted: 2}, Res: res(220, 2)}, nil, retry)
	p.Settle(second, false) // not sent: back for the next call
	rel, ok := p.End(ms(50), Permission{})
	if !ok || rel.Left != 3 || !rel.Res.First.Equal(ms(220)) {
		t.Errorf("End: %d left of the reservation at %v, %v; want 3 (the slot at 120 ms given back, and 220, 320)", rel.Left, rel.Res.First.Sub(slotT0), ok)
	}
	p.Released(rel, 3, nil)
	if tally := p.Tally(); tally.Released != 3 || tally.Requests != 2 || tally.Permits != 4 || tally.Lapsed != 0 {
		t.Errorf("tally %+v, want 2 requests, 4 permits, 3 released, none lapsed", tally)
	}
	if p.Begin(); p.Permit(ms(400), ms(400), tierNormal, 1, 1, retry).Kind != Ask {
		t.Error("after the end gave everything back: no Ask, want one")
	}
}
