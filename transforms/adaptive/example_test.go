package adaptive_test

import (
	"context"
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
	// second 5: sent 21, refused 1
}

// A shared quota written as a flag value, and the Quota of a pipeline that
// has none: it grants every permit asked.
func ExampleParseRate() {
	r, err := adaptive.ParseRate("600/m")
	if err != nil {
		panic(err)
	}
	fmt.Printf("%v: %d per %v, %.0f a second\n", r, r.N, r.Per, r.PerSecond())

	var q adaptive.Quota = adaptive.NoQuota{}
	g, _ := q.Take(context.Background(), "translate", 50, time.Now())
	fmt.Printf("granted %d of 50\n", g.Granted)

	_, err = adaptive.ParseRate("600/min")
	fmt.Println(err)
	// Output:
	// 600/m: 600 per 1m0s, 10 a second
	// granted 50 of 50
	// adaptive: rate "600/min": the unit must be s, m, h or a positive duration such as 10s
}

// A known rate of 10 calls a second, in one process: four calls costing 1,
// 3, 2 and 4 units are sent on the slots of one reservation, each taking
// its cost in slots. The firing ends after the first two, and gives back
// the slots of the other two, which the next reservation gets.
func ExampleSlots() {
	rate, err := adaptive.ParseRate("10/s")
	if err != nil {
		panic(err)
	}
	s, err := adaptive.NewSlots(adaptive.SlotsConfig{Rate: rate}) // lead 20 ms, horizon 1 s
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	costs := []int{1, 3, 2, 4}

	r, _ := s.Reserve(ctx, "translate", 10, now)
	at, used := r.Schedule(costs)
	for i, t := range at {
		fmt.Printf("call %d, cost %d: at +%v\n", i, costs[i], t.Sub(now))
	}
	fmt.Println(used, "of", r.Granted, "units used")

	back, _ := s.Release(ctx, "translate", r, costs[2]+costs[3], now)
	next, _ := s.Reserve(ctx, "translate", 1, now)
	fmt.Println(back, "given back; next slot at", "+"+next.First.Sub(now).String())
	// Output:
	// call 0, cost 1: at +20ms
	// call 1, cost 3: at +120ms
	// call 2, cost 2: at +420ms
	// call 3, cost 4: at +620ms
	// 10 of 10 units used
	// 6 given back; next slot at +420ms
}
