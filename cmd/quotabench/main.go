// Command quotabench measures the shared quota of issue 14 for real: three
// cmd/beamthrottle processes share one quota in Redis or in Envoy's
// rate-limit service against the quota test server, beside the adaptive
// throttle alone, then with a competitor, then with the quota's service
// killed or slow (internal/quotabench). It writes -out/results.md and
// -out/results.svg.
//
//	go run ./cmd/quotabench -out docs/quota
//	go run ./cmd/quotabench -scenarios redis,envoy -duration 20s -out /tmp/q
//
// It is part of `make bench`, not of `make test`: it takes about ten
// minutes, and its numbers depend on the machine.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/beamthrottle/beamthrottle/internal/quotabench"
)

func main() {
	out := flag.String("out", "docs/quota", "Directory for results.md and results.svg (\"\" = write nothing).")
	only := flag.String("scenarios", "", "Comma-separated scenario names (default: all).")
	var set quotabench.Settings
	flag.IntVar(&set.Capacity, "capacity", 60, "The quota server's capacity and the shared quota, per second.")
	flag.DurationVar(&set.Duration, "duration", 40*time.Second, "How long each process's source emits.")
	flag.DurationVar(&set.FaultDuration, "fault_duration", 30*time.Second, "How long the sources emit in the fault scenarios.")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, set, *only, *out); err != nil {
		fmt.Fprintln(os.Stderr, "quotabench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, set quotabench.Settings, only, out string) error {
	scs, err := quotabench.Select(only)
	if err != nil {
		return err
	}
	when := time.Now()
	results, err := quotabench.Run(ctx, set, scs, os.Stderr)
	if err != nil {
		return err
	}
	h := quotabench.Header{
		Command:  command(),
		Machine:  machine(),
		When:     when,
		Settings: set,
		Plot:     "results.svg",
	}
	var md, svg bytes.Buffer
	if err := quotabench.WritePlot(&svg, set.Capacity, results); err != nil {
		return err
	}
	if err := quotabench.WriteReport(&md, h, results); err != nil {
		return err
	}
	if out == "" {
		_, err := os.Stdout.Write(md.Bytes())
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "results.svg"), svg.Bytes(), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "results.md"), md.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "wrote %s and %s\n", filepath.Join(out, "results.md"), filepath.Join(out, "results.svg"))
	return nil
}

// command is how this run was asked for: make quotabench with the default
// flags, else the go run line.
func command() string {
	args := os.Args[1:]
	if len(args) == 2 && args[0] == "-out" && args[1] == "docs/quota" {
		return "make quotabench"
	}
	return "go run ./cmd/quotabench " + strings.Join(args, " ")
}

// machine describes the computer: cores, platform and CPU model.
func machine() string {
	s := fmt.Sprintf("%d cores (shared with other work), %s/%s, %s", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			if name, ok := strings.CutPrefix(line, "model name"); ok {
				s += ", " + strings.TrimSpace(strings.TrimLeft(name, " \t:"))
				break
			}
		}
	}
	return s
}
