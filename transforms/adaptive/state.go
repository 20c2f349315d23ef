package adaptive

import (
	"encoding/json"
	"fmt"
	"math"
)

// sreVersion is the version byte of the SRE policy's state encoding: the
// high nibble is the policy (1, SRE), the low one the version.
const sreVersion = 0x11

// Kinds of window in sreState.Window.
const (
	fixedKind   = 0
	slidingKind = 1
)

// sreState is an SRE policy's counts as they are saved: JSON after
// sreVersion. The field names are the encoding.
type sreState struct {
	// Started reports whether the window had seen an event; when false
	// the other fields are ignored.
	Started bool
	// Window is the kind of window: fixedKind or slidingKind.
	Window int64
	// Start is, in a fixed window, the start of the current window in Unix
	// nanoseconds.
	Start int64
	// Requests and Accepts are the counts in the current window (in a
	// sliding window, the sums of the buckets, which are restored instead).
	Requests int64
	Accepts  int64
	// BucketNanos, Head, BucketRequests and BucketAccepts are, in a
	// sliding window, the bucket width, the number of the newest bucket
	// (Unix nanoseconds divided by BucketNanos, rounded down) and the
	// per-bucket counts, bucket number b at index b mod len (a ring).
	BucketNanos    int64
	Head           int64
	BucketRequests []int64
	BucketAccepts  []int64
}

// MarshalBinary encodes the counts, opaque and versioned, for storage
// between uses (for example in Beam state between firings). Unlike the
// decision methods it allocates.
func (s *SRE) MarshalBinary() ([]byte, error) {
	b, err := json.Marshal(s.w.save())
	if err != nil {
		return nil, err
	}
	return append([]byte{sreVersion}, b...), nil
}

// UnmarshalBinary replaces the counts with those encoded by MarshalBinary,
// typically by an SRE with the same SREConfig, after which s decides
// exactly as that SRE would have (given the same random values). Empty
// data resets s to its state after NewSRE.
//
// Counts saved under a different SREConfig are adapted rather than
// refused:
//   - fixed into fixed windows keeps the window's start and the counts
//     whatever the ResetInterval; the next window boundary is
//     start + n·ResetInterval of s's SREConfig;
//   - sliding into sliding windows with the same bucket width but a
//     different number of buckets keeps the newest buckets that fit in s's
//     window and drops the rest;
//   - any other combination (a change of window kind or of bucket width)
//     resets s, since the history cannot be mapped onto the new windows;
//     throttling then restarts from zero counts.
//
// Data of another version or of a shape no SRE could have written
// (negative counts, an unknown window kind, bucket counts that do not
// match or whose sum overflows) is refused with an error wrapping
// [ErrState], and leaves s reset.
func (s *SRE) UnmarshalBinary(data []byte) error {
	s.w.reset()
	if len(data) == 0 {
		return nil
	}
	if data[0] != sreVersion {
		return fmt.Errorf("%w: version %#x, want %#x", ErrState, data[0], sreVersion)
	}
	var st sreState
	if err := json.Unmarshal(data[1:], &st); err != nil {
		return fmt.Errorf("%w: %v", ErrState, err)
	}
	if !st.Started {
		return nil
	}
	if err := st.check(); err != nil {
		return err
	}
	s.w.restore(st)
	return nil
}

// check reports whether started counts are ones an SRE could have saved.
func (s sreState) check() error {
	if s.Window != fixedKind && s.Window != slidingKind {
		return fmt.Errorf("%w: unknown Window %d", ErrState, s.Window)
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
