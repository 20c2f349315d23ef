// Command simulate runs the throttling simulator's standard suite (package
// sim: every scenario with every algorithm, for 1 and 8 groups) and prints
// its tables. With -out it also writes the report: dir/results.md and one
// plot per scenario, dir/<scenario>.svg (or .png with -format png).
//
//	go run ./cmd/simulate -out docs/sim
//
// The run is deterministic and takes a few seconds.
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/beamthrottle/beamthrottle/sim"
)

func main() {
	out := flag.String("out", "", "directory to write results.md and the plots to (created if missing); empty: print the tables only")
	seed := flag.Uint64("seed", sim.DefaultSeed, "random seed of every run")
	format := flag.String("format", "svg", "plot format: svg or png")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "simulate: unexpected arguments %q\n", flag.Args())
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*out, *format, *seed); err != nil {
		slog.Error("simulate failed", "err", err)
		os.Exit(1)
	}
}

func run(out, format string, seed uint64) error {
	start := time.Now()
	suite := sim.DefaultSuite()
	suite.Config = func(g int) sim.Config {
		c := sim.DefaultConfig(g)
		c.Seed = seed
		return c
	}
	results, err := suite.Run()
	if err != nil {
		return err
	}
	if err := sim.WriteMarkdown(os.Stdout, suite.Scenarios, results); err != nil {
		return err
	}
	if out != "" {
		if err := os.MkdirAll(out, 0o755); err != nil {
			return err
		}
		command := "go run ./cmd/simulate -out " + out
		if seed != sim.DefaultSeed {
			command += fmt.Sprintf(" -seed %d", seed)
		}
		if format != "svg" {
			command += " -format " + format
		}
		if err := sim.WriteReport(out, command, format, suite, results); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "simulate: wrote %s/%s and %d plots\n", strings.TrimSuffix(out, "/"), sim.ReportFile, len(suite.Scenarios))
	}
	fmt.Fprintf(os.Stderr, "simulate: %d runs in %v\n", len(results), time.Since(start).Round(time.Millisecond))
	return nil
}
