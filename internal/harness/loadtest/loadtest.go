// Package loadtest runs the beamthrottle pipeline under load and for long
// periods against the quota test server, measuring that every element is
// accounted for and that memory and goroutines stay bounded. cmd/loadtest
// wraps it; a one-minute soak runs in make test.
package loadtest

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat"

	"github.com/beamthrottle/beamthrottle/internal/harness/procstat"
	"github.com/beamthrottle/beamthrottle/pipeline"
	"github.com/beamthrottle/beamthrottle/testserver"
)

// Sample is one memory and goroutine reading during a run.
type Sample struct {
	At         time.Duration // since the start of the run
	HeapMB     float64       // live heap (HeapAlloc right after a collection)
	Goroutines int
}

// Result is what a load or soak run measured.
type Result struct {
	Summary  pipeline.Summary
	Elapsed  time.Duration
	Samples  []Sample
	PeakRSS  float64 // MB, the process's peak resident set (Linux VmHWM)
	Server   testserver.Stats
	Warmup   time.Duration
	SlopeMB  float64                        // heap growth after warm-up, MB per minute (least squares)
	GoStart  int                            // goroutines right after warm-up
	GoEnd    int                            // goroutines at the end of the run
	Accepted struct{ Mean, StdDev float64 } // per second after warm-up
	Lines    int64                          // lines in all output files: the ground truth
}

// Accounted reports whether every generated element is in exactly one
// output: the output files hold as many lines as elements were generated.
// (The Beam counters in Summary can under-count on Prism, which may drop a
// metric update that arrives before it has looked the metric up.)
func (r Result) Accounted() bool {
	return r.Summary.Generated > 0 && r.Lines == r.Summary.Generated
}

// Leak bounds of a soak run, after its warm-up: a leak of the buffered data
// would grow the live heap by tens of MB per minute at the soak's rate.
const (
	MaxHeapSlopeMB   = 20 // MB per minute
	MaxGoroutineGrow = 50
)

// Leaks says, one line each, how the run exceeded the leak bounds; none
// means it did not. It depends on the machine keeping up with the offered
// load, so make soak checks it and make test does not.
func (r Result) Leaks() []string {
	var out []string
	if r.SlopeMB > MaxHeapSlopeMB {
		out = append(out, fmt.Sprintf("heap grows %.1f MB/min after warm-up (bound %d)", r.SlopeMB, MaxHeapSlopeMB))
	}
	if r.GoEnd > r.GoStart+MaxGoroutineGrow {
		out = append(out, fmt.Sprintf("goroutines grew from %d to %d (bound +%d)", r.GoStart, r.GoEnd, MaxGoroutineGrow))
	}
	return out
}

// options returns pipeline options for a run against srv.
func options(srv *testserver.Server, prefix string) (pipeline.Options, error) {
	fs := flag.NewFlagSet("loadtest", flag.ContinueOnError)
	o := pipeline.RegisterFlags(fs)
	if err := fs.Parse(nil); err != nil {
		return pipeline.Options{}, err
	}
	o.CallerOptions.URL = srv.Endpoint()
	o.OutputPrefix = prefix
	return *o, nil
}

// LoadConfig is a load run's settings.
type LoadConfig struct {
	Elements int     // how many elements the source emits
	Rate     float64 // elements per second from the streaming source; 0: the bounded source
	Quota    int     // calls per second the quota server accepts

	// The throttle's settings.
	Groups        int
	BatchSize     int
	BatchInterval time.Duration
	CallsInFlight int

	Prefix string // where the outputs go (TempPrefix)
}

// Load sends c.Elements elements through the pipeline with the HTTP caller
// against a quota server that accepts c.Quota calls per second, with the
// given throttle settings, sampling memory as it goes.
//
// With Rate 0 the source is pipeline.Generate, as fast as it goes: the
// runner holds whatever the throttle has not yet worked off (Prism has no
// backpressure between stages), so memory grows with the elements. With
// Rate > 0 it is pipeline.GenerateStream at Rate elements per second, with
// its periodic output files and no bound on an element's wait (every
// element is tried): memory stays flat as long as the pipeline keeps up.
func Load(ctx context.Context, c LoadConfig) (Result, error) {
	srv, err := testserver.NewServer(testserver.Config{Quota: c.Quota, Period: time.Second, MaxConns: 1024})
	if err != nil {
		return Result{}, err
	}
	defer srv.Close()
	o, err := options(srv, c.Prefix)
	if err != nil {
		return Result{}, err
	}
	o.Generate, o.Groups, o.BatchSize, o.BatchInterval, o.CallsInFlight = c.Elements, c.Groups, c.BatchSize, c.BatchInterval, c.CallsInFlight
	if c.Rate > 0 {
		o.GenerateRate, o.MaxWait = c.Rate, pipeline.NoMaxWait
	}
	return measure(ctx, o, srv, 0)
}

// SoakConfig is a soak run's settings.
type SoakConfig struct {
	Duration time.Duration // how long the source emits
	Rate     float64       // elements per second
	Quota    int           // calls per second the quota server accepts
	Warmup   time.Duration // the heap's growth is fitted after it
	Prefix   string        // where the outputs go (TempPrefix)
}

// Soak runs the streaming pipeline for c.Duration: elements generated at
// c.Rate per second against a quota of c.Quota calls per second, sampling
// memory and goroutines, and fits the heap's growth after c.Warmup.
func Soak(ctx context.Context, c SoakConfig) (Result, error) {
	srv, err := testserver.NewServer(testserver.Config{Quota: c.Quota, Period: time.Second})
	if err != nil {
		return Result{}, err
	}
	defer srv.Close()
	o, err := options(srv, c.Prefix)
	if err != nil {
		return Result{}, err
	}
	o.Generate, o.GenerateRate = int(c.Rate*c.Duration.Seconds()), c.Rate
	o.Groups, o.BatchSize, o.BatchInterval = 2, int(c.Rate), 500*time.Millisecond
	o.Mode = "paced"
	// At twice the quota the backlog grows for good: elements that wait
	// longer than this go to client_throttled.
	o.MaxWait = 10 * time.Second
	return measure(ctx, o, srv, c.Warmup)
}

