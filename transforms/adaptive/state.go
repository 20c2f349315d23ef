package adaptive

import (
	"encoding/json"
	"fmt"
	"math"
)

// stateVersion is the version byte of a Throttler's state encoding, the
// SRE policy's: the high nibble is the policy (1, SRE), the low one the
// version.
const stateVersion = 0x11

// throttlerState is a Throttler's counters as they are saved: JSON after
// stateVersion. The field names are the encoding; they are those of the
// exported State of earlier versions, whose SRE state (version 0x11, with
// the paced Throttler's fields always zero) is read back unchanged.
type throttlerState struct {
	// Started reports whether the Throttler had seen an event; when false
	// the other fields are ignored.
	Started bool
	// Window is the Window (FixedReset or Sliding) of the Throttler.
	Window int64
	// Start is, in FixedReset, the start of the current window in Unix
	// nanoseconds.
	Start int64
	// Requests and Accepts are the counts in the current window (in
	// Sliding, the sums of the buckets, which are restored instead).
	Requests int64
	Accepts  int64
	// BucketNanos, Head, BucketRequests and BucketAccepts are, in Sliding,
	// the bucket width, the number of the newest bucket (Unix nanoseconds
	// divided by BucketNanos, rounded down) and the per-bucket counts,
	// bucket number b at index b mod len (a ring).
	BucketNanos    int64
	Head           int64
	BucketRequests []int64
	BucketAccepts  []int64
	// Mode is the Mode of the Throttler: ModeSRE (0), or ModePaced in
	// state of the paced Throttler of earlier versions, which is not
	// restored.
	Mode int64
}

// MarshalBinary encodes t's counters, opaque and versioned, for storage
// between uses (for example in Beam state between firings). Unlike the
// decision methods it allocates.
func (t *Throttler) MarshalBinary() ([]byte, error) {
	s := throttlerState{
		Started:  t.started,
		Window:   int64(t.cfg.Window),
		Start:    t.start,
		Requests: t.requests,
		Accepts:  t.accepts,
	}
	if t.sliding {
		s.BucketNanos = t.bucket
		s.Head = t.head
		s.BucketRequests = t.bucketRequests
		s.BucketAccepts = t.bucketAccepts
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	return append([]byte{stateVersion}, b...), nil
}

// UnmarshalBinary replaces t's counters with those encoded by
// MarshalBinary, typically by a Throttler with the same Config, after
// which t decides exactly as that Throttler would have (given the same
// random values). Empty data resets t to its state after New.
//
// Counters saved under a different Config shape are adapted rather than
// refused:
//   - FixedReset into FixedReset keeps the window's start and the counts
//     whatever the ResetInterval; the next window boundary is
//     start + n·ResetInterval of t's Config;
//   - Sliding into Sliding with the same bucket width but a different
//     number of buckets keeps the newest buckets that fit in t's window and
//     drops the rest;
//   - any other combination (a change of Window or of bucket width) resets
//     t to its state after New, since the history cannot be mapped onto
//     the new windows; throttling then restarts from zero counts.
//
// Data of another version or of a shape no Throttler could have written
// (negative counts, an unknown Window or Mode, bucket counts that do not
// match or whose sum overflows) is refused with an error wrapping
// [ErrState], and leaves t reset; so is the state of the paced Throttler
// of earlier versions.
func (t *Throttler) UnmarshalBinary(data []byte) error {
	t.reset()
	if len(data) == 0 {
		return nil
	}
	var s throttlerState
	if data[0] != stateVersion {
		return fmt.Errorf("%w: version %#x, want %#x", ErrState, data[0], stateVersion)
	}
	if err := json.Unmarshal(data[1:], &s); err != nil {
		return fmt.Errorf("%w: %v", ErrState, err)
	}
	if !s.Started {
		return nil
	}
	if err := s.check(); err != nil {
		return err
	}
	t.setWindowState(s)
	return nil
}

// setWindowState restores valid, started counters into t, which is reset,
// when they fit t's windows; otherwise t stays reset.
func (t *Throttler) setWindowState(s throttlerState) {
	switch {
	case !t.sliding && s.Window == int64(FixedReset):
		t.started = true
		t.start = s.Start
		t.requests, t.accepts = s.Requests, s.Accepts
	case t.sliding && s.Window == int64(Sliding) && s.BucketNanos == t.bucket && len(s.BucketRequests) > 0:
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
	}
}

// check reports whether started counters are ones a Throttler could have
// saved.
func (s throttlerState) check() error {
	if s.Window != int64(FixedReset) && s.Window != int64(Sliding) {
		return fmt.Errorf("%w: unknown Window %d", ErrState, s.Window)
	}
	if s.Mode != int64(ModeSRE) {
		return fmt.Errorf("%w: Mode %d, want ModeSRE", ErrState, s.Mode)
	}
	if s.Requests < 0 || s.Accepts < 0 {
		return fmt.Errorf("%w: negative counts %d requests, %d accepts", ErrState, s.Requests, s.Accepts)
	}
	if len(s.BucketRequests) != len(s.BucketAccepts) {
		return fmt.Errorf("%w: %d bucket requests but %d bucket accepts",
			ErrState, len(s.BucketRequests), len(s.BucketAccepts))
	}
	var reqs, accs int64
	for i := range s.BucketRequests {
		r, a := s.BucketRequests[i], s.BucketAccepts[i]
		if r < 0 || a < 0 {
			return fmt.Errorf("%w: negative counts in bucket %d", ErrState, i)
		}
		if reqs > math.MaxInt64-r || accs > math.MaxInt64-a {
			return fmt.Errorf("%w: bucket counts overflow", ErrState)
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
