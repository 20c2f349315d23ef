package adaptive

import (
	"math/rand/v2"
	"sync"
	"time"
)

// Limiter is a [Throttler] guarded by a mutex and driven by the wall clock
// (time.Now), for code that calls a backend from many goroutines outside
// Beam. It is safe for concurrent use. Create Limiters with [NewLimiter];
// the zero value is not usable.
//
// Times are read from the wall clock; if it steps back, requests are counted
// in the current window (see [Throttler]).
//
//	allow, _ := l.Allow()
//	if !allow {
//		return errThrottledLocally
//	}
//	err := call()
//	l.Record(classify(err))
type Limiter struct {
	mu sync.Mutex
	t  *Throttler
}

// NewLimiter returns a Limiter for cfg, or the error of cfg.Validate. Its
// random source is a math/rand/v2 PCG seeded from cfg.Seed when that is
// non-zero, and randomly seeded otherwise.
func NewLimiter(cfg Config) (*Limiter, error) {
	seed := cfg.Seed
	if seed == 0 {
		seed = rand.Uint64() | 1
	}
	rnd := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)).Float64
	t, err := New(cfg, rnd)
	if err != nil {
		return nil, err
	}
	return &Limiter{t: t}, nil
}

// Allow reports whether a request attempted now should be sent, and the
// rejection probability used; see [Throttler.Decide]. The request is counted
// either way. Follow an allowed request with Record.
func (l *Limiter) Allow() (bool, float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.t.Decide(time.Now())
}

// Record counts the outcome of a request Allow allowed; see
// [Throttler.Record].
func (l *Limiter) Record(o Outcome) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.t.Record(time.Now(), o)
}

// Probability returns the rejection probability the next Allow would use.
func (l *Limiter) Probability() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.t.Probability(time.Now())
}

// Counts returns the requests and accepts in the current window.
func (l *Limiter) Counts() (requests, accepts int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.t.Counts(time.Now())
}
