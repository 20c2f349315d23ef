// Command beamthrottle runs the beamthrottle pipeline: payloads from files,
// a Pub/Sub subscription or a generator are sent through the adaptive
// throttle to an HTTP API (or a registered caller), and every outcome is
// written to JSONL files and/or Pub/Sub topics.
//
//	beamthrottle --input='data/*.jsonl' --url=https://api.example.com/v1/x --output_prefix=out/
//	beamthrottle --demo      # local demo against an embedded quota server (package internal/harness/demo)
//
// Run with --help for every flag; Beam's own flags (--runner, --endpoint,
// --project, --region, --temp_location, ...) select and configure the runner.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/dataflow"

	"github.com/beamthrottle/beamthrottle/internal/flaghelp"
	"github.com/beamthrottle/beamthrottle/internal/harness/demo"
	"github.com/beamthrottle/beamthrottle/internal/report"
	"github.com/beamthrottle/beamthrottle/internal/runners"
	"github.com/beamthrottle/beamthrottle/pipeline"

	// The quota backends of --quota_backend (package pipeline imports them
	// too): the binary, the Flex Template's, runs on the workers, where
	// each backend must be registered to be opened.
	_ "github.com/beamthrottle/beamthrottle/transforms/throttle/quota/envoyquota"
	_ "github.com/beamthrottle/beamthrottle/transforms/throttle/quota/redisquota"
)

func main() {
	opts, wantDemo := defineFlags(flag.CommandLine)
	// Header values may be secrets: keep them out of the job's pipeline
	// options (shown in the Dataflow UI). They still reach the workers
	// inside the caller's configuration; prefer --header_env for secrets.
	dataflow.DontUseFlagAsPipelineOption("header")
	flag.Parse()
	beam.Init()

	var progress *report.Progress
	if !*wantDemo {
		progress = report.NewProgress(os.Stderr, 3*time.Second)
	}
	ctx, sig := onSignals(os.Stderr, progress, total(*opts))
	var err error
	if *wantDemo {
		err = demo.Run(ctx, *opts, demoConfig(os.Stdout, os.Stderr))
	} else {
		_, err = runPipeline(ctx, *opts, progress, os.Stdout, os.Stderr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "beamthrottle:", err)
	}
	os.Exit(exitCode(err, sig()))
}

// Exit statuses of the binary (docs/operations.md, "Exit codes").
const (
	exitOK       = 0
	exitError    = 1 // a flag refused at start, or the run failed
	exitMismatch = 3 // the job finished, but the summary does not account for every input element
	exitNotDone  = 4 // the job ended without finishing (cancelled through its job service, drained, ...)
	// An interrupted run exits with 128 + the signal's number: 130 for
	// SIGINT, 143 for SIGTERM. A command line the flag package cannot
	// parse exits with 2.
)

// errMismatch is the error of a run whose summary does not account for
// every input element.
var errMismatch = errors.New("the summary does not add up")

// errInterrupted is the error of a run that was interrupted.
var errInterrupted = errors.New("interrupted")

// exitCode is the exit status for the outcome err of a run, interrupted by
// sig (nil if it was not): a job that did not finish, then a summary that
// does not add up, then an interrupt, then any other error.
func exitCode(err error, sig os.Signal) int {
	switch {
	case errors.Is(err, pipeline.ErrNotDone):
		return exitNotDone
	case errors.Is(err, errMismatch):
		return exitMismatch
	case sig != nil:
		return signalExit(sig)
	case err != nil:
		return exitError
	}
	return exitOK
}

// signalExit is the exit status of a process ended by sig, as a shell
// reports it: 128 + its number.
func signalExit(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return exitError
}

