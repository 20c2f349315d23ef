// Command livebench runs the throttle for real: the pipeline on Prism with
// the HTTP caller against the quota test server on loopback, in real time,
// for each scenario in the paced and SRE modes. The scenarios come in
// families: a token bucket whose quota changes mid-run, the same backend
// shared with an uncontrolled client, a per-minute quota scaled down, a
// fixed window with latency and a strict GCRA limiter (the last two with
// bounded inputs). Each run is measured from the server's own /stats and
// checked against issue 13's targets; the report goes to -out/results.md,
// the raw results to -out/results.json.
//
//	go run ./cmd/livebench -duration 30s -out docs/live
//	go run ./cmd/livebench -scenarios gcra-600 -out docs/live
//
// With -scenarios, only those run, and the report keeps the other rows from
// results.json; -rewrite runs nothing and rewrites the report from it. It is part of `make bench`, not of `make test`: it takes
// about ten minutes of wall time, and its numbers depend on the machine.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

func main() {
	duration := flag.Duration("duration", 30*time.Second, "How long the source of a streaming run emits (the per-minute runs last three windows whatever it is).")
	out := flag.String("out", "docs/live", "Directory for results.md and results.json (\"\" = write nothing).")
	only := flag.String("scenarios", "", "Comma-separated scenario names (default: all).")
	modeList := flag.String("modes", strings.Join(modes, ","), "Comma-separated throttle modes to run each scenario in.")
	competitor := flag.Float64("competitor", 1, "Rate of the competitor client, as a multiple of the quota.")
	rewrite := flag.Bool("rewrite", false, "Run nothing: rewrite results.md from results.json (after a change to the report's text).")
	flag.Parse()
	beam.Init()
	if *rewrite {
		*only = "-"
	}
	if err := run(context.Background(), *only, *modeList, settings{duration: *duration, competitor: *competitor}, *out, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "livebench:", err)
		os.Exit(1)
	}
}

// run runs the scenarios named in only ("" for all, "-" for none) in the
// modes of modeList and writes the report to outDir ("" for none).
func run(ctx context.Context, only, modeList string, set settings, outDir string, w io.Writer) error {
	var scs []scenario
	if only != "-" {
		var err error
		if scs, err = selected(only); err != nil {
			return err
		}
	}
	var ms []string
	for _, m := range strings.Split(modeList, ",") {
		ms = append(ms, strings.TrimSpace(m))
	}
	if set.duration < 3*time.Second {
		return fmt.Errorf("-duration %v: want at least 3s", set.duration)
	}
	if !(set.competitor > 0) {
		return fmt.Errorf("-competitor %v: want a multiple > 0", set.competitor)
	}
	var fresh []Result
	for _, sc := range scs {
		for _, mode := range ms {
			r, err := runOne(ctx, sc, mode, set)
			if err != nil {
				return fmt.Errorf("%s/%s: %w", sc.name, mode, err)
			}
			fmt.Fprintln(w, summaryLine(sc, r))
			fresh = append(fresh, r)
		}
	}
	if outDir == "" {
		return nil
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	jsonPath := filepath.Join(outDir, "results.json")
	b, err := os.ReadFile(jsonPath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	old, err := decodeResults(b)
	if err != nil {
		return err
	}
	all := merge(old, fresh)
	if err := os.WriteFile(jsonPath, encodeResults(all), 0o644); err != nil {
		return err
	}
	var md strings.Builder
	writeReport(&md, set.duration, all)
	return os.WriteFile(filepath.Join(outDir, "results.md"), []byte(md.String()), 0o644)
}
