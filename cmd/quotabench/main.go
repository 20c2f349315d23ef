// Command quotabench measures the shared quota for real: three
// cmd/beamthrottle processes share one quota in Redis or in Envoy's
// rate-limit service against the quota test server, beside the adaptive
// throttle alone, then with a competitor, then with the quota's service
// killed or slow; then against a strict limiter (GCRA, no burst) with the
// elements of a batch job all at once; then priority shares across
// processes, a high and a low process on one quota of slots; then eight
// processes against a fixed window that advertises its quota, and the
// crossed rows, that window with seconds of latency or bare
// (internal/harness/quotabench). It writes -out/results.md, the plots
// -out/results.svg and -out/results-strict.svg, and the raw results to
// -out/results.json, from which -rewrite makes the report again without
// running anything. With -scenarios, only those run, and the report keeps
// the other rows from -out/results.json (made with the same settings).
//
//	go run ./cmd/quotabench -out docs/quota
//	go run ./cmd/quotabench -scenarios redis,envoy -duration 20s -out /tmp/q
//	go run ./cmd/quotabench -scenarios strict -out /tmp/qs
//	go run ./cmd/quotabench -scenarios priority -out docs/quota
//	go run ./cmd/quotabench -scenarios crossed -out docs/quota
//
// It is part of `make bench`, not of `make test`: it takes about half an
// hour (the strict scenarios alone, about ten minutes, the priority ones
// about five), and its numbers depend on the machine.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/beamthrottle/beamthrottle/internal/harness/quotabench"
)

func main() {
	out := flag.String("out", "docs/quota", "Directory for results.md and results.svg (\"\" = write nothing).")
	only := flag.String("scenarios", "", "Comma-separated scenario names, strict for every strict-limiter scenario, advertised, crossed, nginx or priority for every scenario of that family (default: all); the report keeps the other rows from -out/results.json.")
	rewrite := flag.Bool("rewrite", false, "Run nothing: rewrite results.md and results.svg from -out/results.json (after a change to the report's text).")
	var set quotabench.Settings
	flag.IntVar(&set.Capacity, "capacity", 60, "The quota server's capacity and the shared quota, per second.")
	flag.DurationVar(&set.Duration, "duration", 40*time.Second, "How long each process's source emits.")
	flag.DurationVar(&set.FaultDuration, "fault_duration", 30*time.Second, "How long the sources emit in the fault scenarios.")
	flag.IntVar(&set.APIRate, "api_rate", 10, "The strict limiter's rate per second (GCRA, no burst), in the strict scenarios.")
	flag.IntVar(&set.StrictElements, "strict_elements", 600, "Elements all processes of a strict scenario generate together, split evenly between them.")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var err error
	if *rewrite {
		err = rewriteReport(*out)
	} else {
		err = run(ctx, set, *only, *out)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "quotabench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, set quotabench.Settings, only, out string) error {
	scs, err := quotabench.Select(only)
	if err != nil {
		return err
	}
	var prev *saved
	if strings.TrimSpace(only) != "" && out != "" {
		if prev, err = readSaved(out); err != nil {
			return err
		}
		if prev != nil && prev.Header.Settings != set {
			return fmt.Errorf("%s was made with other settings (%+v, not %+v): run every scenario, or write elsewhere with -out",
				filepath.Join(out, "results.json"), prev.Header.Settings, set)
		}
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
	}
	if prev != nil {
		results = quotabench.Merge(prev.Header, prev.Results, results)
	}
	return write(out, saved{h, results})
}

// saved is results.json: a run, from which -rewrite makes the report again.
type saved struct {
	Header  quotabench.Header
	Results []quotabench.Result
}

// rewriteReport makes the report and plot again from out/results.json.
func rewriteReport(out string) error {
	s, err := readSaved(out)
	if err != nil {
		return err
	}
	if s == nil {
		return fmt.Errorf("%s: no such file", filepath.Join(out, "results.json"))
	}
	return write(out, *s)
}

// readSaved reads out/results.json; nil if there is none.
func readSaved(out string) (*saved, error) {
	path := filepath.Join(out, "results.json")
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var s saved
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &s, nil
}

// write writes results.md, results.json and the plots (results.svg for
// the token-bucket scenarios, results-strict.svg for the strict ones, each
// if there are any) to out, or the report to standard output if out is "".
func write(out string, s saved) error {
	files := map[string][]byte{}
	var bucket, strict []quotabench.Result
	for _, r := range s.Results {
		switch {
		case r.Scenario.Priority: // in a table only
		case r.Scenario.Strict:
			strict = append(strict, r)
		default:
			bucket = append(bucket, r)
		}
	}
	s.Header.Plot, s.Header.StrictPlot = "", ""
	for _, pl := range []struct {
		name     string
		capacity int
		results  []quotabench.Result
		field    *string
	}{
		{"results.svg", s.Header.Settings.Capacity, bucket, &s.Header.Plot},
		{"results-strict.svg", s.Header.Settings.APIRate, strict, &s.Header.StrictPlot},
	} {
		if len(pl.results) == 0 {
			continue
		}
		var svg bytes.Buffer
		if err := quotabench.WritePlot(&svg, pl.capacity, pl.results); err != nil {
			return err
		}
		files[pl.name], *pl.field = svg.Bytes(), pl.name
	}
	var md bytes.Buffer
	if err := quotabench.WriteReport(&md, s.Header, s.Results); err != nil {
		return err
	}
	if out == "" {
		_, err := os.Stdout.Write(md.Bytes())
		return err
	}
	js, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	files["results.json"], files["results.md"] = append(js, '\n'), md.Bytes()
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(out, name), b, 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "wrote %s/results.md, results.json and the plots\n", out)
	return nil
}

// command is how this run was asked for: make quotabench with the default
// flags, else the go run line.
func command() string { return commandOf(os.Args[1:]) }

// commandOf is command for the arguments args: `make quotabench` passes
// -out docs/quota -scenarios '$(QUOTA_SCENARIOS)'.
func commandOf(args []string) string {
	if len(args) >= 2 && args[0] == "-out" && args[1] == "docs/quota" {
		switch {
		case len(args) == 2 || len(args) == 4 && args[2] == "-scenarios" && args[3] == "":
			return "make quotabench"
		case len(args) == 4 && args[2] == "-scenarios":
			return "make quotabench QUOTA_SCENARIOS=" + args[3]
		}
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
