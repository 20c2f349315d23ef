package adaptive

import (
	"strings"
	"testing"
	"time"
)

// TestPacerBinding: Binding names the part that binds the rate in each
// state of the Pacer, and says its figure.
func TestPacerBinding(t *testing.T) {
	refused := func(p *Pacer, ra time.Duration) {
		p.Decide(at(0), 0, 1)
		p.Record(at(time.Millisecond), Answer{Outcome: Throttled, Sent: at(0), RetryAfter: ra})
	}
	tests := []struct {
		name   string
		cfg    PacerConfig
		before func(p *Pacer)
		at     time.Duration
		part   string
		says   string
	}{
		{"new", PacerConfig{}, func(*Pacer) {}, 0, "slow-start", "slow start from 5/s"},
		{"slow start", PacerConfig{}, func(p *Pacer) { p.Decide(at(0), 0, 1) }, 2 * time.Second, "slow-start", "slow start: 20/s"},
		{"dark after a refusal", PacerConfig{}, func(p *Pacer) { refused(p, 0) }, 10 * time.Millisecond, "refusals", "one request at a time"},
		{"retry-after", PacerConfig{}, func(p *Pacer) { refused(p, 5*time.Second) }, time.Second, "retry-after", "nothing sent for 3.001s more"},
		{"curve", PacerConfig{}, func(p *Pacer) {
			refused(p, 0)
			p.Decide(at(time.Second), 0, 1)
			p.Record(at(time.Second+time.Millisecond), Answer{Outcome: Accepted, Sent: at(time.Second)})
		}, 2 * time.Second, "curve", "the rate refused 5/s"},
		{"advertised", PacerConfig{}, func(p *Pacer) {
			p.Decide(at(0), 0, 1)
			p.Record(at(time.Millisecond), Answer{Outcome: Accepted, Sent: at(0),
				Quota: []Quota{{Limit: 4, Remaining: 3, Reset: at(time.Second), Window: time.Second}}})
		}, 2 * time.Millisecond, "advertised", "advertised limit 1 of 1: 0.74/s (a window of 4 per 1s; share 0.25 of 2.96/s for everyone)"},
		{"known rate", PacerConfig{Rate: 9}, func(p *Pacer) { p.Decide(at(0), 0, 1) }, time.Second, "known-rate", "the known rate, 9/s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newTestPacer(t, tc.cfg)
			tc.before(p)
			part, says := p.Binding(at(tc.at))
			if part != tc.part || !strings.Contains(says, tc.says) {
				t.Errorf("got %q: %q, want %q saying %q", part, says, tc.part, tc.says)
			}
		})
	}
}
