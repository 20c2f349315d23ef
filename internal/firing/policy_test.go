package firing

import (
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

func TestNewPolicy(t *testing.T) {
	for _, c := range []struct {
		name string
		s    PolicySettings
		want string // the policy's type, or "error"
	}{
		{name: "paced", s: PolicySettings{Paced: true}, want: "pacer"},
		{name: "paced, groups and a known rate", s: PolicySettings{Paced: true, Groups: 4, Rate: 10}, want: "pacer"},
		{name: "paced, shared", s: PolicySettings{Paced: true, Shared: true}, want: "shared"},
		{name: "sre", s: PolicySettings{SRE: adaptive.SREConfig{K: 2}}, want: "sre"},
		{name: "sre postponing", s: PolicySettings{SRE: adaptive.SREConfig{K: 2}, Postpone: time.Second}, want: "sre"},
		{name: "sre, shared", s: PolicySettings{Shared: true}, want: "shared"},
		{name: "sre, negative K", s: PolicySettings{SRE: adaptive.SREConfig{K: -1}}, want: "error"},
		{name: "sre, negative postpone", s: PolicySettings{Postpone: -time.Second}, want: "error"},
		{name: "paced, negative groups", s: PolicySettings{Paced: true, Groups: -1}, want: "pacer"},
		{name: "paced, negative rate", s: PolicySettings{Paced: true, Rate: -1}, want: "error"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := NewPolicy(c.s)
			got := "error"
			if err == nil {
				switch p.(type) {
				case *adaptive.Pacer:
					got = "pacer"
				case *adaptive.SRE:
					got = "sre"
				default:
					got = "shared"
				}
			}
			if got != c.want {
				t.Errorf("NewPolicy(%+v) made a %s (err %v), want a %s", c.s, got, err, c.want)
			}
		})
	}
}

// The SRE rule drawing from Rand rejects by it; the pacer at a known rate
// spaces its sends at that rate from the start.
func TestNewPolicyDecides(t *testing.T) {
	start := time.Unix(1000, 0)
	sre, err := NewPolicy(PolicySettings{SRE: adaptive.SREConfig{K: 2}, Rand: func() float64 { return 0 }})
	if err != nil {
		t.Fatal(err)
	}
	// The first request: p = 0, sent; throttled. The second: p = 1/2 and
	// r = 0 rejects.
	if d := sre.Decide(start, 0, 1); d.Verdict != adaptive.Send {
		t.Errorf("SRE, first request: got verdict %v, want Send", d.Verdict)
	}
	sre.Record(start, adaptive.Answer{Outcome: adaptive.Throttled})
	if d := sre.Decide(start, 0, 1); d.Verdict != adaptive.Reject {
		t.Errorf("SRE after a throttled answer, r = 0: got verdict %v, want Reject", d.Verdict)
	}
	pacer, err := NewPolicy(PolicySettings{Paced: true, Rate: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got := pacer.Budget(start, start.Add(time.Second)); got < 1 || got > 11 {
		t.Errorf("pacer at 10/s: Budget over a second = %d, want 1 to 11", got)
	}
}
