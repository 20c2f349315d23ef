// Package interrupt carries an operator's interrupt from the code that runs
// a pipeline (pipeline.Run, when its context is cancelled) to the DoFns that
// run in the same process: Prism's and the direct runner's workers, and a
// job server's LOOPBACK workers. The sources stop reading and the throttle
// routes what it holds without calling, so that a bounded or drained
// pipeline ends by itself and writes its outputs. Workers in other
// processes (Dataflow, a job server's docker or process workers) do not see
// it.
//
// The interrupt is process-wide: it reaches every pipeline running in the
// process while it lasts.
package interrupt

import "sync"

var (
	mu      sync.Mutex
	pending int           // interrupts under way (Begin not yet ended)
	done    chan struct{} = make(chan struct{})
)

// Begin interrupts the pipelines of this process until end is called;
// end may be called more than once. Begin is safe for concurrent use.
func Begin() (end func()) {
	mu.Lock()
	defer mu.Unlock()
	if pending++; pending == 1 {
		close(done)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			mu.Lock()
			defer mu.Unlock()
			if pending--; pending == 0 {
				done = make(chan struct{})
			}
		})
	}
}

// Is reports whether the pipelines of this process are being interrupted.
func Is() bool {
	select {
	case <-Done():
		return true
	default:
		return false
	}
}

// Done returns a channel that is closed when the pipelines of this process
// are interrupted, for waits to end early.
func Done() <-chan struct{} {
	mu.Lock()
	defer mu.Unlock()
	return done
}
