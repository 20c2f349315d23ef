package adaptive_test

import (
	"fmt"
	"time"

	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// One of several workers sharing a quota of 600 requests a minute, which
// the API advertises on every answer. The worker starts at a quarter of
// the target, cuts its share when everyone together spends the quota
// twice as fast as the target, holds it when they spend it at the target,
// and after the window's Reset, before an answer from the new window,
// spreads the new quota at the average target it saw (it does not know
// the window's length yet).
func ExampleAdvertisedRate() {
	q, err := adaptive.NewAdvertisedRate(adaptive.AdvertisedRateConfig{})
	if err != nil {
		panic(err)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	reset := at(60)
	fmt.Printf("no answer yet:        %.2f/s (no ceiling)\n", q.Rate(at(0)))

	// Each answer comes 100 ms after its request; the worker sends 5
	// between two answers, the others the rest of what Remaining lost.
	for _, a := range []struct {
		sent      float64
		remaining int64
		what      string
	}{
		{0, 599, "first answer:"},
		{2, 559, "all spent 20/s:"},
		{4, 540, "all spent 9.5/s:"},
	} {
		q.Sent(at(a.sent), 5)
		q.Observe(at(a.sent+0.1), at(a.sent), adaptive.Quota{Limit: 600, Remaining: a.remaining, Reset: reset})
		fmt.Printf("%-21s %.2f/s\n", a.what, q.Rate(at(a.sent+0.1)))
	}
	fmt.Printf("%-21s %.2f/s\n", "after Reset:", q.Rate(at(61)))
	// Output:
	// no answer yet:        0.00/s (no ceiling)
	// first answer:         2.47/s
	// all spent 20/s:       1.68/s
	// all spent 9.5/s:      1.68/s
	// after Reset:          1.73/s
}
