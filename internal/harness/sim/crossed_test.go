package sim_test

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/internal/harness/sim"
	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

var update = flag.Bool("update", false, "rewrite testdata/crossed.golden with the grid's verdicts")

// crossedGolden pins which target each cell of the crossed grid meets.
const crossedGolden = "testdata/crossed.golden"

// TestCrossedGrid runs the crossed grid and compares, target by target,
// which cells meet their targets with the pinned verdicts: a change that
// moves any cell across a target fails here until the verdicts are
// rewritten (go test ./internal/harness/sim -run TestCrossedGrid -update)
// and the change is judged on the whole grid. Every cell conserves its
// elements.
func TestCrossedGrid(t *testing.T) {
	rs, err := sim.CrossedSuite().Run()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, r := range rs {
		o, m := r.Outcomes, r.Metrics
		if !o.Balanced() || m.Accepted+m.BackendRejected+m.TimedOut != m.Sent {
			t.Errorf("%s: got outcomes %+v, %d sent, %d accepted, %d rejected, %d timed out; want every element counted once",
				r.Case, o, m.Sent, m.Accepted, m.BackendRejected, m.TimedOut)
		}
		var vs []string
		for _, c := range r.Checks {
			mark := "✓"
			if !c.Met {
				mark = "✗"
			}
			vs = append(vs, mark+" "+c.Goal)
		}
		fmt.Fprintf(&b, "%s: %s\n", r.Case, strings.Join(vs, "; "))
	}
	got := b.String()
	if *update {
		if err := os.WriteFile(crossedGolden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(crossedGolden)
	if err != nil {
		t.Fatalf("%v (write it with -update)", err)
	}
	gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
	for i := range max(len(gl), len(wl)) {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			t.Errorf("cell %d:\n got %s\nwant %s", i, g, w)
		}
	}
	if t.Failed() {
		t.Log("a target moved: judge the change on the whole grid (make matrix), then rewrite the verdicts with -update")
	}
}

// TestHeadersRead: each family tells the quota as the quota server sends
// it and package clientcall reads it, its reset counted from the answer
// and rounded as the family rounds.
func TestHeadersRead(t *testing.T) {
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return start.Add(d) }
	// A window of 20 a second, 12 left, ending at 10.6 s; the answer sent at 10.25 s.
	s := sim.QuotaState(20, 20, 12, 10600*time.Millisecond, time.Second)
	tests := []struct {
		h    sim.Headers
		want adaptive.Quota
	}{
		{sim.HeadersIETF, adaptive.Quota{Limit: 20, Remaining: 12, Window: time.Second, Reset: at(11250 * time.Millisecond)}},
		{sim.HeadersX, adaptive.Quota{Limit: 20, Remaining: 12, Reset: at(11250 * time.Millisecond)}},
		{sim.HeadersOpenAI, adaptive.Quota{Limit: 20, Remaining: 12, Reset: at(10600 * time.Millisecond), Refill: true}},
	}
	for _, tc := range tests {
		t.Run(tc.h.String(), func(t *testing.T) {
			if got := sim.ReadHeaders(tc.h, s, start, 10250*time.Millisecond); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
	// An answer after the reset: IETF says t=0, the reset at the answer.
	late := sim.ReadHeaders(sim.HeadersIETF, s, start, 12*time.Second)
	if !late.Reset.Equal(at(12 * time.Second)) {
		t.Errorf("IETF, answered after the reset: got Reset %v, want the answer's time", late.Reset.Sub(start))
	}
}
