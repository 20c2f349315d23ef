package throttle

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// workerPolicies holds the policies of the transforms running in this
// process with ScopeWorker, one per transform (by throttleFn.ID): every
// DoFn instance of the transform in the process uses it, whatever bundle
// or group it works on.
var workerPolicies = &registry[adaptive.Policy]{m: map[string]*shared[adaptive.Policy]{}}

// workerProgress holds, per transform running in this process (by
// throttleFn.ID) and whatever its scope, when its groups here last made
// progress: the bound of WithMaxStall counts from it.
var workerProgress = &registry[*progressMark]{m: map[string]*shared[*progressMark]{}}

// registry is a process-wide map of reference-counted values.
type registry[T any] struct {
	mu sync.Mutex
	m  map[string]*shared[T]
}

type shared[T any] struct {
	v    T
	refs int
}

// acquire returns the value of id, made with newValue if there is none yet,
// and counts a reference to it.
func (r *registry[T]) acquire(id string, newValue func() (T, error)) (T, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sp, ok := r.m[id]
	if !ok {
		v, err := newValue()
		if err != nil {
			return v, err
		}
		sp = &shared[T]{v: v}
		r.m[id] = sp
	}
	sp.refs++
	return sp.v, nil
}

// release drops a reference to the value of id, and the value with the
// last one, which it then returns (last is true) for its caller to close.
func (r *registry[T]) release(id string) (v T, last bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if sp, ok := r.m[id]; ok {
		if sp.refs--; sp.refs <= 0 {
			delete(r.m, id)
			return sp.v, true
		}
	}
	return v, false
}

// progressMark is when a transform's groups on this worker last made
// progress, by the throttle's clock: when a call of theirs was last
// accepted, or, before that, when one of them first fired here (so a
// restarted worker gives what it inherits a full MaxStall). Its zero value
// and a nil *progressMark know of none. It is safe for concurrent use.
type progressMark struct{ ns atomic.Int64 }

func newProgressMark() (*progressMark, error) { return new(progressMark), nil }

// started notes that a group fired at now, if nothing was noted before.
func (m *progressMark) started(now time.Time) {
	if m != nil {
		m.ns.CompareAndSwap(0, now.UnixNano())
	}
}

// progressed notes a call accepted at now.
func (m *progressMark) progressed(now time.Time) {
	if m == nil {
		return
	}
	n := now.UnixNano()
	for {
		old := m.ns.Load()
		if old >= n || m.ns.CompareAndSwap(old, n) {
			return
		}
	}
}

// last returns the time noted last, in unix nanos (0 if none).
func (m *progressMark) last() int64 {
	if m == nil {
		return 0
	}
	return m.ns.Load()
}
