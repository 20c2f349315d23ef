package adaptive

import (
	"testing"
	"time"
)

// TestPacerAdvertised: a Pacer whose answers advertise a fixed window of 60
// requests a minute, with a request waiting every millisecond and answers
// 100 ms late, spreads each window's quota over it instead of learning the
// quota from refusals: no refusal, and each window used but for its
// reserve (a hundredth). The same Pacer without the advertisement is
// refused on its probes, window after window.
func TestPacerAdvertised(t *testing.T) {
	for _, tc := range []struct {
		name       string
		advertised bool
		maxRefused int
		minUsed    int // in each window after the first
	}{
		{"advertised", true, 0, 59},
		{"not advertised", false, 1 << 30, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const quota, window, latency = 60, time.Minute, 100 * time.Millisecond
			p := newTestPacer(t, PacerConfig{StartRate: 50})
			type pending struct {
				sent, due time.Time
				a         Answer
			}
			var (
				queue   []pending
				used    = map[int]int{} // by window
				refused int
			)
			for ms := range 4 * 60 * 1000 {
				now := at(time.Duration(ms) * time.Millisecond)
				for len(queue) > 0 && !queue[0].due.After(now) {
					p.Record(now, queue[0].a)
					queue = queue[1:]
				}
				if p.Decide(now, 0, 1).Verdict != Send {
					continue
				}
				w := int(now.Sub(t0) / window)
				a := Answer{Outcome: Accepted, Sent: now}
				if used[w] < quota {
					used[w]++
				} else {
					a.Outcome, a.RetryAfter = Throttled, t0.Add(time.Duration(w+1)*window).Sub(now)
					refused++
				}
				if tc.advertised {
					a.Quota = []Quota{{Limit: quota, Remaining: int64(quota - used[w]), Window: window,
						Reset: t0.Add(time.Duration(w+1) * window)}}
				}
				queue = append(queue, pending{sent: now, due: now.Add(latency), a: a})
			}
			if refused > tc.maxRefused {
				t.Errorf("refused %d, want at most %d", refused, tc.maxRefused)
			}
			for w := 1; w < 4; w++ {
				if used[w] < tc.minUsed {
					t.Errorf("window %d: %d used, want at least %d", w, used[w], tc.minUsed)
				}
			}
			// Held while the limit binds: it has not climbed away, to burst
			// if the limit let go.
			if end := p.curve(unixNanos(at(4 * time.Minute))); tc.advertised && end > 100 {
				t.Errorf("the curve's rate at the end: %v, want at most twice slow start's 50/s (unheld: 10^12)", end)
			}
			if !tc.advertised && refused < 3 {
				t.Errorf("not advertised: refused %d, want the refusals the advertisement avoids", refused)
			}
		})
	}
}
