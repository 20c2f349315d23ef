package pipeline

import (
	"context"
	"testing"
	"time"
)

// BenchmarkPipeline runs the whole pipeline (generator, throttle with the
// echo caller, file sinks) over a small input and reports elements/s: the
// cost of the pipeline's element path around the transform.
func BenchmarkPipeline(b *testing.B) {
	const n = 20_000
	o := Options{
		Name: "bench", Caller: "echo", Generate: n, Mode: "sre", K: 1e9,
		Groups: 4, BatchSize: 5000, BatchInterval: 100 * time.Millisecond, Strategy: "route",
		MaxAttempts: 3, MaxAge: time.Minute, CallTimeout: 5 * time.Second, CallsInFlight: 1,
		MaxTotalAttempts: defaultMaxTotalAttempts, OutputPrefix: b.TempDir() + "/",
	}
	var total time.Duration
	iters := 0
	for b.Loop() {
		start := time.Now()
		sum, err := Run(context.Background(), o, newCountingMonitor())
		if err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
		iters++
		if sum.Success != n {
			b.Fatalf("got %d successes, want %d", sum.Success, n)
		}
	}
	b.ReportMetric(float64(n*iters)/total.Seconds(), "elements/s")
}
