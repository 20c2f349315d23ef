package quota_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/beamthrottle/beamthrottle/transforms/throttle/quota"
)

// Slots is a Reserver.
var _ quota.Reserver = (*quota.Slots)(nil)

// t0 is the time of the tables' offsets.
var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// ms is a duration in milliseconds, for compact tables.
func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func newSlots(t *testing.T, cfg quota.SlotsConfig) *quota.Slots {
	t.Helper()
	s, err := quota.NewSlots(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// slotStep is one Reserve on key "k" at t0+at, and what it answers, as
// offsets from t0; retry is -1 when RetryAt is the zero Time.
type slotStep struct {
	at    time.Duration
	n     int
	first time.Duration
	got   int
	retry time.Duration
}

// TestSlotsReserve checks the GCRA's reservations: the TAT advancing by n ×
// spacing from max(TAT, now + lead), partial grants at the horizon with
// RetryAt when the next unit falls within it, and the lead after an idle
// spell.
func TestSlotsReserve(t *testing.T) {
	tests := []struct {
		name  string
		cfg   quota.SlotsConfig
		steps []slotStep
	}{
		{
			name: "10/s defaults", // spacing 100 ms, lead 20 ms, horizon 1 s
			cfg:  quota.SlotsConfig{Rate: quota.Rate{N: 10, Per: time.Second}},
			steps: []slotStep{
				{at: 0, n: 3, first: ms(20), got: 3, retry: -1},              // TAT 320
				{at: 0, n: 2, first: ms(320), got: 2, retry: -1},             // back to back: TAT 520
				{at: ms(100), n: 10, first: ms(520), got: 6, retry: ms(120)}, // slots 520..1020 start by 1100
				{at: ms(110), n: 1, first: ms(1120), got: 0, retry: ms(120)}, // 1120 is beyond 1110
				{at: ms(120), n: 1, first: ms(1120), got: 1, retry: -1},      // now it is within
				{at: ms(5000), n: 2, first: ms(5020), got: 2, retry: -1},     // idle: from now + lead
				{at: ms(5000), n: 0, first: -1},                              // nothing asked
			},
		},
		{
			name: "lead and horizon set",
			cfg:  quota.SlotsConfig{Rate: quota.Rate{N: 600, Per: time.Minute}, Lead: ms(50), Horizon: ms(300)},
			steps: []slotStep{
				{at: 0, n: 5, first: ms(50), got: 3, retry: ms(50)},       // 50, 150, 250
				{at: ms(40), n: 1, first: ms(350), got: 0, retry: ms(50)}, // 350 is beyond 340
				{at: ms(50), n: 1, first: ms(350), got: 1, retry: -1},
			},
		},
		{
			name: "a unit a minute", // spacing 60 s, longer than the horizon
			cfg:  quota.SlotsConfig{Rate: quota.Rate{N: 1, Per: time.Minute}},
			steps: []slotStep{
				{at: 0, n: 3, first: ms(20), got: 1, retry: ms(59020)},
				{at: time.Second, n: 1, first: ms(60020), got: 0, retry: ms(59020)},
				{at: ms(59020), n: 1, first: ms(60020), got: 1, retry: -1},
			},
		},
		{
			name: "spacing rounded up", // 3/s: 333 333 333.3 ns
			cfg:  quota.SlotsConfig{Rate: quota.Rate{N: 3, Per: time.Second}},
			steps: []slotStep{
				{at: 0, n: 2, first: ms(20), got: 2, retry: -1},
				{at: 0, n: 1, first: ms(20) + 2*333333334, got: 1, retry: -1},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSlots(t, tc.cfg)
			for i, st := range tc.steps {
				r, err := s.Reserve(context.Background(), "k", st.n, t0.Add(st.at))
				if err != nil {
					t.Fatal(err)
				}
				want := quota.Reservation{}
				if st.first >= 0 {
					want = quota.Reservation{First: t0.Add(st.first), Spacing: r.Spacing, Granted: st.got}
					if st.retry >= 0 {
						want.RetryAt = t0.Add(st.retry)
					}
					if st.got > 0 {
						want.Stamp = want.First.Add(time.Duration(st.got) * r.Spacing).UnixNano()
					}
				}
				if diff := cmp.Diff(want, r); diff != "" {
					t.Errorf("step %d: Reserve(%d) at +%v (-want +got):\n%s", i, st.n, st.at, diff)
				}
			}
		})
	}
}

// TestSlotsRelease checks giving back: the TAT moves back by the unused
// units when the reservation is the last one, never before now, and not at
// all when a later reservation was made (the slots lapse) or the
// reservation has ended. The next reservation shows where the TAT stands.
func TestSlotsRelease(t *testing.T) {
	rate := quota.Rate{N: 10, Per: time.Second} // spacing 100 ms, lead 20 ms
	type op struct {
		at      time.Duration
		reserve int // units to reserve, or 0 to release
		of      int // index of the reservation to release
		unused  int
		want    int // units given back
	}
	tests := []struct {
		name string
		ops  []op
		next time.Duration // first slot of a last Reserve(1) at the last op's time
	}{
		{"last", []op{{reserve: 5}, {of: 0, unused: 3, want: 3}}, ms(220)},
		{"all", []op{{reserve: 5}, {of: 0, unused: 5, want: 5}}, ms(20)},
		{"more than granted", []op{{reserve: 5}, {of: 0, unused: 9, want: 5}}, ms(20)},
		{"nothing", []op{{reserve: 5}, {of: 0, unused: 0, want: 0}}, ms(520)},
		{"not last", []op{{reserve: 5}, {reserve: 2}, {of: 0, unused: 3, want: 0}}, ms(720)},
		{"last again", []op{{reserve: 5}, {reserve: 2}, {of: 1, unused: 2, want: 2}, {of: 0, unused: 3, want: 3}}, ms(220)},
		// At 250 the slots 20, 120 and 220 have passed: the TAT moves to
		// now, and the two slots still ahead are given back.
		{"never before now", []op{{reserve: 5}, {at: ms(250), of: 0, unused: 5, want: 2}}, ms(270)},
		{"ended", []op{{reserve: 1}, {at: ms(200), of: 0, unused: 1, want: 0}}, ms(220)},
		{"twice", []op{{reserve: 5}, {of: 0, unused: 2, want: 2}, {of: 0, unused: 2, want: 0}}, ms(320)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSlots(t, quota.SlotsConfig{Rate: rate})
			ctx := context.Background()
			var rs []quota.Reservation
			var now time.Time
			for i, o := range tc.ops {
				now = t0.Add(o.at)
				if o.reserve > 0 {
					r, err := s.Reserve(ctx, "k", o.reserve, now)
					if err != nil || r.Granted != o.reserve {
						t.Fatalf("op %d: Reserve(%d) = %+v, %v; want all granted", i, o.reserve, r, err)
					}
					rs = append(rs, r)
					continue
				}
				back, err := s.Release(ctx, "k", rs[o.of], o.unused, now)
				if err != nil || back != o.want {
					t.Errorf("op %d: Release(#%d, %d) = %d, %v; want %d", i, o.of, o.unused, back, err, o.want)
				}
			}
			r, err := s.Reserve(ctx, "k", 1, now)
			if err != nil {
				t.Fatal(err)
			}
			if want := t0.Add(tc.next); !r.First.Equal(want) {
				t.Errorf("next Reserve(1): first slot at +%v, want +%v", r.First.Sub(t0), tc.next)
			}
		})
	}
}

// TestSlotsKeys: keys are independent quotas, and one another's Stamp does
// not give back.
func TestSlotsKeys(t *testing.T) {
	s := newSlots(t, quota.SlotsConfig{Rate: quota.Rate{N: 10, Per: time.Second}})
	ctx := context.Background()
	a, _ := s.Reserve(ctx, "a", 5, t0)
	b, _ := s.Reserve(ctx, "b", 5, t0)
	if !a.First.Equal(b.First) || a.Granted != 5 || b.Granted != 5 {
		t.Fatalf("Reserve(5) on keys a and b = %+v and %+v, want the same slots", a, b)
	}
	if back, _ := s.Release(ctx, "b", quota.Reservation{Granted: 5, Stamp: 1}, 5, t0); back != 0 {
		t.Errorf("Release of a foreign Stamp gave back %d, want 0", back)
	}
	if back, _ := s.Release(ctx, "c", a, 5, t0); back != 0 {
		t.Errorf("Release on a key never reserved gave back %d, want 0", back)
	}
	// Keys used once are dropped once their TAT has passed, as the map
	// grows.
	for i := range 1000 {
		s.Reserve(ctx, fmt.Sprint("once-", i), 1, t0.Add(time.Duration(i)*time.Second))
	}
	if n := quota.SlotsKeys(s); n > 200 {
		t.Errorf("%d keys kept after 1000 keys used once a second apart, want at most 200", n)
	}
}

func TestReservationSchedule(t *testing.T) {
	r := quota.Reservation{First: t0, Spacing: ms(100), Granted: 10}
	tests := []struct {
		name  string
		r     quota.Reservation
		costs []int
		want  []time.Duration // from t0
		used  int
	}{
		{"unit costs", r, []int{1, 1, 1}, []time.Duration{0, ms(100), ms(200)}, 3},
		{"costs", r, []int{3, 4, 2}, []time.Duration{0, ms(300), ms(700)}, 9},
		{"the rest does not fit", r, []int{3, 4, 5, 1}, []time.Duration{0, ms(300)}, 7},
		{"exactly", r, []int{10, 1}, []time.Duration{0}, 10},
		{"free calls", r, []int{0, 2, 0, -4, 1}, []time.Duration{0, 0, ms(200), ms(200), ms(200)}, 3},
		{"a free call at the end", r, []int{10, 0}, []time.Duration{0, ms(1000)}, 10},
		{"too costly", r, []int{11}, nil, 0},
		{"no calls", r, nil, nil, 0},
		{"nothing granted", quota.Reservation{First: t0, Spacing: ms(100)}, []int{0, 1}, nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			at, used := tc.r.Schedule(tc.costs)
			var got []time.Duration
			for _, a := range at {
				got = append(got, a.Sub(t0))
			}
			if !slices.Equal(got, tc.want) || used != tc.used {
				t.Errorf("Schedule(%v) = %v, %d; want %v, %d", tc.costs, got, used, tc.want, tc.used)
			}
		})
	}
}

