package adaptive

import (
	"errors"
	"fmt"
	"math"
)

// State is a snapshot of a Throttler's counters, for storage between uses,
// for example in Beam state between bundles. It has only exported plain
// fields so that it can be encoded by Beam schema coders, encoding/json and
// the like. The zero State is an unstarted Throttler.
type State struct {
	// Started reports whether the Throttler has seen an event. When false,
	// the other fields are ignored.
	Started bool
	// Window is the Window mode (FixedReset or Sliding) of the Throttler
	// the State was taken from.
	Window int64
	// Start is, in FixedReset mode, the start of the current window in Unix
	// nanoseconds.
	Start int64
	// Requests and Accepts are the counts in the current window. In Sliding
	// mode they are the sums of BucketRequests and BucketAccepts, and
	// SetState recomputes them from the buckets.
	Requests int64
	Accepts  int64
	// BucketNanos is, in Sliding mode, the bucket width in nanoseconds.
	BucketNanos int64
	// Head is, in Sliding mode, the number of the newest bucket: Unix
	// nanoseconds divided by BucketNanos, rounded down.
	Head int64
	// BucketRequests and BucketAccepts are, in Sliding mode, the per-bucket
	// counts; bucket number b is at index b mod len (a ring buffer). They are
	// nil in FixedReset mode.
	BucketRequests []int64
	BucketAccepts  []int64

	// Mode is the Mode of the Throttler the State was taken from: always
	// ModeSRE.
	Mode int64
}

// ErrInvalidState is wrapped by the errors SetState returns for a State that
// no Throttler could have produced.
var ErrInvalidState = errors.New("adaptive: invalid State")

// State returns a copy of t's counters. Unlike the decision methods it
// allocates (the Sliding buckets are copied).
func (t *Throttler) State() State {
	s := State{
		Started:  t.started,
		Window:   int64(t.cfg.Window),
		Start:    t.start,
		Requests: t.requests,
		Accepts:  t.accepts,
		Mode:     int64(t.cfg.Mode),
	}
	if t.sliding {
		s.BucketNanos = t.bucket
		s.Head = t.head
		s.BucketRequests = append([]int64(nil), t.bucketRequests...)
		s.BucketAccepts = append([]int64(nil), t.bucketAccepts...)
	}
	return s
}

// SetState replaces t's counters with s, typically a State taken from a
// Throttler with the same Config, after which t decides exactly as that
// Throttler would have (given the same random values).
//
// A State taken under a different Config shape is adapted rather than
// rejected, and SetState returns nil:
//   - a zero (unstarted) State resets t to its state after New;
//   - FixedReset into FixedReset keeps Start and the counts whatever the
//     ResetInterval; the next window boundary is Start + n·ResetInterval of
//     t's Config;
//   - Sliding into Sliding with the same bucket width but a different number
//     of buckets keeps the newest buckets that fit in t's window and drops
//     the rest;
//   - any other combination (a change of Window mode or of bucket width)
//     resets t to its state after New, since the history cannot be mapped
//     onto the new windows; throttling then restarts from zero counts;
//   - a State of another Mode (ModePaced, written by the paced Throttler
//     of earlier versions) resets t to its state after New.
//
// Empty bucket slices are accepted like nil ones (Beam's schema coder turns
// one into the other).
//
// SetState returns an error wrapping ErrInvalidState, and leaves t
// unchanged, if s is started and has negative counts, an unknown Window or
// Mode, bucket slices of different lengths, or bucket counts whose sum
// overflows.
func (t *Throttler) SetState(s State) error {
	if !s.Started {
		t.reset()
		return nil
	}
	if err := s.check(); err != nil {
		return err
	}
	if s.Mode != int64(t.cfg.Mode) {
		t.reset()
		return nil
	}
	t.setWindowState(s)
	return nil
}

// setWindowState restores the window part of a valid, started State of t's
// Mode.
func (t *Throttler) setWindowState(s State) {
	switch {
	case !t.sliding && s.Window == int64(FixedReset):
		t.reset()
		t.started = true
		t.start = s.Start
		t.requests, t.accepts = s.Requests, s.Accepts
	case t.sliding && s.Window == int64(Sliding) && s.BucketNanos == t.bucket && len(s.BucketRequests) > 0:
		t.reset()
		t.started = true
		t.head = s.Head
		oldN, newN := int64(len(s.BucketRequests)), int64(len(t.bucketRequests))
		// Copy buckets Head, Head−1, …, newest first, while they fit.
		for i := int64(0); i < min(oldN, newN); i++ {
			b := s.Head - i
			if b > s.Head { // wrapped past MinInt64: no older buckets exist
				break
			}
			from, to := floorMod(b, oldN), floorMod(b, newN)
			t.bucketRequests[to] = s.BucketRequests[from]
			t.bucketAccepts[to] = s.BucketAccepts[from]
			t.requests += s.BucketRequests[from]
			t.accepts += s.BucketAccepts[from]
		}
	default:
		t.reset()
	}
}

// check reports whether a started State is one a Throttler could produce.
func (s State) check() error {
	if s.Window != int64(FixedReset) && s.Window != int64(Sliding) {
		return fmt.Errorf("%w: unknown Window %d", ErrInvalidState, s.Window)
	}
	if s.Mode != int64(ModeSRE) && s.Mode != int64(ModePaced) {
		return fmt.Errorf("%w: unknown Mode %d", ErrInvalidState, s.Mode)
	}
	if s.Requests < 0 || s.Accepts < 0 {
		return fmt.Errorf("%w: negative counts %d requests, %d accepts", ErrInvalidState, s.Requests, s.Accepts)
	}
	if len(s.BucketRequests) != len(s.BucketAccepts) {
		return fmt.Errorf("%w: %d bucket requests but %d bucket accepts",
			ErrInvalidState, len(s.BucketRequests), len(s.BucketAccepts))
	}
	var reqs, accs int64
	for i := range s.BucketRequests {
		r, a := s.BucketRequests[i], s.BucketAccepts[i]
		if r < 0 || a < 0 {
			return fmt.Errorf("%w: negative counts in bucket %d", ErrInvalidState, i)
		}
		if reqs > math.MaxInt64-r || accs > math.MaxInt64-a {
			return fmt.Errorf("%w: bucket counts overflow", ErrInvalidState)
		}
		reqs, accs = reqs+r, accs+a
	}
	return nil
}

// reset returns t to its state after New.
func (t *Throttler) reset() {
	t.started = false
	t.start, t.head = 0, 0
	t.requests, t.accepts = 0, 0
	clear(t.bucketRequests)
	clear(t.bucketAccepts)
}
