// Command livebench runs the throttle for real: the pipeline on Prism with
// the HTTP caller against the quota test server on loopback, in real time,
// for each scenario in the paced and SRE modes. The scenarios come in
// families: a token bucket whose quota changes mid-run, the same backend
// shared with an uncontrolled client, a per-minute quota scaled down, a
// fixed window with latency, a strict GCRA limiter and a drifting fixed
// window without Retry-After (the last three with bounded inputs), slow
// APIs, the crossed family (latency × fixed window × advertised headers,
// bounded, each run interrupted at a deadline), and priority tiers at
// twice the quota (paced mode only: a Pub/Sub source on an in-process
// emulator, each tier's waits measured per element). Each run is measured
// from the server's own /stats and checked against the pacing targets; the
// report goes to -out/results.md, the raw results to -out/results.json.
//
//	go run ./cmd/livebench -duration 30s -out docs/live
//	go run ./cmd/livebench -scenarios gcra-600 -out docs/live
//	go run ./cmd/livebench -scenarios crossed -out docs/live
//
// With -scenarios, only those run (a family's name stands for all its
// scenarios), and the report keeps the other rows from
// results.json; -rewrite runs nothing and rewrites the report from it. It is part of `make bench`, not of `make test`: it takes
// about ten minutes of wall time, and its numbers depend on the machine.
//
// The harness is package internal/harness/livebench; this is its command line.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/beamthrottle/beamthrottle/internal/harness/livebench"
)

func main() {
	duration := flag.Duration("duration", 30*time.Second, "How long the source of a streaming run emits (the per-minute runs last three windows whatever it is).")
	out := flag.String("out", "docs/live", "Directory for results.md and results.json (\"\" = write nothing).")
	only := flag.String("scenarios", "", "Comma-separated scenario names, or family names for all their scenarios (default: all).")
	modeList := flag.String("modes", strings.Join(livebench.Modes, ","), "Comma-separated throttle modes to run each scenario in.")
	competitor := flag.Float64("competitor", 1, "Rate of the competitor client, as a multiple of the quota.")
	rewrite := flag.Bool("rewrite", false, "Run nothing: rewrite results.md from results.json (after a change to the report's text).")
	flag.Parse()
	beam.Init()
	if *rewrite {
		*only = "-"
	}
	set := livebench.Settings{Scenarios: *only, Modes: *modeList, Duration: *duration, Competitor: *competitor, Out: *out}
	if err := livebench.Run(context.Background(), set, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "livebench:", err)
		os.Exit(1)
	}
}
