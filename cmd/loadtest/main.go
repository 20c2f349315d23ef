// Command loadtest runs beamthrottle's load and soak tests and appends
// their reports to a results file:
//
//	go run ./cmd/loadtest -mode load -elements 1000000   # make load
//	go run ./cmd/loadtest -mode load -load_rate 5000     # the same, paced
//	go run ./cmd/loadtest -mode soak -duration 10m       # make soak
//
// Load sends N elements through the bounded pipeline on Prism with the HTTP
// caller against the quota test server on loopback; soak streams elements
// at twice the quota for the given time. Both check that every element is
// accounted for and report memory (peak RSS, heap slope) and goroutines.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/beamthrottle/beamthrottle/internal/harness/loadtest"
)

func main() {
	mode := flag.String("mode", "load", "load or soak")
	elements := flag.Int("elements", 1_000_000, "load: number of elements")
	duration := flag.Duration("duration", 10*time.Minute, "soak: length of the run")
	rate := flag.Float64("rate", 200, "soak: elements per second (the quota is half of it)")
	loadRate := flag.Float64("load_rate", 0, "load: elements per second from the streaming generator, 0 = the bounded generator as fast as it goes")
	out := flag.String("out", "docs/load/results.md", "file the report is appended to ('' = stdout only)")
	flag.Parse()
	beam.Init()

	ctx := context.Background()
	var (
		r     loadtest.Result
		err   error
		title string
	)
	switch *mode {
	case "load":
		// 8 groups × 2,500 per 100 ms (200,000/s ceiling), 8 calls in
		// flight each, against a quota the load stays within, so the run
		// measures the pipeline and the HTTP path rather than the throttle.
		source := "bounded"
		if *loadRate > 0 {
			source = fmt.Sprintf("streaming at %.0f/s", *loadRate)
		}
		title = fmt.Sprintf("load: %d elements, %s, %s", *elements, source, time.Now().UTC().Format(time.DateOnly))
		r, err = loadtest.Load(ctx, loadtest.LoadConfig{Elements: *elements, Rate: *loadRate, Quota: 1_000_000,
			Groups: 8, BatchSize: 2500, BatchInterval: 100 * time.Millisecond, CallsInFlight: 8, Prefix: loadtest.TempPrefix("load")})
	case "soak":
		title = fmt.Sprintf("soak: %v streaming at %.0f/s, quota %.0f/s, %s", *duration, *rate, *rate/2, time.Now().UTC().Format(time.DateOnly))
		r, err = loadtest.Soak(ctx, loadtest.SoakConfig{Duration: *duration, Rate: *rate, Quota: int(*rate / 2),
			Warmup: *duration / 5, Prefix: loadtest.TempPrefix("soak")})
	default:
		err = fmt.Errorf("-mode: want load or soak, got %q", *mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
	report := r.Report(title)
	fmt.Print(report)
	if *out != "" {
		if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "loadtest:", err)
			os.Exit(1)
		}
		f, err := os.OpenFile(*out, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			_, err = fmt.Fprintln(f, report)
			f.Close()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "loadtest:", err)
			os.Exit(1)
		}
	}
	if !r.Accounted() {
		fmt.Fprintln(os.Stderr, "loadtest: not every element was accounted for")
		os.Exit(1)
	}
	if *mode == "soak" {
		if leaks := r.Leaks(); len(leaks) > 0 {
			for _, l := range leaks {
				fmt.Fprintln(os.Stderr, "loadtest:", l)
			}
			os.Exit(1)
		}
	}
}
