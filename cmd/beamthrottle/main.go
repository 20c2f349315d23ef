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

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/beamthrottle/beamthrottle/pipeline"
	"github.com/beamthrottle/beamthrottle/testserver"
)

func main() {
	opts := pipeline.RegisterFlags(flag.CommandLine)
	demo := flag.Bool("demo", false, "Run the local demo: an embedded quota server on loopback, generated input, outputs under out/.")
	flag.Parse()
	beam.Init()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	if *demo {
		err = runDemo(ctx, *opts, os.Stdout, os.Stderr)
	} else {
		err = runPipeline(ctx, *opts, os.Stdout, os.Stderr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "beamthrottle:", err)
		os.Exit(1)
	}
}

func runPipeline(ctx context.Context, o pipeline.Options, stdout, stderr io.Writer) error {
	if err := o.Validate(); err != nil {
		return err
	}
	sum, err := pipeline.Run(ctx, o, stderr, 3*time.Second)
	if err != nil {
		return err
	}
	want := int64(-1)
	if o.Generate > 0 {
		want = int64(o.Generate)
	}
	sum.WriteTable(stdout, want)
	return nil
}

// Demo settings: an offered load well above the quota.
const (
	demoElements = 5000
	demoQuota    = 100 // requests per second
)

// runDemo starts the quota test server on loopback and runs the pipeline
// against it on generated input, writing outputs under out/.
func runDemo(ctx context.Context, o pipeline.Options, stdout, stderr io.Writer) error {
	srv, err := testserver.NewServer(testserver.Config{Quota: demoQuota, Period: time.Second})
	if err != nil {
		return err
	}
	defer srv.Close()
	if o.Generate == 0 && o.Input == "" && o.Subscription == "" {
		o.Generate = demoElements
	}
	if o.CallerOptions.URL == "" {
		o.CallerOptions.URL = srv.Endpoint()
	}
	if o.OutputPrefix == "" {
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
	// Start from an empty output directory so the files match this run.
	for _, name := range []string{pipeline.OutSuccess, pipeline.OutClientThrottled, pipeline.OutServerThrottled, pipeline.OutErrors, pipeline.OutParked} {
		old, _ := filepath.Glob(o.OutputPrefix + name + "-*.jsonl")
		for _, f := range old {
			os.Remove(f)
		}
	}
	fmt.Fprintf(stdout, "quota server: %s (quota %d requests/s); stats at %s/stats\n", srv.URL, demoQuota, srv.URL)
	fmt.Fprintf(stdout, "throttling %d elements: %d groups x %d per %v (ceiling %.0f/s), window %s\n",
		o.Generate, o.Groups, o.BatchSize, o.BatchInterval, float64(o.Groups*o.BatchSize)/o.BatchInterval.Seconds(), o.Window)
	start := time.Now()
	if err := runPipeline(ctx, o, stdout, stderr); err != nil {
		return err
	}
	st := srv.Handler.Stats()
	fmt.Fprintf(stdout, "took %v; server saw %d accepted, %d rejected (429), %d errors\n",
		time.Since(start).Round(100*time.Millisecond), st.Accepted, st.Rejected, st.Errors)
	fmt.Fprintf(stdout, "outputs: %s{success,client_throttled,server_throttled,errors}-*.jsonl\n", o.OutputPrefix)
	return nil
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
