package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	jobpb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/jobmanagement_v1"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"

	"github.com/beamthrottle/beamthrottle/pipeline"
	"github.com/beamthrottle/beamthrottle/testserver"
)

// TestExitCode: the exit status says how a run ended, the most telling
// first: a job that did not finish, then a summary that does not add up,
// then an interrupt (128 + the signal's number), then any other error.
func TestExitCode(t *testing.T) {
	notDone := fmt.Errorf("%w: job j ended CANCELLED, not DONE", pipeline.ErrNotDone)
	mismatch := fmt.Errorf("%w: 3000 input elements, 7 accounted for", errMismatch)
	tests := []struct {
		name string
		err  error
		sig  os.Signal
		want int
	}{
		{"done", nil, nil, 0},
		{"refused flag", errors.New("--k: must be positive"), nil, 1},
		{"not done", notDone, nil, 4},
		{"mismatch", mismatch, nil, 3},
		{"interrupted", errInterrupted, os.Interrupt, 130},
		{"terminated", errInterrupted, syscall.SIGTERM, 143},
		{"cancelled after an interrupt", notDone, os.Interrupt, 4},
		{"mismatch after an interrupt", mismatch, syscall.SIGTERM, 3},
		{"failed after an interrupt", errors.New("pipeline: run: context canceled"), os.Interrupt, 130},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := exitCode(tc.err, tc.sig); got != tc.want {
				t.Errorf("exitCode(%v, %v) = %d, want %d", tc.err, tc.sig, got, tc.want)
			}
		})
	}
}

// TestAccounted: a summary that does not account for every input element
// is an error (exit status 3); an unknown input count checks nothing.
func TestAccounted(t *testing.T) {
	tests := []struct {
		sum  pipeline.Summary
		want int64
		ok   bool
	}{
		{pipeline.Summary{Success: 7}, 3000, false},
		{pipeline.Summary{Success: 2990, ClientThrottled: 5, ServerThrottled: 3, Errors: 2}, 3000, true},
		{pipeline.Summary{Success: 3001}, 3000, false},
		{pipeline.Summary{Parked: 4, Errors: 1}, 5, true},
		{pipeline.Summary{}, 0, true},
		{pipeline.Summary{Success: 7}, -1, true},
	}
	for _, tc := range tests {
		err := accounted(tc.sum, tc.want)
		if ok := err == nil; ok != tc.ok || (!ok && !errors.Is(err, errMismatch)) {
			t.Errorf("accounted(%+v, %d) = %v, want ok %v", tc.sum, tc.want, err, tc.ok)
		}
	}
}

// TestCancelledJob runs a pipeline on a Prism job server and cancels the
// job through the job service, as any client of it can, once calls are
// being made: the run returns ErrNotDone (exit status 4) with the summary
// of what was done printed, which does not account for the input.
func TestCancelledJob(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	jobs, err := prism.CreateJobServer(ctx, prism.Options{Port: port})
	if err != nil {
		t.Fatal(err)
	}
	for name, value := range map[string]string{
		"runner": "prism", "endpoint": fmt.Sprintf("localhost:%d", port), "environment_type": "loopback",
	} {
		old := flag.Lookup(name).Value.String()
		if err := flag.Set(name, value); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { flag.Set(name, old) })
	}
	srv, err := testserver.NewServer(testserver.Config{Quota: 20}) // 2000 elements would take 100 s
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	o := pipeline.RegisterFlags(fs)
	if err := fs.Parse([]string{"--generate=2000", "--url=" + srv.Endpoint(), "--output_prefix=" + t.TempDir() + "/"}); err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	done := make(chan error, 1)
	go func() {
		_, err := runPipeline(context.Background(), *o, nil, &stdout, &bytes.Buffer{})
		done <- err
	}()

	deadline := time.Now().Add(60 * time.Second)
	for srv.Handler.Stats().Accepted < 5 {
		select {
		case err := <-done:
			t.Fatalf("the run ended before any call was made: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d calls in 60 s", srv.Handler.Stats().Accepted)
		}
		time.Sleep(20 * time.Millisecond)
	}
	list, err := jobs.GetJobs(ctx, &jobpb.GetJobsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	cancelled := 0
	for _, j := range list.GetJobInfo() {
		if j.GetState() == jobpb.JobState_RUNNING {
			if _, err := jobs.Cancel(ctx, &jobpb.CancelJobRequest{JobId: j.GetJobId()}); err != nil {
				t.Fatal(err)
			}
			cancelled++
		}
	}
	if cancelled != 1 {
		t.Fatalf("cancelled %d running jobs, want 1: %v", cancelled, list.GetJobInfo())
	}
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the run did not return within 60 s of its job's cancellation")
	}
	if !errors.Is(err, pipeline.ErrNotDone) || !strings.Contains(err.Error(), "CANCELLED") {
		t.Errorf("got error %v, want ErrNotDone naming the state CANCELLED", err)
	}
	if got := exitCode(err, nil); got != exitNotDone {
		t.Errorf("exit status %d, want %d", got, exitNotDone)
	}
	if !strings.Contains(stdout.String(), "MISMATCH: 2000 input elements") {
		t.Errorf("stdout:\n%s\nwant the summary table saying it does not account for the 2000 elements", stdout.String())
	}
}
