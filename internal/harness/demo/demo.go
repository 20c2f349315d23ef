// Package demo is beamthrottle's local demo (`make run`, `beamthrottle
// --demo`): the whole loop on embedded services, a Pub/Sub emulator (pstest)
// and the quota test server on loopback, in two runs against the same quota.
//
// Run 1 sends generated input, with a few malformed lines, through the
// original tool's rule (--throttle_mode=sre, K = 2, counters reset every
// minute), which routes what it rejects: it writes all four outputs
// (success, client_throttled, server_throttled and errors), and the
// throttled payloads go to the dead-letter topic. Run 2 (--reprocess)
// drains the dead-letter subscription through the default paced mode,
// which postpones instead of rejecting, so every dead-lettered element
// succeeds. A table compares the two runs from the quota server's own
// counts, and every original element is accounted for exactly once.
package demo

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"cloud.google.com/go/pubsub/v2/pstest"

	"github.com/beamthrottle/beamthrottle/internal/report"
	"github.com/beamthrottle/beamthrottle/internal/testenv/pubsubadmin"
	"github.com/beamthrottle/beamthrottle/pipeline"
	"github.com/beamthrottle/beamthrottle/testserver"
)

// Demo settings: an offered load well above the quota.
const (
	demoElements  = 5000
	demoQuota     = 100 // requests per second, for both runs
	demoMalformed = 5   // lines of the input that are not JSON: errors without a call
	demoProject   = "beamthrottle-local"
	demoDLQ       = "beamthrottle-dlq"
	demoAgain     = "beamthrottle-dlq-again"
)

// Config is what the demo takes from its command.
type Config struct {
	// Given reports whether a flag was set on the command line: the demo's
	// own settings of --output_prefix, --groups, --batch_size and
	// --batch_interval yield to those. Nil means none was.
	Given func(flag string) bool
	// RunPipeline runs one pipeline for o, counting in p, and writes its
	// summary to Stdout: the command's own path for every run.
	RunPipeline func(ctx context.Context, o pipeline.Options, p *report.Progress) (pipeline.Summary, error)
	// Stdout receives the demo's story, Stderr the progress lines.
	Stdout, Stderr io.Writer
	// Quota is the quota server's limit in requests per second, for both
	// runs; 0 means 100.
	Quota int
}

// runStats is what the demo shows of one run: the pipeline's summary, the
// quota server's counts during the run, and how long it took.
type runStats struct {
	name    string
	in      int64 // elements the run read
	sum     pipeline.Summary
	server  testserver.Stats // the server's counts during the run
	elapsed time.Duration
}

