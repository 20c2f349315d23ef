package adaptive

import (
	"testing"
	"time"
)

// TestAdvertisedRateUnwindowed: a limit advertised as a window of 20 a
// second whose Remaining does not count one (a strict limiter telling its
// burst: 0 after every request, each accepted; a server allowing more
// than it tells: 0 after the tenth request of a second, the rest accepted)
// is found out from the worker's own accepted requests within a second,
// and its ceiling is then the advertised rate, Limit less the reserve
// over the window: before, Remaining 0 held the worker to one request at
// each Reset. A true window, even used up and refusing, never is; nor is
// anything without the answers' outcomes (Observe); and company seen
// after takes the verdict back.
func TestAdvertisedRateUnwindowed(t *testing.T) {
	type answer struct {
		rem int64
		o   Outcome
	}
	// every 40 ms for 3 s, by the send's place in its second
	strict := func(int) answer { return answer{0, Accepted} }
	lying := func(k int) answer { return answer{max(9-int64(k), 0), Accepted} }
	window := func(k int) answer {
		if k < 20 {
			return answer{19 - int64(k), Accepted}
		}
		return answer{0, Throttled}
	}
	tests := []struct {
		name     string
		answers  func(k int) answer
		outcomes bool
		want     bool
	}{
		{"a strict limiter telling its burst", strict, true, true},
		{"a server telling less than it allows", lying, true, true},
		{"a true window, used up", window, true, false},
		{"a strict limiter, outcomes not told", strict, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := newTestAdvertised(t, AdvertisedRateConfig{})
			for i := range 75 {
				s := at(time.Duration(i) * 40 * time.Millisecond)
				q.Sent(s, 1)
				a := tc.answers(i % 25)
				qa := Quota{Limit: 20, Remaining: a.rem, Reset: s.Add(time.Second), Window: time.Second}
				if tc.outcomes {
					q.observe(s, s, qa, a.o)
				} else {
					q.Observe(s, s, qa)
				}
			}
			end := at(3 * time.Second)
			if got := q.unwindowed > 0; got != tc.want {
				t.Fatalf("not a window: got %v, want %v", got, tc.want)
			}
			if !tc.want {
				return
			}
			if got, want := q.Rate(end), 19.8; !near(got, want) {
				t.Errorf("Rate: got %v, want %v", got, want)
			}
			// Company: Remaining falls by more than the worker's own request.
			q.Sent(end, 1)
			q.observe(end, end, Quota{Limit: 20, Remaining: 15, Reset: end.Add(time.Second), Window: time.Second}, Accepted)
			next := end.Add(50 * time.Millisecond)
			q.Sent(next, 1)
			q.observe(next, next, Quota{Limit: 20, Remaining: 10, Reset: end.Add(time.Second), Window: time.Second}, Accepted)
			if q.unwindowed != 0 {
				t.Errorf("company seen: still not a window")
			}
		})
	}
}
