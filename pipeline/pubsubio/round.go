package pubsubio

import (
	"fmt"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*roundRestriction)(nil)).Elem())
}

// roundRestriction is the restriction of Read's splittable DoFn: the state
// one pull round hands to the next through a self-checkpoint.
//
// The runner schedules the residual of a self-checkpoint (the next round)
// only after it has committed the bundle that returned it, together with
// that bundle's output. So when round n+1 starts, the messages round n
// emitted are durably in the pipeline, and round n+1 acknowledges them.
// This stands in for bundle finalization, which Beam Go v2.77.0 runs only
// for the first bundle of each plan instance (see the Read doc).
type roundRestriction struct {
	// Round counts the rounds before this one.
	Round int64
	// Ack holds the ack IDs of the messages the previous round emitted.
	Ack []string
	// Stop asks the round to only acknowledge Ack and end the read (set when
	// the runner truncates the restriction while draining a job).
	Stop bool
	// Done marks a restriction with no work left.
	Done bool
}

// Positions claimed from a roundTracker, in this order.
type (
	// claimRound starts the round.
	claimRound struct{}
	// claimPulled records messages the round is about to emit, for the next
	// round to acknowledge.
	claimPulled struct{ ackIDs []string }
	// claimCheckpoint says the round is over and the DoFn is about to return
	// a resuming ProcessContinuation. Only then does TrySplit(0) checkpoint.
	claimCheckpoint struct{}
	// claimEnd ends the read. TryClaim(claimEnd{}) returns false.
	claimEnd struct{}
)

// roundTracker tracks one pull round. It refuses every split except the
// DoFn's own checkpoint at the end of a round: a runner-initiated split would
// hand the runner a residual it may run at once, before this round's output
// is committed, and the residual would acknowledge messages too early. It
// is not safe for concurrent use; wrap it in an sdf.LockRTracker.
type roundTracker struct {
	rest     roundRestriction
	started  bool     // claimRound succeeded
	pending  []string // ack IDs emitted by this round
	ready    bool     // claimCheckpoint succeeded
	finished bool     // checkpointed or ended
	err      error
}

func newRoundTracker(r roundRestriction) *roundTracker {
	return &roundTracker{rest: r}
}

// TryClaim claims one of the claim* positions.
func (t *roundTracker) TryClaim(pos any) bool {
	if t.err != nil || t.finished || t.rest.Done {
		return false
	}
	switch p := pos.(type) {
	case claimRound:
		if t.started {
			t.err = fmt.Errorf("pubsubio: round %d claimed twice", t.rest.Round)
			return false
		}
		t.started = true
		return true
	case claimPulled:
		if !t.started || t.ready {
			t.err = fmt.Errorf("pubsubio: messages claimed outside round %d", t.rest.Round)
			return false
		}
		t.pending = append(t.pending, p.ackIDs...)
		return true
	case claimCheckpoint:
		if !t.started {
			t.err = fmt.Errorf("pubsubio: checkpoint claimed before round %d started", t.rest.Round)
			return false
		}
		t.ready = true
		return true
	case claimEnd:
		t.finished = true
		t.rest.Done = true
		if len(t.pending) > 0 {
			t.err = fmt.Errorf("pubsubio: read ended with %d messages of round %d not acknowledged", len(t.pending), t.rest.Round)
		}
		return false
	default:
		t.err = fmt.Errorf("pubsubio: cannot claim %T", pos)
		return false
	}
}

// GetError returns the error that made a claim fail, if any.
func (t *roundTracker) GetError() error { return t.err }

// TrySplit checkpoints at fraction 0 once the round has claimed its
// checkpoint, and refuses every other split.
func (t *roundTracker) TrySplit(fraction float64) (primary, residual any, err error) {
	if fraction > 0 || !t.ready || t.finished || t.err != nil {
		return t.rest, nil, nil
	}
	t.finished = true
	next := roundRestriction{Round: t.rest.Round + 1, Ack: t.pending}
	t.rest = roundRestriction{Round: t.rest.Round, Ack: t.rest.Ack, Done: true}
	return t.rest, next, nil
}

// GetProgress reports a round as all remaining until it is finished.
func (t *roundTracker) GetProgress() (done, remaining float64) {
	if t.finished || t.rest.Done {
		return 1, 0
	}
	return 0, 1
}

// IsDone reports whether the round has checkpointed or ended.
func (t *roundTracker) IsDone() bool {
	return t.err == nil && (t.finished || t.rest.Done)
}

// GetRestriction returns the round's restriction.
func (t *roundTracker) GetRestriction() any { return t.rest }

// IsBounded reports false: a subscription has no end.
func (t *roundTracker) IsBounded() bool { return false }