// Run runs the demo on the base options o (the flags' values; --generate
// sets the number of generated elements): two runs through c.RunPipeline
// against the embedded services, the table comparing them, and the
// accounting check it ends with, which is an error if it fails.
func Run(ctx context.Context, o pipeline.Options, c Config) error {
	given := c.Given
	if given == nil {
		given = func(string) bool { return false }
	}
	stdout := c.Stdout
	quota := cmp.Or(c.Quota, demoQuota)
	srv, err := testserver.NewServer(testserver.Config{Quota: quota, Period: time.Second})
	if err != nil {
		return err
	}
	defer srv.Close()
	ps := pstest.NewServerWithAddress("127.0.0.1:0")
	defer ps.Close()
	for _, topic := range []string{demoDLQ, demoAgain} {
		if err := pubsubadmin.CreateTopic(ctx, demoProject, topic, ps.Addr); err != nil {
			return err
		}
		if err := pubsubadmin.CreateSubscription(ctx, demoProject, topic, topic+"-sub", ps.Addr); err != nil {
			return err
		}
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
	n := cmp.Or(o.Generate, demoElements)
	input := o.OutputPrefix + "demo-input.jsonl"
	inputs, err := writeInput(input, n, demoMalformed)
	if err != nil {
		return err
	}
	o.Generate, o.Project, o.PubSubHost, o.DeadLetterTopic = 0, demoProject, ps.Addr, demoDLQ

	// Run 1: the original tool's rule, which routes what it rejects.
	first := o
	first.Input, first.InputFormat = input, "jsonl"
	first.Mode, first.Strategy = "sre", "route"
	first.OutputPrefix = o.OutputPrefix + "run1/"
	// Run 2: the default paced mode drains the dead letters.
	second := o
	second.Mode, second.Strategy = "paced", ""
	second.Reprocess, second.Subscription, second.IdleTimeout = true, demoDLQ+"-sub", 2*time.Second
	second.FreshSubscription = true    // made by this demo: no earlier run holds its messages
	second.DeadLetterTopic = demoAgain // throttled again: kept for a later run
	second.OutputPrefix = o.OutputPrefix + "run2/"
	for _, prefix := range []string{first.OutputPrefix, second.OutputPrefix} {
		old, _ := filepath.Glob(prefix + "*.jsonl")
		for _, f := range old {
			os.Remove(f)
		}
	}

	progress := report.NewProgress(c.Stderr, 3*time.Second)
	fmt.Fprintf(stdout, "quota server %s: %d requests/s for both runs; live chart at %s/ while the demo runs\n", srv.URL, quota, srv.URL)
	stopReports := reportClientThrottles(srv.Handler, progress)
	defer stopReports()
	fmt.Fprintf(stdout, "Pub/Sub emulator %s: dead-letter topic %s\n", ps.Addr, demoDLQ)

	fmt.Fprintf(stdout, "\n== run 1: the original tool's rule (--throttle_mode=sre, K=2, counters reset every minute) routes what it rejects\n")
	fmt.Fprintf(stdout, "   %d elements (%d of them malformed JSON) from %s, %d groups x %d per %v (up to %.0f calls/s)\n",
		inputs, demoMalformed, input, o.Groups, o.BatchSize, o.BatchInterval, float64(o.Groups*o.BatchSize)/o.BatchInterval.Seconds())
	r1, err := measure(ctx, "1: sre, route", srv.Handler, func() (pipeline.Summary, error) {
		return c.RunPipeline(ctx, first, progress)
	})
	if err != nil {
		return err
	}
	r1.in = inputs
	dead := r1.sum.ClientThrottled + r1.sum.ServerThrottled
	fmt.Fprintf(stdout, "%d throttled payloads (%d client-, %d server-throttled) are on the dead-letter topic %s\n",
		dead, r1.sum.ClientThrottled, r1.sum.ServerThrottled, demoDLQ)

	fmt.Fprintf(stdout, "\n== run 2: --reprocess the dead-letter subscription with the default paced mode, same quota, until idle for %v\n", second.IdleTimeout)
	r2, err := measure(ctx, "2: paced, reprocess", srv.Handler, func() (pipeline.Summary, error) {
		return c.RunPipeline(ctx, second, progress)
	})
	if err != nil {
		return err
	}
	r2.in = r2.sum.Reprocessed

	fmt.Fprintln(stdout)
	writeComparison(stdout, quota, r1, r2)

	s1, s2 := r1.sum, r2.sum
	again := s2.ClientThrottled + s2.ServerThrottled
	total := s1.Success + s1.Errors + s2.Success + again + s2.Parked + s2.Errors
	fmt.Fprintf(stdout, "\n== every element: %d success (%d + %d), %d throttled again (on %s), %d parked, %d errors\n",
		s1.Success+s2.Success, s1.Success, s2.Success, again, demoAgain, s2.Parked, s1.Errors+s2.Errors)
	if total != inputs || s2.Reprocessed != dead {
		return fmt.Errorf("demo: %d of %d elements accounted for (%d dead-lettered, %d reprocessed)", total, inputs, dead, s2.Reprocessed)
	}
	fmt.Fprintf(stdout, "all %d original elements accounted for exactly once; outputs under %s{run1,run2}/\n", inputs, o.OutputPrefix)
	return nil
}

// measure runs one pipeline through run and returns what the demo shows of
// it: its summary, the server's counts during it, and its duration. It
// marks the run's start on the quota server's chart page.
func measure(ctx context.Context, name string, h *testserver.Handler, run func() (pipeline.Summary, error)) (runStats, error) {
	h.Mark("run " + name) // a line on the chart page where the run starts
	before := h.Stats()
	start := time.Now()
	sum, err := run()
	if err != nil {
		return runStats{}, err
	}
	after := h.Stats()
	return runStats{name: name, sum: sum, elapsed: time.Since(start), server: testserver.Stats{
		Accepted: after.Accepted - before.Accepted,
		Rejected: after.Rejected - before.Rejected,
		Errors:   after.Errors - before.Errors,
		TooLarge: after.TooLarge - before.TooLarge,
		BadCost:  after.BadCost - before.BadCost,
	}}, nil
}

// calls is the number of API requests the server answered in s.
func calls(s testserver.Stats) int64 {
	return s.Accepted + s.Rejected + s.Errors + s.TooLarge + s.BadCost + s.CostTooLarge
}

// writeComparison prints the two runs side by side: what each did with its
// elements, the calls it sent and the 429s it got (the server's counts),
// and its time against the time the quota needs for its successes.
func writeComparison(w io.Writer, quota int, runs ...runStats) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\telements\tsuccess\tdead-lettered\terrors\tcalls sent\t429s\twaste\ttook\tquota's time for the successes\t")
	for _, r := range runs {
		c := calls(r.server)
		waste := 0.0
		if c > 0 {
			waste = 100 * float64(r.server.Rejected) / float64(c)
		}
		ideal := time.Duration(float64(r.sum.Success) / float64(quota) * float64(time.Second))
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%.1f %%\t%v\t%v\t\n", r.name, r.in, r.sum.Success,
			r.sum.ClientThrottled+r.sum.ServerThrottled, r.sum.Errors, c, r.server.Rejected, waste,
			r.elapsed.Round(100*time.Millisecond), ideal.Round(100*time.Millisecond))
	}
	tw.Flush()
	fmt.Fprintf(w, "(429s and waste are the quota server's own counts; waste = 429s / calls sent; the quota's time is successes / %d per second)\n", quota)
}

// writeInput writes the demo's input to path: n generated JSON elements,
// as the built-in generator makes them, with bad malformed lines spread
// among them. It returns the number of lines written.
func writeInput(path string, n, bad int) (int64, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return 0, err
	}
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriter(f)
	every := max(n/max(bad, 1), 1)
	written := 0
	for i := range n {
		fmt.Fprintf(w, "{\"id\":%d,\"text\":\"element-%d\"}\n", i, i)
		if i%every == every/2 && written < bad {
			fmt.Fprintf(w, "{\"id\":%d,\"text\":\"malformed, the quote is never closed}\n", n+written)
			written++
		}
	}
	for ; written < bad; written++ {
		fmt.Fprintf(w, "{\"id\":%d,\"text\":\"malformed, the quote is never closed}\n", n+written)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return 0, err
	}
	if err := f.Close(); err != nil {
		return 0, err
	}
	return int64(n + bad), nil
}

// reportClientThrottles adds the pipeline's client-side throttles, as p
// counts them, to the quota server's stats every second, so its chart page
// shows them next to what the server accepted and rejected. It returns a
// stop function.
func reportClientThrottles(h *testserver.Handler, p *report.Progress) func() {
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
				// Each run sets p to zero when it starts (Progress.Start).
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
