package clientcall_test

import (
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
