// Command beamthrottle runs the beamthrottle pipeline: payloads from files,
// a Pub/Sub subscription or a generator are sent through the adaptive
// throttle to an HTTP API (or a registered caller), and every outcome is
// written to JSONL files and/or Pub/Sub topics.
//
//	beamthrottle --input='data/*.jsonl' --url=https://api.example.com/v1/x --output_prefix=out/
//	beamthrottle --demo      # local demo against an embedded quota server
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
	"path/filepath"
	"syscall"
	"time"

	"cloud.google.com/go/pubsub/v2/pstest"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/dataflow"

	"github.com/beamthrottle/beamthrottle/pipeline"
	"github.com/beamthrottle/beamthrottle/pipeline/pubsubio"
	"github.com/beamthrottle/beamthrottle/testserver"
)

func main() {
	opts, demo := defineFlags(flag.CommandLine)
	// Header values may be secrets: keep them out of the job's pipeline
	// options (shown in the Dataflow UI). They still reach the workers
	// inside the caller's configuration; prefer --header_env for secrets.
	dataflow.DontUseFlagAsPipelineOption("header")
	flag.Parse()
	beam.Init()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	if *demo {
		err = runDemo(ctx, *opts, os.Stdout, os.Stderr)
	} else {
		_, err = runPipeline(ctx, *opts, os.Stdout, os.Stderr)
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
	demo := fs.Bool("demo", false, "Run the local demo: an embedded quota server on loopback, generated input, outputs under out/.")
	fs.Usage = func() { usage(fs.Output(), fs, append(pipeline.FlagGroups(), demoGroup)) }
	return opts, demo
}

func runPipeline(ctx context.Context, o pipeline.Options, stdout, stderr io.Writer) (pipeline.Summary, error) {
	if err := o.Validate(); err != nil {
		return pipeline.Summary{}, err
	}
	if err := o.Check(ctx, stderr); err != nil {
		return pipeline.Summary{}, err
	}
	sum, err := pipeline.Run(ctx, o, stderr, 3*time.Second)
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

// Demo settings: an offered load well above the quota.
const (
	demoElements = 5000
	demoQuota    = 100 // requests per second in the first run
	demoProject  = "beamthrottle-local"
	demoDLQ      = "beamthrottle-dlq"
	demoAgain    = "beamthrottle-dlq-again"
)

// runDemo shows the whole loop on embedded defaults: a Pub/Sub emulator
// (pstest) and the quota test server on loopback; a first run on generated
// input with a low quota sends throttled payloads to the dead-letter topic;
// the quota is raised; a reprocessing run drains the dead-letter
// subscription. Every original element is accounted for exactly once.
func runDemo(ctx context.Context, o pipeline.Options, stdout, stderr io.Writer) error {
	srv, err := testserver.NewServer(testserver.Config{Quota: demoQuota, Period: time.Second})
	if err != nil {
		return err
	}
	defer srv.Close()
	ps := pstest.NewServerWithAddress("127.0.0.1:0")
	defer ps.Close()
	for _, topic := range []string{demoDLQ, demoAgain} {
		if err := pubsubio.CreateTopic(ctx, demoProject, topic, ps.Addr); err != nil {
			return err
		}
		if err := pubsubio.CreateSubscription(ctx, demoProject, topic, topic+"-sub", ps.Addr); err != nil {
			return err
		}
	}

	if o.Generate == 0 {
		o.Generate = demoElements
	}
	if o.CallerOptions.URL == "" {
		o.CallerOptions.URL = srv.Endpoint()
	}
	if !isSet("output_prefix") {
		o.OutputPrefix = "out/"
	}
	if !isSet("groups") {
		o.Groups = 4
	}
	if !isSet("batch_size") {
		o.BatchSize = 50
	}
	if !isSet("batch_interval") {
		o.BatchInterval = 250 * time.Millisecond
	}
	if !isSet("window") {
		o.Window, o.WindowSize, o.Bucket = "sliding", 10*time.Second, time.Second
	}
	o.Project, o.PubSubHost, o.DeadLetterTopic = demoProject, ps.Addr, demoDLQ
	first, second := o, o
	first.OutputPrefix = o.OutputPrefix + "run1/"
	second.OutputPrefix = o.OutputPrefix + "run2/"
	second.Generate, second.Reprocess, second.Subscription, second.IdleTimeout = 0, true, demoDLQ+"-sub", 2*time.Second
	second.DeadLetterTopic = demoAgain // throttled again: kept for a later run
	for _, prefix := range []string{first.OutputPrefix, second.OutputPrefix} {
		old, _ := filepath.Glob(prefix + "*.jsonl")
		for _, f := range old {
			os.Remove(f)
		}
	}

	fmt.Fprintf(stdout, "quota server %s: %d requests/s; live chart at %s/ while the demo runs\n", srv.URL, demoQuota, srv.URL)
	stopReports := reportClientThrottles(srv.Handler)
	defer stopReports()
	fmt.Fprintf(stdout, "Pub/Sub emulator %s: dead-letter topic %s\n", ps.Addr, demoDLQ)
	fmt.Fprintf(stdout, "\n== run 1: %d elements, %d groups x %d per %v (ceiling %.0f/s), %s window, throttle %s\n",
		o.Generate, o.Groups, o.BatchSize, o.BatchInterval, float64(o.Groups*o.BatchSize)/o.BatchInterval.Seconds(), o.Window, o.Mode)
	start := time.Now()
	s1, err := runPipeline(ctx, first, stdout, stderr)
	if err != nil {
		return err
	}
	st := srv.Handler.Stats()
	fmt.Fprintf(stdout, "took %v; the server saw %d accepted, %d rejected (429)\n", time.Since(start).Round(100*time.Millisecond), st.Accepted, st.Rejected)
	fmt.Fprintf(stdout, "%d throttled payloads are on the dead-letter topic\n", s1.ClientThrottled+s1.ServerThrottled)

	srv.Handler.SetQuota(100000, time.Second)
	fmt.Fprintf(stdout, "\n== quota raised; run 2: --reprocess the dead-letter subscription until idle for %v\n", second.IdleTimeout)
	start = time.Now()
	s2, err := runPipeline(ctx, second, stdout, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "took %v\n", time.Since(start).Round(100*time.Millisecond))

	again := s2.ClientThrottled + s2.ServerThrottled
	total := s1.Success + s1.Errors + s2.Success + again + s2.Parked + s2.Errors
	fmt.Fprintf(stdout, "\n== every element: %d success (%d + %d), %d throttled again (on %s), %d parked, %d errors\n",
		s1.Success+s2.Success, s1.Success, s2.Success, again, demoAgain, s2.Parked, s1.Errors+s2.Errors)
	if total != int64(o.Generate) || s2.Reprocessed != s1.ClientThrottled+s1.ServerThrottled {
		return fmt.Errorf("demo: %d of %d elements accounted for (reprocessed %d)", total, o.Generate, s2.Reprocessed)
	}
	fmt.Fprintf(stdout, "all %d original elements accounted for exactly once; outputs under %s{run1,run2}/\n", o.Generate, o.OutputPrefix)
	return nil
}

// reportClientThrottles adds the pipeline's client-side throttles to the
// quota server's stats every second, so its chart page shows them next to
// what the server accepted and rejected. It returns a stop function.
func reportClientThrottles(h *testserver.Handler) func() {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		var last int64
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				// Progress restarts at 0 for each run.
				n := pipeline.Progress()[pipeline.OutClientThrottled]
				if n < last {
					last = 0
				}
				h.ReportClientThrottled(n - last)
				last = n
			}
		}
	}()
	return func() { close(stop); <-done }
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
