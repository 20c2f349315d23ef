package quota_test

import (
	"context"
	"fmt"
	"time"

	"github.com/beamthrottle/beamthrottle/transforms/throttle/quota"
)

// A shared quota written as a flag value, and the Quota of a pipeline that
// has none: it grants every permit asked.
func ExampleParseRate() {
	r, err := quota.ParseRate("600/m")
	if err != nil {
		panic(err)
	}
	fmt.Printf("%v: %d per %v, %.0f a second\n", r, r.N, r.Per, r.PerSecond())

	var q quota.Quota = quota.NoQuota{}
	g, _ := q.Take(context.Background(), "translate", 50, time.Now())
	fmt.Printf("granted %d of 50\n", g.Granted)

	_, err = quota.ParseRate("600/min")
	fmt.Println(err)
	// Output:
	// 600/m: 600 per 1m0s, 10 a second
	// granted 50 of 50
	// quota: rate "600/min": the unit must be s, m, h or a positive duration such as 10s
}

// A known rate of 10 calls a second, in one process: four calls costing 1,
// 3, 2 and 4 units are sent on the slots of one reservation, each taking
// its cost in slots. The firing ends after the first two, and gives back
// the slots of the other two, which the next reservation gets.
func ExampleSlots() {
	rate, err := quota.ParseRate("10/s")
	if err != nil {
		panic(err)
	}
	s, err := quota.NewSlots(quota.SlotsConfig{Rate: rate}) // lead 20 ms, horizon 1 s
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