func measure(ctx context.Context, o pipeline.Options, srv *testserver.Server, warmup time.Duration) (Result, error) {
	if err := o.Validate(); err != nil {
		return Result{}, err
	}
	os.RemoveAll(o.OutputPrefix)
	defer os.RemoveAll(o.OutputPrefix)
	r := Result{Warmup: warmup}
	start := time.Now()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(2 * time.Second)
		defer t.Stop()
		var ms runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				// The live heap after a collection: without it the slope
				// follows the collector's sawtooth, not growth.
				runtime.GC()
				runtime.ReadMemStats(&ms)
				r.Samples = append(r.Samples, Sample{At: time.Since(start), HeapMB: float64(ms.HeapAlloc) / (1 << 20), Goroutines: runtime.NumGoroutine()})
			}
		}
	}()
	sum, err := pipeline.Run(ctx, o, nil)
	close(stop)
	<-done
	if err != nil {
		return r, err
	}
	r.Summary, r.Elapsed, r.PeakRSS, r.Server = sum, time.Since(start), procstat.PeakRSSMB(), srv.Handler.Stats()
	if r.Lines, err = countLines(o.OutputPrefix); err != nil {
		return r, err
	}
	r.SlopeMB, r.GoStart, r.GoEnd = fit(r.Samples, warmup)
	r.Accepted.Mean, r.Accepted.StdDev = steadiness(r.Server.Series, warmup)
	return r, nil
}

// countLines counts the lines of every output file under prefix.
func countLines(prefix string) (int64, error) {
	files, err := filepath.Glob(prefix + "*.jsonl")
	if err != nil {
		return 0, err
	}
	var n int64
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return 0, err
		}
		n += int64(bytes.Count(b, []byte{'\n'}))
	}
	return n, nil
}

// fit returns the least-squares heap slope (MB/min) of the samples after
// warmup, and the goroutine counts at the first and last of them.
func fit(samples []Sample, warmup time.Duration) (slope float64, goStart, goEnd int) {
	var xs, ys []float64
	for _, s := range samples {
		if s.At < warmup {
			continue
		}
		if len(xs) == 0 {
			goStart = s.Goroutines
		}
		goEnd = s.Goroutines
		xs = append(xs, s.At.Minutes())
		ys = append(ys, s.HeapMB)
	}
	if len(xs) < 2 || floats.Min(xs) == floats.Max(xs) {
		return 0, goStart, goEnd
	}
	_, slope = stat.LinearRegression(xs, ys, nil, false)
	return slope, goStart, goEnd
}

// steadiness is the mean and standard deviation of accepted calls per
// second after the warm-up, leaving out the last (partial) second.
func steadiness(series []testserver.Second, warmup time.Duration) (mean, sd float64) {
	if len(series) < 3 {
		return 0, 0
	}
	first := series[0].T + int64(warmup.Seconds())
	var xs []float64
	for _, s := range series[:len(series)-1] {
		if s.T >= first {
			xs = append(xs, float64(s.Accepted))
		}
	}
	if len(xs) == 0 {
		return 0, 0
	}
	mean, variance := stat.PopMeanVariance(xs, nil)
	return mean, math.Sqrt(variance)
}

// Report describes a result in a few lines of markdown.
func (r Result) Report(title string) string {
	var b strings.Builder
	s := r.Summary
	fmt.Fprintf(&b, "### %s\n\n", title)
	fmt.Fprintf(&b, "- elements: %d generated; %d success, %d client-throttled, %d server-throttled, %d errors: ",
		s.Generated, s.Success, s.ClientThrottled, s.ServerThrottled, s.Errors)
	if r.Accounted() {
		fmt.Fprintf(&b, "**every element accounted for** (%d lines in the output files)\n", r.Lines)
	} else {
		fmt.Fprintf(&b, "**MISMATCH: %d lines in the output files** (%d reached a throttle buffer)\n", r.Lines, s.Buffered)
	}
	if s.Total() != s.Generated {
		fmt.Fprintf(&b, "- the Beam counters add up to %d: Prism lost some metric updates (the files are the record)\n", s.Total())
	}
	fmt.Fprintf(&b, "- elapsed %v (%.0f elements/s); server: %d accepted, %d rejected\n",
		r.Elapsed.Round(time.Second), float64(s.Generated)/r.Elapsed.Seconds(), r.Server.Accepted, r.Server.Rejected)
	maxHeap := 0.0
	for _, x := range r.Samples {
		maxHeap = max(maxHeap, x.HeapMB)
	}
	fmt.Fprintf(&b, "- memory: peak RSS %.0f MB, peak live heap %.0f MB", r.PeakRSS, maxHeap)
	if r.Warmup > 0 {
		fmt.Fprintf(&b, "; heap slope after %v warm-up %+.2f MB/min; goroutines %d → %d; accepted/s %.1f ± %.1f",
			r.Warmup, r.SlopeMB, r.GoStart, r.GoEnd, r.Accepted.Mean, r.Accepted.StdDev)
	}
	b.WriteString("\n")
	return b.String()
}

// TempPrefix is a fresh output prefix under the system temp directory.
func TempPrefix(name string) string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("beamthrottle-%s-%d", name, time.Now().UnixNano())) + "/"
}
