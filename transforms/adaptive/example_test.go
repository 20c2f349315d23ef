package adaptive_test

import (
	"fmt"
	"time"

	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// A backend that accepts the first two requests and then reports overload
// on every request. The random source is fixed at 0.5, so a request is
// rejected locally once p exceeds 0.5; rejected requests still count, and
// after the one-minute window resets, requests flow again.
func ExampleSRE() {
	sre, err := adaptive.NewSRE(adaptive.SREConfig{K: 2}, func() float64 { return 0.5 }, 0)
	if err != nil {
		panic(err)
	}
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 12 {
		d := sre.Decide(now, 0, 1)
		if d.Verdict == adaptive.Send {
			outcome := adaptive.Throttled
			if i < 2 {
				outcome = adaptive.Accepted
			}
			sre.Record(now, adaptive.Answer{Outcome: outcome, Sent: now})
		}
		fmt.Printf("request %2d: p=%.3f send=%v\n", i, d.Probability, d.Verdict == adaptive.Send)
		now = now.Add(time.Second)
	}

	now = now.Add(time.Minute)
	d := sre.Decide(now, 0, 1)
	fmt.Printf("a minute later: p=%.3f send=%v\n", d.Probability, d.Verdict == adaptive.Send)
	// Output:
	// request  0: p=0.000 send=true
	// request  1: p=0.000 send=true
	// request  2: p=0.000 send=true
	// request  3: p=0.000 send=true
	// request  4: p=0.000 send=true
	// request  5: p=0.167 send=true
	// request  6: p=0.286 send=true
	// request  7: p=0.375 send=true
	// request  8: p=0.444 send=true
	// request  9: p=0.500 send=true
	// request 10: p=0.545 send=false
	// request 11: p=0.583 send=false
	// a minute later: p=0.000 send=true
}

// A Pacer in front of a backend that accepts 20 requests a second and
// answers 429 to the rest. Requests are attempted every 10 ms; the Pacer
// sends them at a rate that starts at 5 a second and doubles every second
// until the backend first refuses one, then cuts the rate and postpones
// the others to their slot, so that at most one request a second is
// refused once it has found the backend's rate. Time is injected, so the run is deterministic.
func ExamplePacer() {
	p, err := adaptive.NewPacer(adaptive.PacerConfig{})
	if err != nil {
		panic(err)
	}
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var next time.Time // the backend accepts one request every 50 ms
	for s := range 6 {
		sent, refused := 0, 0
		for i := range 100 {
			now := start.Add(time.Duration(s)*time.Second + time.Duration(i)*10*time.Millisecond)
			d := p.Decide(now, 0, 1)
			if d.Verdict != adaptive.Send {
				continue // adaptive.Postpone: ask again at d.RetryAt
			}
			sent++
			a := adaptive.Answer{Outcome: adaptive.Accepted, Sent: now}
			if now.Before(next) {
				a.Outcome = adaptive.Throttled
				refused++
			} else {
				next = now.Add(50 * time.Millisecond)
			}
			p.Record(now, a)
		}
		fmt.Printf("second %d: sent %2d, refused %d\n", s, sent, refused)
	}
	// Output:
	// second 0: sent  7, refused 0
	// second 1: sent 13, refused 0
	// second 2: sent 20, refused 1
	// second 3: sent 20, refused 1
	// second 4: sent 20, refused 0
	// second 5: sent 20, refused 0
}

// A Ceiling against a server that queues: while the answers take their
// usual second, the limit on calls under way doubles; once they wait in
// the server's queue, it shrinks.
func ExampleCeiling() {
	c, err := adaptive.NewCeiling(adaptive.CeilingConfig{Max: 256})
	if err != nil {
		panic(err)
	}
	now := time.Unix(1_800_000_000, 0)
	answer := func(latency time.Duration) { // answers to calls sent with the limit in use
		for range 20 {
			now = now.Add(100 * time.Millisecond)
			c.Sent(now, c.Limit()-1)
			c.Observe(now, now.Add(latency))
		}
	}
	fmt.Println("start:", c.Limit())
	answer(time.Second)
	answer(time.Second)
	answer(time.Second)
	fmt.Println("answers in a second:", c.Limit())
	answer(3 * time.Second)
	fmt.Println("answers in three:", c.Limit())
	// Output:
	// start: 64
	// answers in a second: 256
	// answers in three: 144
}
