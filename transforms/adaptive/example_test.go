package adaptive_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// A backend that accepts the first two requests and then reports overload
// on every request. The random source is fixed at 0.5, so a request is
// rejected locally once p exceeds 0.5; rejected requests still count, and
// after the one-minute window resets, requests flow again.
func ExampleThrottler() {
	th, err := adaptive.New(adaptive.Config{K: 2}, func() float64 { return 0.5 })
	if err != nil {
		panic(err)
	}
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 12 {
		allow, p := th.Decide(now)
		if allow {
			outcome := adaptive.Throttled
			if i < 2 {
				outcome = adaptive.Accepted
			}
			th.Record(now, outcome)
		}
		fmt.Printf("request %2d: p=%.3f allow=%v\n", i, p, allow)
		now = now.Add(time.Second)
	}
	requests, accepts := th.Counts(now)
	fmt.Printf("window: %d requests, %d accepts\n", requests, accepts)

	now = now.Add(time.Minute)
	fmt.Printf("a minute later: p=%.3f\n", th.Probability(now))
	// Output:
	// request  0: p=0.000 allow=true
	// request  1: p=0.000 allow=true
	// request  2: p=0.000 allow=true
	// request  3: p=0.000 allow=true
	// request  4: p=0.000 allow=true
	// request  5: p=0.167 allow=true
	// request  6: p=0.286 allow=true
	// request  7: p=0.375 allow=true
	// request  8: p=0.444 allow=true
	// request  9: p=0.500 allow=true
	// request 10: p=0.545 allow=false
	// request 11: p=0.583 allow=false
	// window: 12 requests, 2 accepts
	// a minute later: p=0.000
}

// errOverloaded stands for a backend's "429 Too Many Requests".
var errOverloaded = errors.New("overloaded")

// A Limiter protects a backend called from ordinary Go code, here with the
// SRE throttle. The backend is always overloaded, so the Limiter soon
// rejects most requests locally, without calling it.
func ExampleLimiter() {
	sre, err := adaptive.NewSRE(adaptive.Config{Window: adaptive.Sliding}, nil, 0)
	if err != nil {
		panic(err)
	}
	l := adaptive.NewLimiter(sre)
	call := func() error { return errOverloaded }

	ctx := context.Background()
	calls := 0
	for range 1000 {
		sent, err := l.Wait(ctx)
		if err != nil {
			continue // ErrRejected: fail fast
		}
		calls++
		a := adaptive.Answer{Outcome: adaptive.Accepted, Sent: sent}
		switch err := call(); {
		case errors.Is(err, errOverloaded):
			a.Outcome = adaptive.Throttled
		case err != nil:
			a.Outcome = adaptive.Failed
		}
		l.Record(a)
	}
	fmt.Println("most requests rejected locally:", calls < 100)
	// Output:
	// most requests rejected locally: true
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
