// Command beamthrottle runs the beamthrottle pipeline: payloads from files,
// a Pub/Sub subscription or a generator are sent through the adaptive
// throttle to an HTTP API (or a registered caller), and every outcome is
// written to JSONL files and/or Pub/Sub topics.
//
//	beamthrottle --input='data/*.jsonl' --url=https://api.example.com/v1/x --output_prefix=out/
//	beamthrottle --demo      # local demo against an embedded quota server (package internal/demo)
//
// Run with --help for every flag; Beam's own flags (--runner, --endpoint,
// --project, --region, --temp_location, ...) select and configure the runner.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/dataflow"

	"github.com/beamthrottle/beamthrottle/internal/demo"
	"github.com/beamthrottle/beamthrottle/pipeline"
)

func main() {
	opts, wantDemo := defineFlags(flag.CommandLine)
	// Header values may be secrets: keep them out of the job's pipeline
	// options (shown in the Dataflow UI). They still reach the workers
	// inside the caller's configuration; prefer --header_env for secrets.
	dataflow.DontUseFlagAsPipelineOption("header")
	flag.Parse()
	beam.Init()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	if *wantDemo {
		err = demo.Run(ctx, *opts, demoConfig(os.Stdout, os.Stderr))
	} else {
		_, err = runPipeline(ctx, *opts, pipeline.NewProgress(os.Stderr, 3*time.Second), os.Stdout, os.Stderr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "beamthrottle:", err)
		os.Exit(1)
	}
}

// defineFlags defines the binary's flags on fs, which already holds Beam's,
// and its --help: the pipeline's flags by group, then Beam's.
func defineFlags(fs *flag.FlagSet) (*pipeline.Options, *bool) {
	opts := pipeline.RegisterFlags(fs)
	wantDemo := fs.Bool("demo", false, "Run the local demo: an embedded quota server on loopback, generated input, outputs under out/.")
	fs.Usage = func() { usage(fs.Output(), fs, append(pipeline.FlagGroups(), demoGroup)) }
	return opts, wantDemo
}

// runPipeline runs one pipeline for o, counting in p (nil for none): it
// validates and checks o, runs it, and writes its summary table to stdout.
func runPipeline(ctx context.Context, o pipeline.Options, p *pipeline.Progress, stdout, stderr io.Writer) (pipeline.Summary, error) {
	if err := o.Validate(); err != nil {
		return pipeline.Summary{}, err
	}
	if err := o.Check(ctx, stderr); err != nil {
		return pipeline.Summary{}, err
	}
	sum, err := pipeline.Run(ctx, o, p)
	if err != nil {
		return sum, err
	}
	if dryRun() {
		fmt.Fprintln(stdout, "dry run: the Dataflow job is in the log above; nothing was submitted")
		return sum, nil
	}
	if pipeline.Submitted() {
		fmt.Fprintln(stdout, "job submitted; follow it in the runner's UI (Beam counters in namespace beamthrottle)")
		return sum, nil
	}
	want := int64(-1)
	switch {
	case o.Generate > 0:
		want = int64(o.Generate)
	case o.Reprocess:
		want = sum.Reprocessed
	}
	sum.WriteTable(stdout, want)
	return sum, nil
}

// demoConfig is the demo's configuration: its runs go through runPipeline,
// and its defaults yield to the flags given on the command line.
func demoConfig(stdout, stderr io.Writer) demo.Config {
	return demo.Config{
		Given: isSet,
		RunPipeline: func(ctx context.Context, o pipeline.Options, p *pipeline.Progress) (pipeline.Summary, error) {
			return runPipeline(ctx, o, p, stdout, stderr)
		},
		Stdout: stdout,
		Stderr: stderr,
	}
}

// dryRun reports whether the Dataflow runner was asked only to print the
// job (--dry_run): it then returns no result.
func dryRun() bool {
	runner, dry := flag.Lookup("runner"), flag.Lookup("dry_run")
	if runner == nil || dry == nil || dry.Value.String() != "true" {
		return false
	}
	r := runner.Value.String()
	return r == "dataflow" || r == "DataflowRunner"
}

// isSet reports whether the flag was given on the command line.
func isSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}
