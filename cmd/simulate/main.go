// Command simulate runs the throttling simulator's standard suite (package
// sim: the matrix of backends, latencies and competitor for 1, 8 and 32
// groups, and the six classic scenarios for 1 and 8 groups, with every
// standard algorithm) and prints its tables. With -out it also writes the
// report: dir/results.md and one plot per classic scenario,
// dir/<scenario>.svg (or .png with -format png). With -sweep n it runs the
// suite with n seeds instead and writes the median and worst case of each
// metric (dir/sweep.md with -out). With -crossed it runs the crossed grid
// instead (latency × limiter × headers × workers, sim.CrossedCases) and
// writes dir/crossed.md.
//
//	go run ./cmd/simulate -out docs/sim
//	go run ./cmd/simulate -sweep 20 -out docs/sim
//	go run ./cmd/simulate -crossed -out docs/sim
//
// A run with one seed is deterministic.
package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/beamthrottle/beamthrottle/internal/harness/sim"
)

func main() {
	out := flag.String("out", "", "directory to write results.md (or sweep.md) and the plots to (created if missing); empty: print the tables only")
	seed := flag.Uint64("seed", sim.DefaultSeed, "random seed of every run (with -sweep: of the first run)")
	format := flag.String("format", "svg", "plot format: svg or png")
	sweep := flag.Int("sweep", 0, "run the suite with this many seeds (seed, seed+1, …) and report the median and worst case of each metric; 0: one run")
	crossed := flag.Bool("crossed", false, "run the crossed grid (latency × limiter × headers × workers) instead, and write crossed.md")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "simulate: unexpected arguments %q\n", flag.Args())
		flag.Usage()
		os.Exit(2)
	}
	if err := check(*format, *sweep); err != nil {
		fmt.Fprintf(os.Stderr, "simulate: %v\n", err)
		os.Exit(2)
	}
	var err error
	switch {
	case *crossed && *sweep > 0:
		fmt.Fprintln(os.Stderr, "simulate: --crossed and --sweep: choose one")
		os.Exit(2)
	case *crossed:
		err = runCrossed(*out, *seed)
	case *sweep > 0:
		err = runSweep(*out, *seed, *sweep)
	default:
		err = run(*out, *format, *seed)
	}
	if err != nil {
		slog.Error("simulate failed", "err", err)
		os.Exit(1)
	}
}

// check validates the flags.
func check(format string, sweep int) error {
	if format != "svg" && format != "png" {
		return fmt.Errorf("--format: want svg or png, got %q", format)
	}
	if sweep < 0 {
		return errors.New("--sweep: must not be negative")
	}
	return nil
}

func run(out, format string, seed uint64) error {
	start := time.Now()
	suite := sim.DefaultSuite()
	suite.Seed = seed
	results, err := suite.Run()
	if err != nil {
		return err
	}
	if err := sim.WriteMarkdown(os.Stdout, suite.Cases, results); err != nil {
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
		fmt.Fprintf(os.Stderr, "simulate: wrote %s/%s and plots\n", strings.TrimSuffix(out, "/"), sim.ReportFile)
	}
	fmt.Fprintf(os.Stderr, "simulate: %d runs in %v\n", len(results), time.Since(start).Round(time.Millisecond))
	return nil
}

func runCrossed(out string, seed uint64) error {
	start := time.Now()
	suite := sim.CrossedSuite()
	suite.Seed = seed
	results, err := suite.Run()
	if err != nil {
		return err
	}
	command := "go run ./cmd/simulate -crossed -out " + out
	if seed != sim.DefaultSeed {
		command += fmt.Sprintf(" -seed %d", seed)
	}
	if err := sim.WriteCrossed(os.Stdout, command, suite.Cases, results); err != nil {
		return err
	}
	if out != "" {
		if err := os.MkdirAll(out, 0o755); err != nil {
			return err
		}
		f, err := os.Create(filepath.Join(out, sim.CrossedFile))
		if err != nil {
			return err
		}
		if err := sim.WriteCrossed(f, command, suite.Cases, results); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "simulate: wrote %s\n", filepath.Join(out, sim.CrossedFile))
	}
	fmt.Fprintf(os.Stderr, "simulate: %d runs in %v\n", len(results), time.Since(start).Round(time.Millisecond))
	return nil
}

func runSweep(out string, seed uint64, n int) error {
	start := time.Now()
	suite := sim.DefaultSuite()
	seeds := make([]uint64, n)
	for i := range seeds {
		seeds[i] = seed + uint64(i)
	}
	rows, err := sim.Sweep(suite, seeds)
	if err != nil {
		return err
	}
	if err := sim.WriteSweep(os.Stdout, suite.Cases, rows); err != nil {
		return err
	}
	if out != "" {
		if err := os.MkdirAll(out, 0o755); err != nil {
			return err
		}
		command := fmt.Sprintf("go run ./cmd/simulate -sweep %d -out %s", n, out)
		if seed != sim.DefaultSeed {
			command += fmt.Sprintf(" -seed %d", seed)
		}
		if err := sim.WriteSweepReport(out, command, suite, seeds, rows); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "simulate: wrote %s/%s\n", strings.TrimSuffix(out, "/"), sim.SweepFile)
	}
	fmt.Fprintf(os.Stderr, "simulate: %d runs × %d seeds in %v\n", len(rows), n, time.Since(start).Round(time.Millisecond))
	return nil
}
