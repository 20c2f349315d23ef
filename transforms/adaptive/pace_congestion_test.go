package adaptive

import (
	"testing"
	"time"
)

// limiterModel says whether a request arriving at now is accepted.
type limiterModel func(now time.Time) bool

// steppedBucket is a token bucket holding burst tokens, refilled by
// rate × step every step: the quota server's default limiter.
func steppedBucket(rate float64, burst int, step time.Duration) limiterModel {
	tokens, filled := float64(burst), at(0)
	return func(now time.Time) bool {
		for !filled.Add(step).After(now) {
			filled = filled.Add(step)
			tokens = min(float64(burst), tokens+rate*step.Seconds())
		}
		if tokens < 1 {
			return false
		}
		tokens--
		return true
	}
}

// strictGCRA accepts one request every gap and refuses any sent before
// its slot.
func strictGCRA(gap time.Duration) limiterModel {
	var next time.Time
	return func(now time.Time) bool {
		if now.Before(next) {
			return false
		}
		next = now.Add(gap)
		return true
	}
}

// slowRun drives p for d with a request waiting every millisecond against
// lim, each answer coming back lat after its send (in send order), and
// returns the refusals.
func slowRun(p *Pacer, lim limiterModel, lat, d time.Duration) (refused int) {
	var q []Answer
	for ms := time.Duration(0); ms < d; ms += time.Millisecond {
		now := at(ms)
		for len(q) > 0 && !q[0].Received.After(now) {
			p.Record(q[0].Received, q[0])
			q = q[1:]
		}
		if p.Decide(now, 0, 1).Verdict != Send {
			continue
		}
		a := Answer{Outcome: Accepted, Sent: now, Received: now.Add(lat)}
		if !lim(now) {
			a.Outcome = Throttled
			refused++
		}
		q = append(q, a)
	}
	return refused
}

// TestPacerFirstCongestion: a slow API's limiter with a burst (a token
// bucket) lets slow start climb past its rate before the first refusal
// comes back; the answers to the requests under way then say how many of
// them it accepts, and the ceiling is that rate within a latency, not a cut
// a latency at a time. A strict limiter accepts every other request above
// its rate, half of it, and keeps the ceiling of its first refusal.
func TestPacerFirstCongestion(t *testing.T) {
	const limit = 20.0
	for _, tc := range []struct {
		name     string
		lim      limiterModel
		min, max float64 // the ceiling after 20 s
		refused  int     // at most, in 20 s
	}{
		// Without the measure: a ceiling of 26.5 after 20 s, 159 refused.
		{"stepped token bucket", steppedBucket(limit, 20, 100*time.Millisecond), limit * 0.97, limit * 1.05, 100},
		// With the measure taken for a strict limiter's rate: 13.
		{"strict GCRA", strictGCRA(time.Second / limit), limit * 0.95, limit * 1.05, 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newTestPacer(t, PacerConfig{})
			refused := slowRun(p, tc.lim, 2*time.Second, 20*time.Second)
			if p.ceil < tc.min || p.ceil > tc.max {
				t.Errorf("ceiling after 20 s: got %.2f, want within [%.2f, %.2f] (%d refused)", p.ceil, tc.min, tc.max, refused)
			}
			if refused > tc.refused {
				t.Errorf("refused in 20 s: got %d, want at most %d", refused, tc.refused)
			}
			if !p.con.done || p.con.sends != nil {
				t.Errorf("the measure did not end and let its log go (done %v)", p.con.done)
			}
		})
	}
}
