package clientcall_test

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/beamthrottle/beamthrottle/clientcall"
)

func ExampleParseAdvertised() {
	// A refusal from an API behind a gateway that sends both the IETF fields
	// and X-RateLimit-*, whose clock runs 2 s ahead of ours.
	now := time.Date(2025, 10, 21, 7, 28, 0, 0, time.UTC)
	server := now.Add(2 * time.Second)
	h := http.Header{}
	h.Set("Date", server.Format(http.TimeFormat))
	h.Set("RateLimit-Policy", `"permin";q=50;w=60, "perday";q=1000;w=86400`)
	h.Set("RateLimit", `"permin";r=0;t=30`)
	h.Set("X-RateLimit-Limit", "50")
	h.Set("X-RateLimit-Remaining", "0")
	h.Set("X-RateLimit-Reset", fmt.Sprint(server.Add(30*time.Second).Unix())) // epoch seconds

	for _, a := range clientcall.ParseAdvertised(h, now) {
		reset := "unknown"
		if !a.Reset.IsZero() {
			reset = "in " + a.Reset.Sub(now).String()
		}
		fmt.Printf("%q: %d of %d %s left, window %v, reset %s\n", a.Name, a.Remaining, a.Limit, a.Unit, a.Window, reset)
	}
	// Output:
	// "permin": 0 of 50 requests left, window 1m0s, reset in 30s
	// "perday": -1 of 1000 requests left, window 24h0m0s, reset unknown
	// "": 0 of 50 requests left, window 0s, reset in 30s
}

func ExampleReportAdvertised() {
	// A custom caller of an LLM API reads the limits from the response's
	// headers and the tokens its request took from the response's usage,
	// and reports both: with Used, the transform paces under the limit on
	// output tokens too, which headers alone cannot size.
	now := time.Date(2025, 10, 21, 7, 28, 0, 0, time.UTC)
	h := http.Header{}
	h.Set("x-ratelimit-limit-requests", "500")
	h.Set("x-ratelimit-remaining-requests", "499")
	h.Set("x-ratelimit-reset-requests", "120ms")
	h.Set("x-ratelimit-limit-tokens", "8000")
	h.Set("x-ratelimit-remaining-tokens", "7976")
	h.Set("x-ratelimit-reset-tokens", "180ms")
	usage := map[string]float64{"tokens": 24} // from the response body

	limits := clientcall.ParseAdvertised(h, now)
	for i := range limits {
		limits[i].Used = usage[limits[i].Unit]
	}
	// The transform gives each call a context with a sink; here, one that prints.
	ctx := clientcall.WithAdvertised(context.Background(), func(as []clientcall.Advertised) {
		for _, a := range as {
			fmt.Printf("%s: %d of %d left, this request took %v\n", a.Unit, a.Remaining, a.Limit, a.Used)
		}
	})
	clientcall.ReportAdvertised(ctx, limits)
	// Output:
	// requests: 499 of 500 left, this request took 0
	// tokens: 7976 of 8000 left, this request took 24
}
