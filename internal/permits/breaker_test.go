package permits

import (
	"testing"
	"time"
)

// TestBreaker runs a breaker through a script: a failure makes the service
// down for a back-off that doubles (1, 2, 4, 8 s, then 10 s at most) and is
// counted from the failure's end; one round trip at a time, waited for while
// up and not while down; an answer resets it all.
func TestBreaker(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	type op int
	const (
		next op = iota
		fail
		answer
		abandon
	)
	script := []struct {
		at   float64
		op   op
		step breakerStep // for next
		chg  bool        // for fail and answer
	}{
		{0, next, stepCall, false},
		{0, next, stepWait, false}, // one round trip at a time
		{0.5, fail, 0, true},       // down until 1.5
		{0.5, next, stepSkip, false},
		{1.499, next, stepSkip, false},
		{1.5, next, stepProbe, false},
		{1.5, next, stepSkip, false}, // the probe is under way: not waited for
		{2, fail, 0, false},          // 2 s: down until 4
		{3.999, next, stepSkip, false},
		{4, next, stepProbe, false},
		{4, fail, 0, false}, // 4 s: until 8
		{8, next, stepProbe, false},
		{8, fail, 0, false}, // 8 s: until 16
		{16, next, stepProbe, false},
		{16, fail, 0, false}, // 10 s at most: until 26
		{25.9, next, stepSkip, false},
		{26, next, stepProbe, false},
		{26, fail, 0, false}, // 10 s: until 36
		{36, next, stepProbe, false},
		{36.1, answer, 0, true}, // up again
		{36.1, next, stepCall, false},
		{36.1, answer, 0, false},
		{37, next, stepCall, false},
		{37, abandon, 0, false}, // the caller gave up: still up
		{37, next, stepCall, false},
		{37, fail, 0, true}, // the back-off starts again at 1 s
		{37.999, next, stepSkip, false},
		{38, next, stepProbe, false},
	}
	var b breaker
	for i, s := range script {
		now := at(s.at)
		switch s.op {
		case next:
			if got := b.next(now); got != s.step {
				t.Fatalf("step %d: next at %vs = %d, want %d", i, s.at, got, s.step)
			}
		case fail, answer:
			if got := b.done(now, s.op == answer); got != s.chg {
				t.Fatalf("step %d: done at %vs changed %v, want %v", i, s.at, got, s.chg)
			}
		case abandon:
			b.abandon()
		}
	}
}

// TestBreakerProbes: asked every 10 ms for a minute while every round trip
// fails at once, a breaker makes 9 round trips: the first, then one probe
// per back-off (at 1, 3, 7, 15, 25, 35, 45 and 55 s).
func TestBreakerProbes(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	var b breaker
	var trips []time.Duration
	for d := time.Duration(0); d < time.Minute; d += 10 * time.Millisecond {
		switch b.next(t0.Add(d)) {
		case stepCall, stepProbe:
			trips = append(trips, d)
			b.done(t0.Add(d), false)
		case stepWait:
			t.Fatalf("told to wait at %v with no round trip under way", d)
		}
	}
	want := []time.Duration{0, 1, 3, 7, 15, 25, 35, 45, 55}
	if len(trips) != len(want) {
		t.Fatalf("round trips at %v, want %d", trips, len(want))
	}
	for i, w := range want {
		if trips[i] != w*time.Second {
			t.Errorf("round trip %d at %v, want %v", i, trips[i], w*time.Second)
		}
	}
}
