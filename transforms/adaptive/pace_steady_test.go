package adaptive

import (
	"testing"
	"time"
)

// strictRun drives p for secs seconds against a strict limiter that
// accepts one request every gap and refuses any sent before its slot, with
// a request waiting every millisecond, and returns the refusals after
// warm, and whether the Pacer ended with a steady ceiling.
func strictRun(t *testing.T, p *Pacer, gap time.Duration, secs, warm int) (refused int, steady bool) {
	t.Helper()
	lim := strictGCRA(gap)
	for ms := range secs * 1000 {
		now := at(time.Duration(ms) * time.Millisecond)
		if p.Decide(now, 0, 1).Verdict != Send {
			continue
		}
		a := Answer{Outcome: Accepted, Sent: now}
		if !lim(now) {
			a.Outcome = Throttled
			if ms >= warm*1000 {
				refused++
			}
		}
		p.Record(now, a)
	}
	return refused, p.steady
}

// TestPacerSteadyCeiling: against a strict limiter, congestion comes again
// and again at the same rate; the Pacer marks the ceiling steady, flattens
// below it and probes above it half as often. Without the steady ceiling
// the Pacer was refused 18 to 20 times in the minute (on every climb back,
// about every 3 s); with it, 11 or 12.
func TestPacerSteadyCeiling(t *testing.T) {
	for _, gap := range []time.Duration{100 * time.Millisecond, 50 * time.Millisecond, 7 * time.Millisecond} {
		p := newTestPacer(t, PacerConfig{})
		refused, steady := strictRun(t, p, gap, 70, 10)
		if !steady {
			t.Errorf("gap %v: the ceiling is not steady after 70 s", gap)
		}
		if refused > 14 {
			t.Errorf("gap %v: %d refused in the last 60 s, want at most 14", gap, refused)
		}
	}
}
