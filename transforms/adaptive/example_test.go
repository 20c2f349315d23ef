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
