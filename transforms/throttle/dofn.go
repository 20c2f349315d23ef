package throttle

import (
	"context"
	"errors"
	"math/rand/v2"
	"reflect"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/beamthrottle/beamthrottle/internal/firing"
	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
	"github.com/beamthrottle/beamthrottle/transforms/throttle/internal/cache"
)

// throttleFn is the stateful step: per group key it buffers elements in
// state and, on a processing-time timer every batch interval while the
// buffer is non-empty, decides on and calls up to BatchSize of them, oldest
// first.
//
// The buffer is a queue in map state: each incoming batch is stored under
// the next sequence number, and a firing reads only the batches it needs
// from the head, so the work and memory of a firing are proportional to the
// batch size, not to the buffer (a runner with persistent state, such as
// Dataflow, holds the backlog outside the worker's memory). MaxBuffered
// bounds the backlog: elements arriving at a full buffer are shed at once,
// client-throttled (to ClientThrottled, or dropped under Drop). The policy's
// state lives in value state, so it survives bundle boundaries and moves of
// the key between workers. Batches are coded by encodeBatch.
// Each firing works through the head of the queue as the group's policy
// decides (see firing).
type throttleFn struct {
	Queue       state.Map[int64, batch]  // the buffer: batches by sequence number, oldest first
	Flying      state.Map[string, batch] // the elements of calls under way when a firing ended, by call ID
	Meta        state.Value[queueMeta]
	PolicyState state.Value[[]byte] // the policy's state (adaptive.Policy.MarshalBinary)
	Flush       timers.ProcessingTime

	settings // the configuration, as the options set it

	Caller     userValue
	Classifier userValue
	ReqType    beam.EncodedType
	RespType   beam.EncodedType
	ID         string // the transform's, for its worker-scope policy and permit pool
	Messages   bool   // the input is Message: Success is Reply

	caller     reflect.Value
	invoker    *invoker
	classifier clientcall.Classifier
	policy     adaptive.Policy
	shared     bool          // policy is the worker's (ScopeWorker), not saved per group
	pool       *permitPool   // the worker's permits of the shared quota; nil without one
	progress   *progressMark // the transform's last progress on this worker (MaxStall)
	board      *callBoard    // the transform's calls on this worker, under way or answered
	deadlines  deadlines     // the contexts of this instance's calls
	cache      cache.Store   // the worker's response cache (WithCache); nil without one
	src        *rand.PCG
	rng        *rand.Rand
}

// settings are the DoFn's configuration, serialised with the DoFn to the
// workers: what the options set, in place (config embeds them, so the
// DoFn takes them whole).
type settings struct {
	// Settings are the settings of the firings' core that the options set
	// (batch size and interval, calls in flight, items and bytes per call,
	// max wait and stall, the Retry strategy's bounds): coreConfig passes
	// them on with the mode and the strategy, the rest the transform's.
	firing.Settings
	Mode        Mode
	Adaptive    adaptive.SREConfig
	Strategy    Strategy
	CallTimeout time.Duration
	Seed        uint64
	HasSeed     bool
	MaxBuffered int
	Groups      int
	Scope       Scope
	Quota       QuotaConfig
	Cache       bool          // WithCache
	CacheAddr   string        // its Redis address; empty for the in-process LRU
	CacheTTL    time.Duration // how long a response is kept; 0 until evicted
}

