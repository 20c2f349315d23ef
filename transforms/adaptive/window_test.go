package adaptive_test

import (
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// throttledAt counts n requests that the backend throttled, at now.
func throttledAt(th *adaptive.SRE, now time.Time, n int) {
	for range n {
		if allow, _ := decide(th, now); allow {
			record(th, now, adaptive.Throttled)
		}
	}
}

// acceptedAt counts n requests that the backend accepted, at now.
func acceptedAt(th *adaptive.SRE, now time.Time, n int) {
	for range n {
		decide(th, now)
		record(th, now, adaptive.Accepted)
	}
}

func TestFixedResetBoundary(t *testing.T) {
	// The window starts at the first event, 10s after the minute, so the
	// boundaries are first + n·1m, not whole minutes.
	first := t0.Add(10 * time.Second)
	tests := []struct {
		name         string
		at           time.Duration // after first
		wantRequests int64
		wantAccepts  int64
		wantStart    time.Time
	}{
		{"same instant", 0, 5, 2, first},
		{"end of first whole minute", 50 * time.Second, 5, 2, first},
		{"just before boundary", time.Minute - time.Nanosecond, 5, 2, first},
		{"at boundary", time.Minute, 0, 0, first.Add(time.Minute)},
		{"just after boundary", time.Minute + time.Nanosecond, 0, 0, first.Add(time.Minute)},
		{"just before second boundary", 2*time.Minute - time.Nanosecond, 0, 0, first.Add(time.Minute)},
		{"several intervals skipped", 5*time.Minute + 30*time.Second, 0, 0, first.Add(5 * time.Minute)},
		{"a year skipped", 365 * 24 * time.Hour, 0, 0, first.Add(365 * 24 * time.Hour)},
		{"earlier than first", -time.Hour, 5, 2, first},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			th := mustNew(t, adaptive.SREConfig{ResetInterval: time.Minute}, constRand(alwaysAllow))
			throttledAt(th, first, 3)
			acceptedAt(th, first, 2)
			req, acc := adaptive.Counts(th, first.Add(tc.at))
			if req != tc.wantRequests || acc != tc.wantAccepts {
				t.Errorf("got counts (%d, %d), want (%d, %d)", req, acc, tc.wantRequests, tc.wantAccepts)
			}
			if got, want := adaptive.WindowStart(th), tc.wantStart.UnixNano(); got != want {
				t.Errorf("got Start %v, want %v", time.Unix(0, got).UTC(), tc.wantStart)
			}
		})
	}
}

// TestFixedResetKeepsBoundaries checks that idle intervals do not move the
// boundaries: after an event 5m30s after the first, the window still ends
// at first + 6m.
func TestFixedResetKeepsBoundaries(t *testing.T) {
	first := t0.Add(10 * time.Second)
	th := mustNew(t, adaptive.SREConfig{}, constRand(alwaysAllow))
	throttledAt(th, first, 4)
	later := first.Add(5*time.Minute + 30*time.Second)
	throttledAt(th, later, 1)
	steps := []struct {
		at           time.Time
		wantRequests int64
	}{
		{later, 1},
		{first.Add(6*time.Minute - time.Nanosecond), 1},
		{first.Add(6 * time.Minute), 0},
	}
	for _, s := range steps {
		if req, _ := adaptive.Counts(th, s.at); req != s.wantRequests {
			t.Errorf("at first+%v: got %d requests, want %d", s.at.Sub(first), req, s.wantRequests)
		}
	}
}

// TestFixedResetBackwards checks that an event earlier than the window is
// counted in the current window.
func TestFixedResetBackwards(t *testing.T) {
	th := mustNew(t, adaptive.SREConfig{}, constRand(alwaysAllow))
	throttledAt(th, t0.Add(90*time.Second), 1) // window [t0+90s, t0+150s)
	throttledAt(th, t0, 1)
	if req, _ := adaptive.Counts(th, t0.Add(149*time.Second)); req != 2 {
		t.Errorf("got %d requests, want 2", req)
	}
	if req, _ := adaptive.Counts(th, t0.Add(150*time.Second)); req != 0 {
		t.Errorf("got %d requests after the boundary, want 0", req)
	}
}

