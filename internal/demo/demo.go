// Package demo is beamthrottle's local demo (`make run`, `beamthrottle
// --demo`): the whole loop on embedded services, a Pub/Sub emulator (pstest)
// and the quota test server on loopback. A first run on generated input with
// a low quota sends throttled payloads to the dead-letter topic; the quota
// is raised; a reprocessing run drains the dead-letter subscription. Every
// original element is accounted for exactly once.
package demo

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"cloud.google.com/go/pubsub/v2/pstest"

	"github.com/beamthrottle/beamthrottle/pipeline"
	"github.com/beamthrottle/beamthrottle/pipeline/pubsubio"
	"github.com/beamthrottle/beamthrottle/testserver"
)

// Demo settings: an offered load well above the quota.
const (
	demoElements = 5000
	demoQuota    = 100 // requests per second in the first run
	demoProject  = "beamthrottle-local"
	demoDLQ      = "beamthrottle-dlq"
	demoAgain    = "beamthrottle-dlq-again"
)

// Config is what the demo takes from its command.
type Config struct {
	// Given reports whether a flag was set on the command line: the demo's
	// own settings of --output_prefix, --groups, --batch_size,
	// --batch_interval and --window yield to those. Nil means none was.
	Given func(flag string) bool
	// RunPipeline runs one pipeline for o, counting in p, and writes its
	// summary to Stdout: the command's own path for every run.
	RunPipeline func(ctx context.Context, o pipeline.Options, p *pipeline.Progress) (pipeline.Summary, error)
	// Stdout receives the demo's story, Stderr the progress lines.
	Stdout, Stderr io.Writer
}

// Run runs the demo on the base options o (the flags' values): two runs
// through c.RunPipeline against the embedded services, and the accounting
// check it ends with.
func Run(ctx context.Context, o pipeline.Options, c Config) error {
	given := c.Given
	if given == nil {
		given = func(string) bool { return false }
	}
	stdout := c.Stdout
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
	if !given("output_prefix") {
		o.OutputPrefix = "out/"
	}
	if !given("groups") {
		o.Groups = 4
	}
	if !given("batch_size") {
		o.BatchSize = 50
	}
	if !given("batch_interval") {
		o.BatchInterval = 250 * time.Millisecond
	}
	if !given("window") {
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

	progress := pipeline.NewProgress(c.Stderr, 3*time.Second)
	fmt.Fprintf(stdout, "quota server %s: %d requests/s; live chart at %s/ while the demo runs\n", srv.URL, demoQuota, srv.URL)
	stopReports := reportClientThrottles(srv.Handler, progress)
	defer stopReports()
	fmt.Fprintf(stdout, "Pub/Sub emulator %s: dead-letter topic %s\n", ps.Addr, demoDLQ)
	fmt.Fprintf(stdout, "\n== run 1: %d elements, %d groups x %d per %v (ceiling %.0f/s), %s window, throttle %s\n",
		o.Generate, o.Groups, o.BatchSize, o.BatchInterval, float64(o.Groups*o.BatchSize)/o.BatchInterval.Seconds(), o.Window, o.Mode)
	start := time.Now()
	s1, err := c.RunPipeline(ctx, first, progress)
	if err != nil {
		return err
	}
	st := srv.Handler.Stats()
	fmt.Fprintf(stdout, "took %v; the server saw %d accepted, %d rejected (429)\n", time.Since(start).Round(100*time.Millisecond), st.Accepted, st.Rejected)
	fmt.Fprintf(stdout, "%d throttled payloads are on the dead-letter topic\n", s1.ClientThrottled+s1.ServerThrottled)

	srv.Handler.SetQuota(100000, time.Second)
	fmt.Fprintf(stdout, "\n== quota raised; run 2: --reprocess the dead-letter subscription until idle for %v\n", second.IdleTimeout)
	start = time.Now()
	s2, err := c.RunPipeline(ctx, second, progress)
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

// reportClientThrottles adds the pipeline's client-side throttles, as p
// counts them, to the quota server's stats every second, so its chart page
// shows them next to what the server accepted and rejected. It returns a
// stop function.
func reportClientThrottles(h *testserver.Handler, p *pipeline.Progress) func() {
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
				// Run sets p to zero when each run starts.
				n := p.Counts()[pipeline.OutClientThrottled]
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
