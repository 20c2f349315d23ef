package redisquota_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/beamthrottle/beamthrottle/transforms/throttle/quota"
	"github.com/beamthrottle/beamthrottle/transforms/throttle/quota/redisquota"
)

// A quota of 600 requests a minute kept in Redis (Memorystore, say) and
// shared by every process that uses the key "translate". Each batch takes
// its permits in one round trip, sends what was granted and keeps the rest
// for RetryAt.
func ExampleQuota() {
	rate, err := quota.ParseRate("600/m")
	if err != nil {
		log.Fatal(err)
	}
	q, err := redisquota.New(redisquota.Config{Addr: "10.0.0.3:6379", Rate: rate})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()

	batch := make([]string, 25)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	g, err := q.Take(ctx, "translate", len(batch), time.Now())
	if err != nil {
		// The quota did not answer: fail open (send, throttled by the
		// adaptive throttle alone) or closed (wait), as configured.
		log.Print(err)
		return
	}
	send, later := batch[:g.Granted], batch[g.Granted:]
	fmt.Println(len(send), "now,", len(later), "at", g.RetryAt)
}

// Workers share 9 calls a second kept in Redis, as slots: each reserves
// the slots of its pending calls (with their costs, in units of the rate),
// sends each call on its slot and gives back the slots it did not use, so
// that together they make one stream of calls spaced 1/9 s apart.
func ExampleQuota_Reserve() {
	q, err := redisquota.New(redisquota.Config{
		Addr: "10.0.0.3:6379",
		Rate: quota.Rate{N: 9, Per: time.Second}, // lead 20 ms, horizon 1 s
	})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()

	costs := []int{1, 1, 2, 1, 3, 2}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	r, err := q.Reserve(ctx, "translate", 10, time.Now())
	if err != nil {
		log.Print(err) // fail open or closed, as configured
		return
	}
	at, used := r.Schedule(costs) // the calls that fit in the units granted
	for i, t := range at {
		time.Sleep(time.Until(t))
		fmt.Println("send call", i) // the others wait for a later reservation
	}
	if _, err := q.Release(context.Background(), "translate", r, r.Granted-used, time.Now()); err != nil {
		log.Print(err) // the slots lapse: idle quota, never a 429
	}
}

func ExampleDefaultBurst() {
	for _, s := range []string{"600/m", "36000/h", "60/m"} {
		r, _ := quota.ParseRate(s)
		fmt.Println(s, redisquota.DefaultBurst(r))
	}
	// Output:
	// 600/m 10
	// 36000/h 10
	// 60/m 1
}
