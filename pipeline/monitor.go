package pipeline

import (
	"sync"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/beamthrottle/beamthrottle/transforms/throttle"
)

func init() {
	register.DoFn1x2[Result, Line, error](&resultLineFn{})
	register.DoFn1x2[throttle.Record, Line, error](&failureLineFn{})
}

// Monitor is told, while Run lasts, how the run goes: the elements written
// per output and the outcome of each call, for a progress display such as
// cmd/beamthrottle's progress line. Its methods are called from the run's
// DoFns, concurrently, and should return at once.
//
// Only workers in this process tell it anything (Prism, the direct runner,
// a job server's LOOPBACK workers). Prism's DoFns are serialised: they
// carry the run's ID and find its Monitor in a registry while Run lasts, so
// concurrent runs in one process are told apart. On a distributed runner
// the workers are other processes and tell nothing here; the Beam counters
// in the job UI play this part.
type Monitor interface {
	// Start is called once when Run starts, before the other methods,
	// with the run's bounds on waiting (0: none): maxWait, how long an
	// element may wait after its arrival, and maxStall, how long the run
	// may go without an accepted call before what is queued goes to the
	// throttled outputs (see Options.MaxWait).
	Start(maxWait, maxStall time.Duration)
	// Written counts n elements of the named output (OutSuccess,
	// OutClientThrottled, OutServerThrottled, OutErrors, OutParked); n is
	// -1 when a reprocessing run reads again a message it dead-lettered
	// itself, whose earlier outcome was not its last. Each element is
	// counted once, in one place: a success or a failure record (whichever
	// step made it: the throttle, the payload check, the malformed
	// dead-letter check) where it is formatted as a Line, a parked message
	// where it is parked.
	Written(output string, n int64)
	// Called is told the outcome of a call that ended at t: nil if the
	// API accepted it, else its error (see clientcall.Classify).
	Called(t time.Time, err error)
}

// monitorRuns holds the Monitor of each run going on in this process, by
// the run's ID, for the DoFns of the run (see lookupMonitor).
var monitorRuns sync.Map

// attachMonitor starts m for the pipelines built with o and makes it their
// Monitor, until detach is called. A nil m leaves o alone.
func attachMonitor(m Monitor, o *Options, id string) (detach func()) {
	if m == nil {
		return func() {}
	}
	m.Start(o.maxWait(), o.maxStall())
	monitorRuns.Store(id, m)
	o.monitor = id
	return func() { monitorRuns.Delete(id) }
}

// lookupMonitor returns the Monitor registered as id, or one that is told
// nothing (a run without one, or a worker in another process).
func lookupMonitor(id string) Monitor {
	if id != "" {
		if m, ok := monitorRuns.Load(id); ok {
			return m.(Monitor)
		}
	}
	return noMonitor{}
}

// noMonitor is the Monitor of a run without one.
type noMonitor struct{}

func (noMonitor) Start(time.Duration, time.Duration) {}
func (noMonitor) Written(string, int64)              {}
func (noMonitor) Called(time.Time, error)            {}

// resultLineFn formats Success elements as Lines and counts them in the
// run's Monitor (ID Monitor).
type resultLineFn struct {
	Monitor string

	m Monitor
}

func (f *resultLineFn) Setup() { f.m = lookupMonitor(f.Monitor) }

func (f *resultLineFn) ProcessElement(r Result) (Line, error) {
	l, err := resultLine(r)
	if err == nil {
		f.m.Written(OutSuccess, 1)
	}
	return l, err
}

// failureLineFn formats failure Records as Lines and counts them in the
// run's Monitor (ID Monitor), under their outcome's output.
type failureLineFn struct {
	Monitor string

	m Monitor
}

func (f *failureLineFn) Setup() { f.m = lookupMonitor(f.Monitor) }

func (f *failureLineFn) ProcessElement(r throttle.Record) (Line, error) {
	l, err := failureLine(r)
	if err == nil {
		f.m.Written(outputOf(r.Outcome), 1)
	}
	return l, err
}