// onSignals returns a context cancelled at the first SIGINT or SIGTERM,
// which interrupts the run (see pipeline.Run), and a function that returns
// that signal (nil before it). It tells stderr what an interrupt does; a
// second signal ends the process at once, after telling stderr what the
// run had finished by then (as p counts it, out of total) and that what was
// not yet written is lost.
func onSignals(stderr io.Writer, p *report.Progress, total int64) (context.Context, func() os.Signal) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	var first atomic.Value
	go func() {
		sig := <-sigs
		first.Store(sig)
		fmt.Fprintf(stderr, "beamthrottle: %v: stopping the input; what is queued goes to client_throttled without a call, "+
			"calls under way finish, then the outputs are written and the summary printed (workers in this process, as with Prism; "+
			"where they run elsewhere, the job goes on: cancel or drain it on the runner). "+
			"Interrupt again to abort at once, losing what is not written yet.\n", sig)
		cancel()
		sig = <-sigs
		at := ""
		if p != nil {
			at = " At the abort, " + p.Line(total) + "."
		}
		fmt.Fprintf(stderr, "beamthrottle: %v again: aborted. Lines not yet in output files are lost: a bounded run writes its files at its end; "+
			"a subscription delivers the messages of unwritten lines again.%s\n", sig, at)
		os.Exit(signalExit(sig))
	}()
	return ctx, func() os.Signal {
		sig, _ := first.Load().(os.Signal)
		return sig
	}
}

// defineFlags defines the binary's flags on fs, which already holds Beam's,
// and its --help: the pipeline's flags by group, then Beam's.
func defineFlags(fs *flag.FlagSet) (*pipeline.Options, *bool) {
	opts := pipeline.RegisterFlags(fs)
	wantDemo := fs.Bool("demo", false, "Run the local demo: an embedded quota server on loopback, generated input, outputs under out/.")
	fs.Usage = func() { usage(fs.Output(), fs, append(slices.Clone(flaghelp.Pipeline), demoGroup)) }
	return opts, wantDemo
}

// runPipeline runs one pipeline for o, counting in p (nil for none): it
// validates and checks o, runs it, and writes its summary table to stdout.
// Besides the errors of those steps, it returns one wrapping
// pipeline.ErrNotDone if the job did not finish, errMismatch if the
// summary does not account for every input element, and errInterrupted if
// ctx was cancelled (see pipeline.Run).
func runPipeline(ctx context.Context, o pipeline.Options, p *report.Progress, stdout, stderr io.Writer) (pipeline.Summary, error) {
	if err := o.Validate(); err != nil {
		return pipeline.Summary{}, err
	}
	if err := o.Check(ctx, stderr); err != nil {
		return pipeline.Summary{}, err
	}
	if ctx.Err() != nil {
		return pipeline.Summary{}, fmt.Errorf("%w before the run started", errInterrupted)
	}
	stop := p.Report(total(o))
	sum, err := pipeline.Run(ctx, o, p)
	stop()
	switch {
	case err != nil && ctx.Err() != nil && !errors.Is(err, pipeline.ErrNotDone):
		return sum, fmt.Errorf("%w: stopped waiting for the job, which may go on on the runner: %v", errInterrupted, err)
	case err != nil && !errors.Is(err, pipeline.ErrNotDone):
		return sum, err
	}
	if dryRun() {
		fmt.Fprintln(stdout, "dry run: the Dataflow job is in the log above; nothing was submitted")
		return sum, nil
	}
	if !runners.Waits() {
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
	if o.GenerateRate > 0 && ctx.Err() != nil {
		want = sum.Generated // the interrupt stopped the generator
	}
	report.WriteSummary(stdout, sum, want)
	if err != nil {
		return sum, err
	}
	if err := accounted(sum, want); err != nil {
		return sum, err
	}
	if ctx.Err() != nil {
		return sum, fmt.Errorf("%w: %d elements went to their throttled outputs without a call (the table's \"not called\" row); "+
			"every call that was answered is in the outputs", errInterrupted, sum.Interrupted)
	}
	return sum, nil
}

// total is the number of input elements of a run of o, as its progress
// line shows it: known (> 0) for the generator alone.
func total(o pipeline.Options) int64 {
	if o.Generate > 0 {
		return int64(o.Generate)
	}
	return -1
}

// accounted returns an error wrapping errMismatch unless sum accounts for
// want input elements (-1: not known, nothing to check).
func accounted(sum pipeline.Summary, want int64) error {
	if want >= 0 && sum.Total() != want {
		return fmt.Errorf("%w: %d input elements, %d accounted for", errMismatch, want, sum.Total())
	}
	return nil
}

// demoConfig is the demo's configuration: its runs go through runPipeline,
// and its defaults yield to the flags given on the command line.
func demoConfig(stdout, stderr io.Writer) demo.Config {
	return demo.Config{
		Given: isSet,
		RunPipeline: func(ctx context.Context, o pipeline.Options, p *report.Progress) (pipeline.Summary, error) {
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
