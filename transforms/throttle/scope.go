package throttle

import (
	"sync"

	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// workerPolicies holds the policies of the transforms running in this
// process with ScopeWorker, one per transform (by throttleFn.ID): every
// DoFn instance of the transform in the process uses it, whatever bundle
// or group it works on.
var workerPolicies = &policyRegistry{m: map[string]*sharedPolicy{}}

// policyRegistry is a process-wide map of reference-counted policies.
type policyRegistry struct {
	mu sync.Mutex
	m  map[string]*sharedPolicy
}

type sharedPolicy struct {
	p    adaptive.Policy
	refs int
}

// acquire returns the policy of id, made with newPolicy if there is none yet,
// and counts a reference to it.
func (r *policyRegistry) acquire(id string, newPolicy func() (adaptive.Policy, error)) (adaptive.Policy, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sp, ok := r.m[id]
	if !ok {
		p, err := newPolicy()
		if err != nil {
			return nil, err
		}
		sp = &sharedPolicy{p: p}
		r.m[id] = sp
	}
	sp.refs++
	return sp.p, nil
}

// release drops a reference to the policy of id, and the policy with the
// last one.
func (r *policyRegistry) release(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if sp, ok := r.m[id]; ok {
		if sp.refs--; sp.refs <= 0 {
			delete(r.m, id)
		}
	}
}