func (f *throttleFn) Setup(ctx context.Context) error {
	v, err := f.Caller.instantiate()
	if err != nil {
		return err
	}
	if s, ok := v.Interface().(clientcall.Setupper); ok {
		if err := s.Setup(ctx); err != nil {
			return err
		}
	}
	f.caller = v
	f.invoker = newInvoker(v, f.ReqType.T, f.RespType.T, f.batching())
	if f.Classifier.set() {
		cv, err := f.Classifier.instantiate()
		if err != nil {
			return err
		}
		c, ok := cv.Interface().(clientcall.Classifier)
		if !ok {
			return errors.New("throttle: classifier does not implement clientcall.Classifier")
		}
		f.classifier = c
	}
	f.src = rand.NewPCG(rand.Uint64(), rand.Uint64())
	f.rng = rand.New(f.src)
	// The quota before the policy, whose pacer keeps to the rate of a
	// quota of time slots.
	if f.Quota.enabled() {
		if f.pool, err = acquirePool(f.ID, f.Quota); err != nil {
			return err
		}
		// The job's start checked the key's settings (QuotaConfig.Check); a
		// job started since with another rate is the one refused, so this
		// one only says so, and refreshes the record while it matches.
		if _, done := ratesChecked.LoadOrStore(f.ID, true); !done {
			if err := f.Quota.check(ctx, f.pool.q); err != nil {
				log.Warnf(ctx, "throttle: shared quota: %v", err)
			}
		}
	}
	if f.Scope == ScopeWorker {
		if f.policy, err = workerPolicies.acquire(f.ID, f.newWorkerPolicy); err != nil {
			return err
		}
		f.shared = true
	} else if f.policy, err = firing.NewPolicy(f.policySettings(f.rng.Float64, max(f.Groups, 1))); err != nil {
		return err
	}
	if f.progress, err = workerProgress.acquire(f.ID, newProgressMark); err != nil {
		return err
	}
	if f.board, err = workerCalls.acquire(f.ID, newCallBoard); err != nil {
		return err
	}
	if cfg := f.coreConfig(); cfg.SizeCalls {
		if err := f.board.useCeiling(cfg.CallsInFlight); err != nil {
			return err
		}
	}
	if f.Cache {
		if f.cache, err = acquireCache(f.CacheAddr); err != nil {
			return err
		}
	}
	log.Infof(ctx, "throttle: caller %v ready: batches of %d every %v, mode %v, strategy %s",
		f.Caller.Type.T, f.BatchSize, f.BatchInterval, f.Mode, f.Strategy)
	return nil
}

// policySettings are the settings of a policy for the mode: the pacer
// (for groups pacers sharing the backend), or the SRE throttle drawing
// from rnd (which postpones by a batch interval under the Postpone
// strategy instead of rejecting).
func (f *throttleFn) policySettings(rnd func() float64, groups int) firing.PolicySettings {
	s := firing.PolicySettings{Paced: f.Mode == ModePaced, Groups: groups, SRE: f.Adaptive, Rand: rnd}
	if s.Paced {
		s.Rate = f.knownRate() * slotRateMargin
	}
	if f.Strategy == Postpone {
		s.Postpone = f.BatchInterval
	}
	return s
}

// knownRate returns the rate of the transform's quota, in cost units per
// second, if it hands out time slots (its pool is acquired); else 0.
func (f *throttleFn) knownRate() float64 {
	if f.pool == nil || f.pool.r == nil {
		return 0
	}
	return f.pool.rate
}

// newWorkerPolicy makes the worker's policy (ScopeWorker): one pacer for
// all the groups of the worker, or an SRE throttle with a random source of
// its own (used only under the policy's lock).
func (f *throttleFn) newWorkerPolicy() (adaptive.Policy, error) {
	seed := rand.Uint64()
	if f.HasSeed {
		seed = f.Seed
	}
	s := f.policySettings(rand.New(rand.NewPCG(seed, 0x5ca1ab1e)).Float64, 1)
	s.Shared = true
	return firing.NewPolicy(s)
}

func (f *throttleFn) Teardown(ctx context.Context) error {
	if f.shared {
		workerPolicies.release(f.ID)
		f.shared = false
	}
	if f.pool != nil {
		releasePool(f.ID)
		f.pool = nil
	}
	if f.progress != nil {
		workerProgress.release(f.ID)
		f.progress = nil
	}
	if f.board != nil {
		if b, last := workerCalls.release(f.ID); last {
			b.cancel()
		}
		f.board = nil
	}
	if f.cache != nil {
		releaseCache(f.CacheAddr)
		f.cache = nil
	}
	if f.caller.IsValid() {
		if t, ok := f.caller.Interface().(clientcall.Teardowner); ok {
			return t.Teardown(ctx)
		}
	}
	return nil
}

func (f *throttleFn) classify(err error) clientcall.Class {
	if f.classifier != nil {
		return f.classifier.Classify(err)
	}
	return clientcall.Classify(err)
}