func TestNewSlotsRefuses(t *testing.T) {
	rate := quota.Rate{N: 10, Per: time.Second}
	tests := []struct {
		name string
		cfg  quota.SlotsConfig
	}{
		{"no rate", quota.SlotsConfig{}},
		{"negative lead", quota.SlotsConfig{Rate: rate, Lead: -time.Millisecond}},
		{"negative horizon", quota.SlotsConfig{Rate: rate, Horizon: -time.Second}},
		{"horizon before lead", quota.SlotsConfig{Rate: rate, Lead: ms(50), Horizon: ms(40)}},
		{"horizon before the default lead", quota.SlotsConfig{Rate: rate, Horizon: ms(10)}},
	}
	for _, tc := range tests {
		if _, err := quota.NewSlots(tc.cfg); err == nil {
			t.Errorf("%s: NewSlots(%+v) succeeded, want an error", tc.name, tc.cfg)
		}
	}
}

// TestSlotsParallel has many goroutines reserve, use a prefix of their
// slots and give back the rest, on a shared fake clock that they advance:
// no two slots used, by anyone, are closer than the spacing. Run it with
// -race.
func TestSlotsParallel(t *testing.T) {
	const goroutines, rounds = 8, 200
	rate := quota.Rate{N: 1000, Per: time.Second} // spacing 1 ms
	s := newSlots(t, quota.SlotsConfig{Rate: rate, Horizon: ms(50)})
	var clock atomic.Int64 // ns after t0
	var mu sync.Mutex
	var used []time.Time
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			ctx := context.Background()
			for range rounds {
				now := t0.Add(time.Duration(clock.Add(rng.Int64N(int64(ms(2))))))
				r, err := s.Reserve(ctx, "k", 1+rng.IntN(8), now)
				if err != nil {
					t.Error(err)
					return
				}
				use := rng.IntN(r.Granted + 1)
				mu.Lock()
				for i := range use {
					used = append(used, r.First.Add(time.Duration(i)*r.Spacing))
				}
				mu.Unlock()
				if _, err := s.Release(ctx, "k", r, r.Granted-use, now); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	slices.SortFunc(used, time.Time.Compare)
	for i := 1; i < len(used); i++ {
		if d := used[i].Sub(used[i-1]); d < time.Millisecond {
			t.Fatalf("slots %d and %d of %d used are %v apart, want at least 1ms", i-1, i, len(used), d)
		}
	}
	if len(used) < 100 {
		t.Errorf("%d slots used, want at least 100", len(used))
	}
}

// FuzzSlots runs a sequence of reservations and give-backs, read from the
// fuzzer's bytes, against a model of the GCRA written from its definition,
// and checks every answer: Granted within [0, n], the first slot at
// max(TAT, now + lead), the last within the horizon and no more room in
// it when fewer than n were granted, and no slot used (a prefix of each
// reservation; the rest given back) before the end of the slots used
// before it.
func FuzzSlots(f *testing.F) {
	f.Add(uint16(10), uint8(20), uint16(1000), []byte{0, 0, 5, 1, 0, 3, 0, 10, 9, 1, 50, 2})
	f.Add(uint16(1), uint8(0), uint16(100), []byte{0, 0, 1, 0, 0, 1, 1, 255, 1})
	f.Add(uint16(997), uint8(255), uint16(3000), []byte{0, 1, 64, 0, 1, 64, 1, 0, 64, 0, 200, 30})
	f.Fuzz(func(t *testing.T, perSec uint16, leadMs uint8, horizonMs uint16, ops []byte) {
		rate := quota.Rate{N: max(int(perSec), 1), Per: time.Second}
		lead := ms(max(int(leadMs), 1))
		horizon := lead + ms(int(horizonMs))
		s, err := quota.NewSlots(quota.SlotsConfig{Rate: rate, Lead: lead, Horizon: horizon})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		var (
			now      = t0
			tat      = t0 // the model's TAT; t0 means none
			usedEnd  = t0 // end of the slots used so far
			last     quota.Reservation
			released = true
		)
		for ; len(ops) >= 3; ops = ops[3:] {
			op, dt, n := ops[0]%2, ms(int(ops[1])), int(ops[2]%64)
			now = now.Add(dt)
			if op == 0 {
				r, err := s.Reserve(ctx, "k", n, now)
				if err != nil {
					t.Fatal(err)
				}
				if n == 0 {
					if r != (quota.Reservation{}) {
						t.Fatalf("Reserve(0) = %+v, want the zero Reservation", r)
					}
					continue
				}
				sp := r.Spacing
				first := now.Add(lead)
				if tat.After(first) {
					first = tat
				}
				end := r.First.Add(time.Duration(r.Granted) * sp)
				switch {
				case r.Granted < 0 || r.Granted > n:
					t.Fatalf("Reserve(%d) granted %d", n, r.Granted)
				case !r.First.Equal(first):
					t.Fatalf("Reserve(%d) at %v: first slot %v, want max(TAT %v, now+lead)", n, now, r.First, tat)
				case r.Granted > 0 && end.Add(-sp).After(now.Add(horizon)):
					t.Fatalf("Reserve(%d) at %v: last slot %v beyond the horizon", n, now, end.Add(-sp))
				case r.Granted < n && !end.After(now.Add(horizon)):
					t.Fatalf("Reserve(%d) at %v granted %d, but slot %v is within the horizon", n, now, r.Granted, end)
				case r.Granted > 0 && r.First.Before(usedEnd):
					t.Fatalf("Reserve(%d) at %v: first slot %v before the end of the slots used, %v", n, now, r.First, usedEnd)
				case sp*time.Duration(rate.N) < rate.Per || sp > rate.Per/time.Duration(rate.N)+1:
					t.Fatalf("spacing %v for %v", sp, rate)
				}
				if r.Granted > 0 {
					tat, last, released = end, r, false
				}
				continue
			}
			if released {
				continue
			}
			// Use a prefix of the last reservation, give back the rest.
			unused := min(n, last.Granted)
			use := last.Granted - unused
			if use > 0 {
				usedEnd = last.First.Add(time.Duration(use) * last.Spacing)
			}
			back, err := s.Release(ctx, "k", last, unused, now)
			if err != nil {
				t.Fatal(err)
			}
			released = true
			want := 0
			if end := last.First.Add(time.Duration(last.Granted) * last.Spacing); tat.Equal(end) && end.After(now) {
				want = min(unused, int(end.Sub(now)/last.Spacing))
				tat = end.Add(-time.Duration(unused) * last.Spacing)
				if tat.Before(now) {
					tat = now
				}
			}
			if back != want {
				t.Fatalf("Release(%d) at %v gave back %d, want %d", unused, now, back, want)
			}
		}
	})
}
