package adaptive

import (
	"math"
	"testing"
	"time"
)

// slowPacer returns a Pacer that sent n requests, one every 50 ms from t0,
// none answered yet, after learning a latency of lat.
func slowPacer(t *testing.T, lat time.Duration, n int) *Pacer {
	t.Helper()
	p := newTestPacer(t, PacerConfig{StartRate: 20})
	p.Decide(at(0), 0, 1)
	p.Record(at(lat), Answer{Outcome: Accepted, Sent: at(0)})
	for i := 1; i < n; i++ {
		p.out++
		p.sent = unixNanos(at(lat))
	}
	return p
}

// TestPacerSlowAnswers: against a slow API the Pacer learns in time.
func TestPacerSlowAnswers(t *testing.T) {
	t.Run("slow start doubles once per latency", func(t *testing.T) {
		p := slowPacer(t, 2*time.Second, 1)
		got := p.curve(p.epoch + int64(2*time.Second))
		if want := 2 * 20.0; math.Abs(got-want) > 1e-9 {
			t.Errorf("rate 2 s into slow start at a 2 s latency: got %v, want %v", got, want)
		}
	})
	t.Run("a cut starts from the rate at the send", func(t *testing.T) {
		p := slowPacer(t, 2*time.Second, 1)
		sent := at(3 * time.Second)
		atSend := p.curve(unixNanos(sent))
		now := at(5 * time.Second)
		if p.curve(unixNanos(now)) <= 1.5*atSend {
			t.Fatalf("the curve did not climb while the answer was under way")
		}
		p.Record(now, Answer{Outcome: Throttled, Sent: sent})
		if math.Abs(p.ceil-atSend) > 1e-9 {
			t.Errorf("ceiling %v, want the rate when the refused request was sent, %v", p.ceil, atSend)
		}
	})
	t.Run("a slow API's first refusal cuts without a dark spell", func(t *testing.T) {
		p := slowPacer(t, 2*time.Second, 40)
		p.Record(at(3*time.Second), Answer{Outcome: Throttled, Sent: at(2 * time.Second)})
		if p.dark || !p.steady {
			t.Errorf("dark %v, steady %v; want a steady ceiling and no dark spell", p.dark, p.steady)
		}
		if got, want := p.curve(p.epoch+int64(p.recover())), p.ceil*(1-3*steadyMargin); math.Abs(got-want) > 1e-9 {
			t.Errorf("the curve flattens at %v, want %v (three hundredths below the ceiling)", got, want)
		}
	})
	t.Run("probes count from the cut", func(t *testing.T) {
		// A slow API dark after a cut, with 39 older requests under way.
		p := slowPacer(t, 2*time.Second, 40)
		now := at(3 * time.Second)
		p.dark, p.cutAt, p.probes, p.ceil, p.rate = true, unixNanos(now), 0, 20, 18
		p.next = unixNanos(now)
		if d := p.Decide(now.Add(10*time.Millisecond), 0, 1); d.Verdict != Send {
			t.Fatalf("first probe after the cut: got %+v, want Send though 39 older requests are under way", d)
		}
		if d := p.Decide(now.Add(time.Second), 0, 1); d.Verdict != Postpone {
			t.Errorf("a second probe while the first is under way: got %+v, want Postpone", d)
		}
		p.Record(now.Add(1500*time.Millisecond), Answer{Outcome: Throttled, Sent: now.Add(-time.Second)}) // older
		if p.probes != 1 {
			t.Errorf("probes %d after an older answer, want 1", p.probes)
		}
	})
	for _, c := range []struct {
		name       string
		sent       time.Duration
		retryAfter time.Duration
		blocks     bool
	}{
		{"a short Retry-After sent before the cut does not block", 2 * time.Second, 2 * time.Second, false},
		{"a long one does", 2 * time.Second, time.Minute, true},
		{"a short one sent since the cut does", 4 * time.Second, 3 * time.Second, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := slowPacer(t, 2*time.Second, 10)
			p.Record(at(3*time.Second), Answer{Outcome: Throttled, Sent: at(3 * time.Second)}) // the cut
			p.blocked = 0
			p.Record(at(5*time.Second), Answer{Outcome: Throttled, Sent: at(c.sent), RetryAfter: c.retryAfter})
			if got := p.blocked > unixNanos(at(5*time.Second)); got != c.blocks {
				t.Errorf("blocked until %v: got blocking %v, want %v", time.Unix(0, p.blocked), got, c.blocks)
			}
		})
	}
}