func TestSlidingForgets(t *testing.T) {
	// WindowSize 10s, Bucket 1s. 1 request in the bucket starting at t0,
	// 2 at t0+1.5s, 3 at t0+2s (accepted), so buckets 0, 1, 2 hold 1, 2, 3.
	tests := []struct {
		name         string
		at           time.Duration // after t0
		wantRequests int64
		wantAccepts  int64
	}{
		{"within the last bucket", 2500 * time.Millisecond, 6, 3},
		{"just before the first bucket expires", 10*time.Second - time.Nanosecond, 6, 3},
		{"first bucket forgotten", 10 * time.Second, 5, 3},
		{"second bucket forgotten", 11 * time.Second, 3, 3},
		{"just before the last bucket expires", 12*time.Second - time.Nanosecond, 3, 3},
		{"all forgotten WindowSize after the last event", 12 * time.Second, 0, 0},
		{"long after", time.Hour, 0, 0},
		{"earlier than the newest bucket", -time.Hour, 6, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := adaptive.SREConfig{Sliding: true, WindowSize: 10 * time.Second, Bucket: time.Second}
			th := mustNew(t, cfg, constRand(alwaysAllow))
			throttledAt(th, t0, 1)
			throttledAt(th, t0.Add(1500*time.Millisecond), 2)
			acceptedAt(th, t0.Add(2*time.Second), 3)
			req, acc := adaptive.Counts(th, t0.Add(tc.at))
			if req != tc.wantRequests || acc != tc.wantAccepts {
				t.Errorf("got counts (%d, %d), want (%d, %d)", req, acc, tc.wantRequests, tc.wantAccepts)
			}
			if got, want := adaptive.P(th, t0.Add(tc.at)), formula(tc.wantRequests, tc.wantAccepts, 2); got != want {
				t.Errorf("got Probability %v, want %v", got, want)
			}
		})
	}
}

// TestSlidingGradual steps through time one bucket at a time and checks
// that p falls bucket by bucket as throttled history is forgotten.
func TestSlidingGradual(t *testing.T) {
	cfg := adaptive.SREConfig{Sliding: true, WindowSize: 4 * time.Second, Bucket: time.Second}
	th := mustNew(t, cfg, constRand(alwaysAllow))
	for i := range 4 { // 2 throttled requests in each of buckets 0..3
		throttledAt(th, t0.Add(time.Duration(i)*time.Second), 2)
	}
	for i, want := range []int64{8, 6, 4, 2, 0, 0} {
		now := t0.Add(time.Duration(3+i) * time.Second)
		req, _ := adaptive.Counts(th, now)
		if req != want {
			t.Errorf("at t0+%ds: got %d requests, want %d", 3+i, req, want)
		}
		if got, wantP := adaptive.P(th, now), formula(want, 0, 2); got != wantP {
			t.Errorf("at t0+%ds: got Probability %v, want %v", 3+i, got, wantP)
		}
	}
}

// TestSlidingRounding checks that a WindowSize that is not a multiple of
// Bucket is rounded up to whole buckets.
func TestSlidingRounding(t *testing.T) {
	cfg := adaptive.SREConfig{Sliding: true, WindowSize: 2500 * time.Millisecond, Bucket: time.Second}
	th := mustNew(t, cfg, constRand(alwaysAllow))
	throttledAt(th, t0, 1)
	if req, _ := adaptive.Counts(th, t0.Add(3*time.Second-time.Nanosecond)); req != 1 {
		t.Errorf("got %d requests just before 3 buckets, want 1", req)
	}
	if req, _ := adaptive.Counts(th, t0.Add(3*time.Second)); req != 0 {
		t.Errorf("got %d requests after 3 buckets, want 0", req)
	}
}

// TestSlidingEpochAligned checks that buckets are aligned to the Unix epoch,
// not to the first event, also before 1970: an event late in a bucket is
// forgotten less than WindowSize after it.
func TestSlidingEpochAligned(t *testing.T) {
	tests := []struct {
		name string
		base time.Time // a bucket boundary
	}{
		{"after 1970", t0},
		{"before 1970", time.Date(1969, 12, 31, 23, 0, 0, 0, time.UTC)},
		{"epoch", time.Unix(0, 0)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := adaptive.SREConfig{Sliding: true, WindowSize: 10 * time.Second, Bucket: time.Second}
			th := mustNew(t, cfg, constRand(alwaysAllow))
			throttledAt(th, tc.base.Add(900*time.Millisecond), 1)
			if req, _ := adaptive.Counts(th, tc.base.Add(10*time.Second-time.Nanosecond)); req != 1 {
				t.Errorf("got %d requests before the bucket expires, want 1", req)
			}
			if req, _ := adaptive.Counts(th, tc.base.Add(10*time.Second)); req != 0 {
				t.Errorf("got %d requests at base+10s, want 0", req)
			}
		})
	}
}
