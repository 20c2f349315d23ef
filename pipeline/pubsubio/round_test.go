package pubsubio

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRoundTrackerCheckpointCarriesAckIDs(t *testing.T) {
	rt := newRoundTracker(roundRestriction{Round: 4, Ack: []string{"old"}})
	steps := []struct {
		name string
		pos  any
		want bool
	}{
		{"start", claimRound{}, true},
		{"first pull", claimPulled{[]string{"a", "b"}}, true},
		{"second pull", claimPulled{[]string{"c"}}, true},
	}
	for _, s := range steps {
		if got := rt.TryClaim(s.pos); got != s.want {
			t.Fatalf("%s: TryClaim got %v, want %v (error %v)", s.name, got, s.want, rt.GetError())
		}
	}
	// Runner splits, and a checkpoint before the round claims it, are refused.
	for _, fraction := range []float64{0.5, 0.01, 0} {
		if _, residual, err := rt.TrySplit(fraction); residual != nil || err != nil {
			t.Errorf("TrySplit(%v) before the checkpoint: got residual %v, error %v; want none", fraction, residual, err)
		}
	}
	if rt.IsDone() {
		t.Error("IsDone before the checkpoint: got true, want false")
	}
	if !rt.TryClaim(claimCheckpoint{}) {
		t.Fatalf("claiming the checkpoint failed: %v", rt.GetError())
	}
	if _, residual, _ := rt.TrySplit(0.5); residual != nil {
		t.Errorf("TrySplit(0.5) at the checkpoint: got residual %v, want none", residual)
	}
	primary, residual, err := rt.TrySplit(0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(roundRestriction{Round: 4, Ack: []string{"old"}, Done: true}, primary); diff != "" {
		t.Errorf("primary (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(roundRestriction{Round: 5, Ack: []string{"a", "b", "c"}}, residual); diff != "" {
		t.Errorf("residual (-want +got):\n%s", diff)
	}
	if !rt.IsDone() {
		t.Error("IsDone after the checkpoint: got false, want true")
	}
	if _, again, _ := rt.TrySplit(0); again != nil {
		t.Errorf("second TrySplit(0): got residual %v, want none", again)
	}
	if rt.TryClaim(claimPulled{[]string{"late"}}) {
		t.Error("TryClaim after the checkpoint: got true, want false")
	}
}

func TestRoundTrackerEnd(t *testing.T) {
	tests := []struct {
		name     string
		claims   []any
		wantDone bool
		wantErr  bool
	}{
		{"idle round ends", []any{claimRound{}, claimEnd{}}, true, false},
		{"ending with unacknowledged messages is an error", []any{claimRound{}, claimPulled{[]string{"a"}}, claimEnd{}}, false, true},
		{"round claimed twice", []any{claimRound{}, claimRound{}}, false, true},
		{"pull before the round", []any{claimPulled{[]string{"a"}}}, false, true},
		{"checkpoint before the round", []any{claimCheckpoint{}}, false, true},
		{"unknown position", []any{int64(3)}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newRoundTracker(roundRestriction{})
			for _, c := range tt.claims {
				rt.TryClaim(c)
			}
			if got := rt.IsDone(); got != tt.wantDone {
				t.Errorf("IsDone: got %v, want %v", got, tt.wantDone)
			}
			if got := rt.GetError() != nil; got != tt.wantErr {
				t.Errorf("GetError: got %v, want an error: %v", rt.GetError(), tt.wantErr)
			}
		})
	}
}

func TestRoundTrackerDoneRestriction(t *testing.T) {
	rt := newRoundTracker(roundRestriction{Done: true})
	if rt.TryClaim(claimRound{}) {
		t.Error("TryClaim on a done restriction: got true, want false")
	}
	if !rt.IsDone() || rt.GetError() != nil {
		t.Errorf("got IsDone %v, error %v; want true, nil", rt.IsDone(), rt.GetError())
	}
	if done, remaining := rt.GetProgress(); done != 1 || remaining != 0 {
		t.Errorf("GetProgress: got %v, %v; want 1, 0", done, remaining)
	}
}
