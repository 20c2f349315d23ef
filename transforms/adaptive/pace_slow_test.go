package adaptive

import (
	"fmt"
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
	t.Run("the first answer does not halve slow start's rate", func(t *testing.T) {
		p := newTestPacer(t, PacerConfig{StartRate: 20})
		p.Decide(at(0), 0, 1)
		now := at(2 * time.Second)
		before := p.curve(unixNanos(now)) // doubling once a second while the latency is unknown
		p.Record(now, Answer{Outcome: Accepted, Sent: at(0)})
		if got := p.curve(unixNanos(now)); math.Abs(got-before) > 1e-6*before {
			t.Errorf("rate when a 2 s latency is learnt: got %v, want %v as before", got, before)
		}
		if got, want := p.curve(unixNanos(now.Add(2*time.Second))), 2*before; math.Abs(got-want) > 1e-6*want {
			t.Errorf("rate a latency later: got %v, want %v", got, want)
		}
	})
	t.Run("a cut starts from the rate at the send", func(t *testing.T) {
		p := slowPacer(t, 2*time.Second, 1)
		p.okSent = 0 // none accepted
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
	t.Run("slow start's ceiling is the rate of the latest accepted send", func(t *testing.T) {
		p := slowPacer(t, 2*time.Second, 1)
		ok, sent := at(2950*time.Millisecond), at(3*time.Second)
		p.Record(ok.Add(2*time.Second), Answer{Outcome: Accepted, Sent: ok})
		want := p.curve(unixNanos(ok))
		p.Record(sent.Add(2*time.Second), Answer{Outcome: Throttled, Sent: sent})
		if math.Abs(p.ceil-want) > 1e-9 {
			t.Errorf("ceiling %v, want the rate when the latest accepted request was sent, %v", p.ceil, want)
		}
		if got, want := p.margin(), acceptedMargins*steadyMargin; !p.okCeil || math.Abs(got-want) > 1e-12 {
			t.Errorf("margin %v below an accepted rate (%v), want %v", got, p.okCeil, want)
		}
	})
	// A refusal that comes back as slowly as the accepted answers says the
	// latest accepted send was just before it; one a gateway answered at
	// once was sent a latency after the latest accepted send it knows of,
	// and slow start has doubled since: the refused rate is the ceiling.
	for _, tc := range []struct {
		took  time.Duration
		share float64 // of the rate at the refused send
	}{
		{2 * time.Second, 1 - steadyBand},
		{time.Millisecond, 1},
	} {
		t.Run(fmt.Sprintf("slow start's ceiling after a refusal that took %v", tc.took), func(t *testing.T) {
			p := slowPacer(t, 2*time.Second, 1) // the latest accepted send at 0
			sent := at(3 * time.Second)
			r := p.curve(unixNanos(sent))
			p.Record(sent.Add(tc.took), Answer{Outcome: Throttled, Sent: sent, Received: sent.Add(tc.took)})
			if want := tc.share * r; math.Abs(p.ceil-want) > 0.01*want || p.okCeil {
				t.Errorf("ceiling %v (accepted %v), want about %v, %v of the rate at the send, not an accepted rate",
					p.ceil, p.okCeil, want, tc.share)
			}
		})
	}
	t.Run("a slow API's first refusal cuts without a dark spell", func(t *testing.T) {
		p := slowPacer(t, 2*time.Second, 40)
		p.Record(at(3*time.Second), Answer{Outcome: Throttled, Sent: at(2 * time.Second)})
		if p.dark || !p.steady {
			t.Errorf("dark %v, steady %v; want a steady ceiling and no dark spell", p.dark, p.steady)
		}
		if got, want := p.curve(p.epoch+int64(p.recover())), p.ceil*(1-refusedMargins*steadyMargin); math.Abs(got-want) > 1e-9 {
			t.Errorf("the curve flattens at %v, want %v (a slow API's margin below the ceiling)", got, want)
		}
	})
	// A refusal more than a tenth below a slow API's steady ceiling: while
	// the backend accepts requests sent since the cut, the ceiling was too high,
	// and the refused rate is the steady ceiling now, with no dark spell;
	// when it accepts nothing (an outage), a dark spell.
	for _, accepting := range []bool{true, false} {
		t.Run(fmt.Sprintf("a refusal below a slow API's steady ceiling, answers accepted %v", accepting), func(t *testing.T) {
			// A deep cut (Beta 0.7): the next sends go well below the ceiling.
			p := newTestPacer(t, PacerConfig{StartRate: 20, Beta: 0.7})
			p.Decide(at(0), 0, 1)
			p.Record(at(2*time.Second), Answer{Outcome: Accepted, Sent: at(0)})
			p.Record(at(3*time.Second), Answer{Outcome: Throttled, Sent: at(2 * time.Second)})
			first := p.ceil
			if accepting { // a request sent after the cut, accepted
				p.Record(at(5500*time.Millisecond), Answer{Outcome: Accepted, Sent: at(3500 * time.Millisecond)})
			}
			sent, now := at(4*time.Second), at(6*time.Second)
			r := min(p.curve(unixNanos(sent)), p.curve(unixNanos(now))) // the rate at the send
			if r >= first*(1-steadyBand) {
				t.Fatalf("rate at the second send %v, want more than a tenth below the ceiling %v", r, first)
			}
			p.Record(now, Answer{Outcome: Throttled, Sent: sent})
			// About r: the answer's latency moves the curve's time scale a little.
			if p.dark == accepting || p.steady != accepting || math.Abs(p.ceil-r) > 0.01*r {
				t.Errorf("dark %v, steady %v, ceiling %v; want dark %v, steady %v, the ceiling at about the refused rate %v",
					p.dark, p.steady, p.ceil, !accepting, accepting, r)
			}
		})
	}
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
		{"a short Retry-After sent before the cut blocks", 2 * time.Second, 2 * time.Second, true},
		{"a long one does", 2 * time.Second, time.Minute, true},
		{"a short one sent since the cut does", 4 * time.Second, 3 * time.Second, true},
		{"one of a second or less does not (it is rounded up)", 4 * time.Second, time.Second, false},
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

// TestPacerForgivesLateness: under a steady ceiling a request let through
// a little after its slot spaces the next one from its slot, up to half the
// flat's margin.
func TestPacerForgivesLateness(t *testing.T) {
	for _, c := range []struct {
		name   string
		steady bool
		late   time.Duration
		from   func(spacing time.Duration) time.Duration // when the next slot is spaced from, after the slot
	}{
		{"steady, a little late", true, 200 * time.Microsecond, func(time.Duration) time.Duration { return 0 }},
		{"steady, later than half the margin", true, 5 * time.Millisecond,
			func(s time.Duration) time.Duration {
				return 5*time.Millisecond - time.Duration(float64(s)*refusedMargins*steadyMargin/2)
			}},
		{"not steady", false, 200 * time.Microsecond, func(time.Duration) time.Duration { return 200 * time.Microsecond }},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := newTestPacer(t, PacerConfig{Rate: 20})
			p.Decide(at(0), 0, 1)
			p.steady, p.lat = c.steady, int64(2*time.Second) // a slow API's largest margin
			slot := at(time.Second)
			p.next, p.last = unixNanos(slot), unixNanos(slot)
			if d := p.Decide(slot.Add(c.late), 0, 1); d.Verdict != Send {
				t.Fatalf("at the slot: got %+v, want Send", d)
			}
			spacing := time.Duration(1e9 / p.rate)
			if got, want := time.Unix(0, p.next).Sub(slot), c.from(spacing)+spacing; (got - want).Abs() > time.Microsecond {
				t.Errorf("next slot after the slot: got %v, want %v", got, want)
			}
		})
	}
}

// TestPacerJitter: a slow API's refusals at its steady ceiling, rarer than
// jitterShare of the recent answers, neither cut nor lower the ceiling;
// a refusal more often, too soon after a cut, or from a fast API does.
func TestPacerJitter(t *testing.T) {
	tests := []struct {
		name     string
		lat      time.Duration
		accepted int // answers accepted since the cut before the first refusal
		refusals int
		wantCuts int
	}{
		{"one refusal in a hundred answers", 2 * time.Second, 99, 1, 0},
		{"one refusal in ten answers", 2 * time.Second, 9, 1, 0},
		{"a refusal before any answer since the cut", 2 * time.Second, 0, 1, 1},
		{"two refusals in fifty answers", 2 * time.Second, 48, 2, 1},
		{"three refusals in two hundred answers", 2 * time.Second, 197, 3, 1},
		{"a fast API", 40 * time.Millisecond, 99, 1, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := slowPacer(t, tc.lat, 40)
			now := at(tc.lat + time.Second)
			p.Record(now, Answer{Outcome: Throttled, Sent: now.Add(-tc.lat)}) // the cut
			if tc.lat <= steadyLatency {                                      // a fast API's first refusal is not steady yet
				p.steady, p.dark = true, false
			}
			if !p.steady || p.dark {
				t.Fatalf("after the cut: steady %v, dark %v; want steady, not dark", p.steady, p.dark)
			}
			cutAt, ceil := p.cutAt, p.ceil
			// Sends on the flat, a recovery later, answered a latency after.
			send := now.Add(p.recover())
			for range tc.accepted {
				p.Record(send.Add(tc.lat), Answer{Outcome: Accepted, Sent: send})
				send = send.Add(50 * time.Millisecond)
			}
			cuts := 0
			for range tc.refusals {
				p.Record(send.Add(tc.lat), Answer{Outcome: Throttled, Sent: send})
				if p.cutAt != cutAt {
					cuts++
					cutAt = p.cutAt
				}
				send = send.Add(50 * time.Millisecond)
			}
			if cuts != tc.wantCuts {
				t.Errorf("got %d cuts, want %d", cuts, tc.wantCuts)
			}
			if tc.wantCuts == 0 && p.ceil != ceil {
				t.Errorf("ceiling %v after a refusal kept as jitter, want %v as before", p.ceil, ceil)
			}
		})
	}
}
