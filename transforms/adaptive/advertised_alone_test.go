package adaptive

import (
	"fmt"
	"testing"
	"time"
)

// inWholeSeconds advertises a quota as IETF draft-8's headers tell it: its
// window in whole seconds, and its Reset in whole seconds rounded up from
// the answer (here from the request's arrival, a tenth of a second
// before). A bucket's Reset (when it is full again) is told the same way,
// and Refill is not: a bucket in a window's headers.
type inWholeSeconds struct {
	quotaServer
	window time.Duration
}

func (w *inWholeSeconds) take(d time.Duration) (bool, Quota) {
	ok, q := w.quotaServer.take(d)
	left := max(q.Reset.Sub(at(d)), 0)
	if t := left.Truncate(time.Second); t < left {
		left = t + time.Second
	}
	q.Reset, q.Window, q.Refill = at(d+left), w.window, false
	return ok, q
}

// TestAdvertisedRateAloneShortWindow: a worker alone on a window of 20 a
// second whose Reset is told in whole seconds (always "in a second") proves
// it is alone, from Remaining falling by exactly its own requests, and
// paces the Limit over the window: without the proof it took a quarter of
// Remaining over the coarse second to its Reset (about a fifth of the
// quota). Eight workers never prove it, on the window or on a bucket in
// its headers (whose refill can make up for the others' requests), and
// waste nothing more.
func TestAdvertisedRateAloneShortWindow(t *testing.T) {
	window := func() quotaServer {
		return &inWholeSeconds{&quotaWindow{limit: 20, window: time.Second}, time.Second}
	}
	bucket := func() quotaServer {
		return &inWholeSeconds{&quotaBucket{limit: 20, window: time.Second, tokens: 20}, time.Second}
	}
	tests := []struct {
		name     string
		server   func() quotaServer
		workers  int
		maxWaste float64
		minUsed  float64
	}{
		{"window", window, 1, 0.01, 0.9},
		{"window", window, 8, 0.02, 0.5},
		{"bucket in a window's headers", bucket, 1, 0.01, 0.5},
		{"bucket in a window's headers", bucket, 8, 0.02, 0.8},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s, %d workers", tc.name, tc.workers), func(t *testing.T) {
			m := quotaModel{server: tc.server(), workers: tc.workers, length: 2 * time.Minute, seed: 1}
			f := m.simulate(t)
			used, waste := f.worst()
			t.Logf("waste %.2f %% (%d of %d), used %.3f (by minute %.3f)", 100*waste, f.refused, f.sent, used, f.used)
			if waste > tc.maxWaste {
				t.Errorf("waste: got %.4f, want at most %v", waste, tc.maxWaste)
			}
			if used < tc.minUsed {
				t.Errorf("quota used: got %.4f, want at least %v", used, tc.minUsed)
			}
		})
	}
}

// TestAdvertisedRateAloneProof: the pairs of answered sends that prove a
// worker alone, or show company, answered in any order.
func TestAdvertisedRateAloneProof(t *testing.T) {
	type answer struct {
		sent time.Duration // a send every 100 ms, each answered
		rem  int64
	}
	// Sends every 100 ms on a window of 20 a second beginning at whole
	// seconds: 10 a window, Remaining 19 down to 10 in each.
	alone := func(windows int) []answer {
		var as []answer
		for i := range 10 * windows {
			as = append(as, answer{time.Duration(i) * 100 * time.Millisecond, int64(19 - i%10)})
		}
		return as
	}
	reversed := func(as []answer) []answer {
		out := make([]answer, len(as))
		for i, a := range as {
			out[len(as)-1-i] = a
		}
		return out
	}
	company := alone(3)
	for i := range company {
		if i%10 == 5 {
			for j := i; j < i+5; j++ {
				company[j].rem-- // someone else took one, in the middle of each window
			}
		}
	}
	tests := []struct {
		name    string
		answers []answer
		want    bool
	}{
		{"one window", alone(1), true},
		{"three windows", alone(3), true},
		{"three windows, answered last first", reversed(alone(3)), true},
		{"someone else in each window", company, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := newTestAdvertised(t, AdvertisedRateConfig{})
			for i := range tc.answers {
				q.Sent(at(time.Duration(i)*100*time.Millisecond), 1)
			}
			end := at(time.Duration(len(tc.answers)) * 100 * time.Millisecond)
			for _, a := range tc.answers {
				q.Observe(end, at(a.sent), Quota{Limit: 20, Remaining: a.rem, Reset: end.Add(time.Second), Window: time.Second})
			}
			if q.alone != tc.want {
				t.Errorf("alone: got %v, want %v", q.alone, tc.want)
			}
			if got, want := q.Rate(end), 19.8; tc.want && !near(got, want) {
				t.Errorf("Rate alone: got %v, want %v", got, want)
			}
		})
	}
}
