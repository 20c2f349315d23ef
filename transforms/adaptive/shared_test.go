package adaptive

import (
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestSharedDecide: NewShared passes the cost to the policy
// underneath, so that it decides as the bare policy would.
func TestSharedDecide(t *testing.T) {
	tests := []struct {
		name  string
		costs []int
	}{
		{"ones", []int{1, 1, 1, 1}},
		{"rising", []int{1, 10, 100, 1000}},
		{"free and negative", []int{5, 0, -3, 5, 0}},
		{"mixed", []int{37, 2, 90, 14, 1, 66, 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bare := newTestPacer(t, PacerConfig{StartRate: 10})
			s := NewShared(newTestPacer(t, PacerConfig{StartRate: 10}))
			for i := range 300 {
				now := at(time.Duration(i) * 3 * time.Millisecond)
				c := tc.costs[i%len(tc.costs)]
				want, got := bare.Decide(now, 0, c), s.Decide(now, 0, c)
				if got != want {
					t.Fatalf("decision %d of cost %d: got %+v, want %+v as the bare Pacer's", i, c, got, want)
				}
				if got.Verdict == Send && i%50 == 0 {
					bare.Record(now, Answer{Outcome: Throttled, Sent: now})
					s.Record(now, Answer{Outcome: Throttled, Sent: now})
				}
			}
			b, _ := bare.MarshalBinary()
			if got, _ := s.MarshalBinary(); !slices.Equal(got, b) {
				t.Errorf("got state %x, want the bare Pacer's %x", got, b)
			}
		})
	}
	t.Run("cost reaches the Pacer", func(t *testing.T) {
		p := flatPacer(t, 10) // 500 units/s
		s := NewShared(p)
		next := p.next
		if d := s.Decide(time.Unix(0, next), 0, 250); d.Verdict != Send {
			t.Fatalf("got %+v, want Send", d)
		}
		want := time.Unix(0, next).Add(time.Duration(1e9 * 250 / p.rate))
		if d := s.Decide(time.Unix(0, next), 0, 1); d.Verdict != Postpone || !d.RetryAt.Equal(want) {
			t.Errorf("after a request of cost 250: got %+v, want Postpone until %v, half a second later", d, want)
		}
	})
	t.Run("SRE counts requests", func(t *testing.T) {
		sre, err := NewSRE(SREConfig{}, func() float64 { return 0.5 }, 0)
		if err != nil {
			t.Fatal(err)
		}
		s := NewShared(sre)
		for i, c := range []int{100, 0, 7} {
			if d := s.Decide(at(0), i, c); d.Verdict != Send { // the earlier ones in flight
				t.Errorf("request %d of cost %d: got %+v, want Send", i, c, d)
			}
		}
		if req, _ := Counts(sre, at(0)); req != 3 {
			t.Errorf("got %d requests counted, want 3 (one each, whatever the cost)", req)
		}
	})
}

// TestSharedParallelCost hammers one Shared Pacer with requests of various
// costs from several goroutines on one scripted clock; run it with -race.
// Whatever the interleaving, each request let through is followed by a
// gap of its cost at the rate.
func TestSharedParallelCost(t *testing.T) {
	p := flatPacer(t, 10) // 500 units per second
	s := NewShared(p)
	const goroutines, calls = 8, 2000
	var tick atomic.Int64
	type send struct {
		at   time.Time
		cost int
	}
	sends := make([][]send, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range calls {
				now := at(time.Duration(tick.Add(1)) * 100 * time.Microsecond)
				c := 1 + (g*7+i)%20
				d := s.Decide(now, 0, c)
				switch d.Verdict {
				case Send:
					sends[g] = append(sends[g], send{now, c})
					s.Record(now, Answer{Outcome: Accepted, Sent: now})
				case Reject:
					t.Errorf("got Reject, want Send or Postpone")
				}
				if i%100 == 0 {
					if n := s.Budget(now, now.Add(time.Second)); n < 0 {
						t.Errorf("got budget %d, want at least 0", n)
					}
					if _, err := s.MarshalBinary(); err != nil {
						t.Errorf("MarshalBinary: %v", err)
					}
				}
			}
		})
	}
	wg.Wait()
	all := slices.Concat(sends...)
	slices.SortFunc(all, func(a, b send) int { return a.at.Compare(b.at) })
	if len(all) < 10 {
		t.Fatalf("got %d sends, want many", len(all))
	}
	rate := p.rate // the highest rate of the run
	total := 0
	for i, x := range all {
		total += x.cost
		if i == 0 {
			continue
		}
		prev := all[i-1]
		if gap, want := x.at.Sub(prev.at), time.Duration(1e9*float64(prev.cost)/rate)-time.Nanosecond; gap < want {
			t.Errorf("send %d: %v after a request of cost %d, want at least %v", i, gap, prev.cost, want)
		}
	}
	span := all[len(all)-1].at.Sub(all[0].at).Seconds()
	if limit := rate*span + 20; float64(total) > limit {
		t.Errorf("got %d cost units in %vs, want at most %v", total, span, limit)
	}
}
