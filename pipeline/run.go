package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	jobpb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/jobmanagement_v1"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	beamrunners "github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/util/grpcx"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"
	"github.com/google/uuid"

	"github.com/beamthrottle/beamthrottle/internal/interrupt"
	"github.com/beamthrottle/beamthrottle/internal/prismsplit"
	"github.com/beamthrottle/beamthrottle/internal/runners"
)

// ErrNotDone is the error Run returns, with the run's Summary, when the job
// ended in another state than done: cancelled through its job service,
// drained, updated. Its outputs and its Summary hold only what was done
// before it stopped.
var ErrNotDone = errors.New("pipeline: the job did not finish")

// Run builds the pipeline for o and runs it on the runner chosen by Beam's
// --runner flag (default prism, whose dynamic splitting it turns off: see
// throttle.Adaptive). While it runs, m (nil for none) is told the elements
// written per output and the outcome of each call (see Monitor); it returns
// the run's Summary. Where the runner returns once the job is submitted
// (Dataflow with --async, or writing a Flex Template), the Summary is empty.
//
// Cancelling ctx interrupts the run. Where the runner's workers run in this
// process (Prism, the direct runner, a job server's LOOPBACK workers), the
// sources stop reading (a subscription's messages pulled but not yet
// emitted are given back), the throttle makes no new call and routes every
// element it holds or receives to client_throttled (server_throttled if its
// last answer was 429), calls under way finish, and the job ends by itself:
// every output is written and Run returns the Summary, whose Interrupted
// counts the elements routed without a call. The interrupt reaches every
// pipeline of the process. Where the workers run elsewhere, Run stops
// waiting for the job and returns ctx's error; the job goes on on the
// runner.
//
// With a portable runner (Prism, a job server), Run asks the job service
// how the job ended and returns ErrNotDone with the Summary unless it is
// done. The Dataflow runner does not say: its cancelled or drained jobs
// return no error.
func Run(ctx context.Context, o Options, m Monitor) (Summary, error) {
	detach := attachMonitor(m, &o, uuid.NewString())
	defer detach()
	pl, s := beam.NewPipelineWithRoot()
	if _, err := Build(s, o); err != nil {
		return Summary{}, err
	}
	prismsplit.Avoid()
	runCtx := ctx
	if workersHere() {
		runCtx = context.WithoutCancel(ctx)
		defer interruptOn(ctx)()
	}
	res, err := beamx.RunWithMetrics(runCtx, pl)
	if err != nil {
		return Summary{}, fmt.Errorf("pipeline: run: %w", err)
	}
	if !runners.Waits() {
		return Summary{}, nil
	}
	sum := SummaryFrom(res)
	if state, ok, err := jobState(context.WithoutCancel(ctx), res); err != nil {
		return sum, fmt.Errorf("pipeline: asking the job service how job %s ended: %w", res.JobID(), err)
	} else if ok && state != jobpb.JobState_DONE {
		return sum, fmt.Errorf("%w: job %s ended %v, not DONE", ErrNotDone, res.JobID(), state)
	}
	return sum, nil
}

// interruptOn interrupts the pipelines of this process (package
// internal/interrupt) once ctx is done, until the returned stop is called.
func interruptOn(ctx context.Context) (stop func()) {
	done := make(chan struct{})
	ended := make(chan func(), 1)
	go func() {
		select {
		case <-ctx.Done():
			ended <- interrupt.Begin()
		case <-done:
			ended <- func() {}
		}
	}()
	return func() {
		close(done)
		(<-ended)()
	}
}

// workersHere reports whether the workers of the runner Beam's flags select
// run in this process.
func workersHere() bool {
	r, ok := runners.Lookup(*beamrunners.Runner)
	if !ok {
		return false
	}
	env := startEnv{Runner: *beamrunners.Runner, Endpoint: *jobopts.Endpoint, EnvironmentType: *jobopts.EnvironmentType}
	return env.workers(r) == runners.WorkersHere
}

// jobStateTimeout bounds the question to the job service.
const jobStateTimeout = 30 * time.Second

// jobState asks the job service of a portable runner (Prism, a job server
// at --endpoint) for the state in which res's job ended; ok is false where
// there is no job service to ask (Dataflow, the direct runner).
func jobState(ctx context.Context, res beam.PipelineResult) (state jobpb.JobState_Enum, ok bool, err error) {
	r, _ := runners.Lookup(*beamrunners.Runner)
	switch r.Name {
	case "prism", "universal", "flink", "spark":
	default:
		return 0, false, nil
	}
	// Prism embedded in this process sets --endpoint to its job service.
	endpoint := *jobopts.Endpoint
	if res == nil || endpoint == "" || res.JobID() == "" {
		return 0, false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, jobStateTimeout)
	defer cancel()
	conn, err := grpcx.Dial(ctx, endpoint, jobStateTimeout)
	if err != nil {
		return 0, false, err
	}
	defer conn.Close()
	ev, err := jobpb.NewJobServiceClient(conn).GetState(ctx, &jobpb.GetJobStateRequest{JobId: res.JobID()})
	if err != nil {
		return 0, false, err
	}
	return ev.GetState(), true, nil
}
