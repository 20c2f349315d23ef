package adaptive

import (
	"math"
	"math/rand/v2"
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

// TestPacerAdvertisedTokens: answers advertise two fixed windows of a
// minute, 500 requests and 8,000 output tokens, each answer saying the
// tokens its request took (lognormal, median 20, known only from the
// answer, as an LLM API's output). Requests wait every millisecond; the
// answers come 100 ms late. The Pacer paces by the tighter limit, tokens
// at about 24 a request, 330 requests a minute: no refusal, and each
// window's tokens used but for the reserve and one request's spread. The
// same Pacer told the token limit but never what a request took of it
// (Used negative: a limit it cannot size, which does not bind) is
// refused by it.
func TestPacerAdvertisedTokens(t *testing.T) {
	for _, tc := range []struct {
		name        string
		reportUsed  bool
		maxRefused  int
		minTokenUse float64 // of each window after the first
	}{
		{"tokens reported", true, 0, 0.95},
		{"tokens not reported", false, 1 << 30, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const requests, tokens, window, latency = 500, 8000, time.Minute, 100 * time.Millisecond
			rng := rand.New(rand.NewPCG(1, 2))
			p := newTestPacer(t, PacerConfig{StartRate: 50})
			type pending struct {
				due time.Time
				a   Answer
			}
			var (
				queue            []pending
				usedReq, usedTok = map[int]int{}, map[int]int{} // by window
				refused          int
			)
			for ms := range 5 * 60 * 1000 {
				now := at(time.Duration(ms) * time.Millisecond)
				for len(queue) > 0 && !queue[0].due.After(now) {
					p.Record(now, queue[0].a)
					queue = queue[1:]
				}
				if p.Decide(now, len(queue), 1).Verdict != Send {
					continue
				}
				w := int(now.Sub(t0) / window)
				reset := t0.Add(time.Duration(w+1) * window)
				a := Answer{Outcome: Accepted, Sent: now}
				out := 0
				if usedReq[w] < requests && usedTok[w] < tokens {
					out = max(1, int(math.Round(20*math.Exp(0.6*rng.NormFloat64()))))
					usedReq[w]++
					usedTok[w] += out
				} else {
					a.Outcome = Throttled
					refused++
				}
				tok := Quota{Limit: tokens, Remaining: int64(max(tokens-usedTok[w], 0)), Window: window, Reset: reset, Used: -1}
				if tc.reportUsed && a.Outcome == Accepted {
					tok.Used = float64(out)
				}
				a.Quota = []Quota{{Limit: requests, Remaining: int64(requests - usedReq[w]), Window: window, Reset: reset}, tok}
				queue = append(queue, pending{due: now.Add(latency), a: a})
			}
			t.Logf("refused %d; tokens used by window %v, requests %v", refused, usedTok, usedReq)
			if refused > tc.maxRefused {
				t.Errorf("refused %d, want at most %d", refused, tc.maxRefused)
			}
			for w := 1; w < 5; w++ {
				if use := float64(usedTok[w]) / tokens; use < tc.minTokenUse {
					t.Errorf("window %d: %.1f %% of the tokens used (%d requests), want at least %.0f %%",
						w, 100*use, usedReq[w], 100*tc.minTokenUse)
				}
			}
			if !tc.reportUsed && refused < 3 {
				t.Errorf("tokens not reported: refused %d, want the refusals that sizing by tokens avoids", refused)
			}
		})
	}
}

// TestPacerAdvertisedEarlySends: a slow API (answers in 2 s) with a window
// of 20 a second told in X-RateLimit's headers (no Window; the Reset a
// second after the answer, as an epoch in whole seconds less a Date in
// whole seconds reads). The requests slow start sent before the first
// answer are the worker's too: their answers prove it alone on the window
// as soon as the second window's first answer comes back, and it paces the
// quota from then. Told of its sends only from the first answer on, it
// took a quarter of Remaining over the 3 s to the coarse Reset, and proved
// it alone only from the requests sent at that crawl.
func TestPacerAdvertisedEarlySends(t *testing.T) {
	p := newTestPacer(t, PacerConfig{})
	const limit, latency = 20, 2 * time.Second
	var queue []Answer
	used := map[int64]int64{}
	accepted := 0
	for ms := time.Duration(0); ms < 10*time.Second; ms += time.Millisecond {
		now := at(ms)
		for len(queue) > 0 && !queue[0].Received.After(now) {
			p.Record(queue[0].Received, queue[0])
			queue = queue[1:]
		}
		if p.Decide(now, 0, 1).Verdict != Send {
			continue
		}
		w := int64(ms / time.Second)
		a := Answer{Outcome: Throttled, Sent: now, Received: now.Add(latency)}
		if used[w] < limit {
			used[w]++
			a.Outcome = Accepted
			if ms >= 4*time.Second {
				accepted++
			}
		}
		a.Quota = []Quota{{Limit: limit, Remaining: limit - used[w], Reset: a.Received.Add(time.Second)}}
		queue = append(queue, a)
	}
	// From the 4th second to the 10th: the quota is 120.
	if want := 0.9 * limit * 6; float64(accepted) < want {
		t.Errorf("accepted %d from 4 s to 10 s, want at least %.0f (used by window %v)", accepted, want, used)
	}
}
