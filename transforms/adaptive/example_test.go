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

// A Limiter protects a backend called from ordinary Go code. Here the
// backend is always overloaded, so the Limiter soon rejects most requests
// locally, without calling it.
func ExampleLimiter() {
	l, err := adaptive.NewLimiter(adaptive.Config{Window: adaptive.Sliding})
	if err != nil {
		panic(err)
	}
	call := func() error { return errOverloaded }

	sent := 0
	for range 1000 {
		allow, _ := l.Allow()
		if !allow {
			continue // fail fast
		}
		sent++
		switch err := call(); {
		case err == nil:
			l.Record(adaptive.Accepted)
		case errors.Is(err, errOverloaded):
			l.Record(adaptive.Throttled)
		default:
			l.Record(adaptive.Failed)
		}
	}
	fmt.Println("most requests rejected locally:", sent < 100)
	// Output:
	// most requests rejected locally: true
}

// The paced mode in a batch loop: every second a batch of 100 requests, of
// which a backend with a quota of 40 per second accepts the first 40. The
// first batch goes out unthrottled; then the pace starts at what the backend
// accepted plus the target share, and settles where the backend rejects
// about that share (2.5 %).
func ExampleThrottler_paced() {
	th, err := adaptive.New(adaptive.Config{Mode: adaptive.ModePaced}, nil)
	if err != nil {
		panic(err)
	}
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for s := range 6 {
		sent, accepted := 0, 0
		for range 100 {
			if allow, _ := th.Decide(now); !allow {
				continue
			}
			sent++
			if sent <= 40 {
				accepted++
				th.Record(now, adaptive.Accepted)
			} else {
				th.Record(now, adaptive.Throttled)
			}
		}
		fmt.Printf("second %d: sent %3d, accepted %d\n", s, sent, accepted)
		now = now.Add(time.Second)
	}
	// Output:
	// second 0: sent 100, accepted 40
	// second 1: sent  41, accepted 40
	// second 2: sent  41, accepted 40
	// second 3: sent  41, accepted 40
	// second 4: sent  41, accepted 40
	// second 5: sent  41, accepted 40
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
